"""``manage.py run_golden [PATH ...] [--live] [--runs K] [--filter TAG] [--json] [--trace-dir DIR] [--derive]``

Runs the golden scenarios through the real product in a throwaway database.
Replay (default) scripts the model from each scenario's ``model`` blocks, and
derives the answer from the conversation where a turn has none; --derive
ignores every ``model`` block (how far the derivation alone gets); --live
asks Claude and needs ANTHROPIC_API_KEY. Exits non-zero when a scenario fails.
The summary counts the turns where gating refused a tool the scenario lists
as acceptable.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evals.report import report_build, report_text
from evals.runner import scenario_run
from evals.scenarios import ScenarioError, scenarios_load
from evals.throwaway import throwaway_database


class Command(BaseCommand):
    help = "Run the golden scenarios (replay, or --live against Claude)."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="*", type=Path, help="scenario files or folders (default evals/scenarios)")
        parser.add_argument("--live", action="store_true", help="ask Claude instead of replaying the script")
        parser.add_argument("--runs", type=int, default=1, help="runs per scenario (pass^K needs all K to pass)")
        parser.add_argument("--filter", help="only scenarios with this tag")
        parser.add_argument("--json", action="store_true", help="print the whole report as one JSON object")
        parser.add_argument("--trace-dir", type=Path, help="write one JSON trace per scenario run here")
        parser.add_argument(
            "--derive", action="store_true", help="replay: ignore the model blocks and derive every answer"
        )

    def handle(self, *args, paths, live, runs, filter, trace_dir, derive=False, **options):
        if live and not settings.ANTHROPIC_API_KEY:
            raise CommandError("--live needs ANTHROPIC_API_KEY; without it only replay mode can run")
        if runs < 1:
            raise CommandError("--runs must be at least 1")
        try:
            scenarios = scenarios_load(paths or None, tag=filter)
        except ScenarioError as exc:
            raise CommandError(f"bad scenario: {exc}") from exc
        if not scenarios:
            raise CommandError("no scenario matched")
        if derive:
            scenarios = [
                dataclasses.replace(s, turns=[dataclasses.replace(t, model=[]) for t in s.turns]) for s in scenarios
            ]
        results = {}
        logging.disable(logging.WARNING)  # the product logs every message and alert; errors still show
        with throwaway_database():
            for n, scenario in enumerate(scenarios, 1):
                results[scenario.id] = [scenario_run(scenario, live=live) for _ in range(runs)]
                if not options["json"]:
                    passed = sum(r.passed for r in results[scenario.id])
                    self.stderr.write(f"[{n}/{len(scenarios)}] {scenario.id}: {passed}/{runs} passed")
        if trace_dir:
            trace_dir.mkdir(parents=True, exist_ok=True)
            for scenario_id, scenario_runs in results.items():
                for k, result in enumerate(scenario_runs, 1):
                    path = trace_dir / f"{scenario_id}.run{k}.json"
                    path.write_text(json.dumps(result.as_dict(), indent=2, ensure_ascii=False, default=str))
        report = report_build(scenarios, results, live=live)
        self.stdout.write(json.dumps(report, indent=2, default=str) if options["json"] else report_text(report))
        if report["passed"] != report["scenarios"]:
            raise CommandError(f"{report['scenarios'] - report['passed']} scenario(s) failed")
