"""Turning scenario results into the numbers the ADR asks for: pass^K per
scenario, tool-choice accuracy, wrong and missed issue creations, emergency
false positives and negatives, escalations, latency, tokens, cache share and
cost per conversation."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, fields

from evals.runner import ScenarioResult, TurnResult, tool_accepted
from evals.scenarios import Expect, Scenario

TOKEN_KINDS = ("input", "output", "cache_read", "cache_write")


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


def _emergency_expected(expect: Expect, alerts: list[dict]) -> bool | None:
    """Should this turn end as an emergency? Where the model check ran (live
    mode) and the scenario says what it should decide, that decision is the
    answer; otherwise the keyword expectation (replay never runs the check)."""
    validated = any(a["status"] != "pending" for a in alerts)
    if validated and expect.emergency_verdict:
        return expect.emergency_verdict == "confirmed"
    return expect.emergency


@dataclass
class Tally:
    """The counts behind every figure of the report, for one scenario or for
    the whole run: the overall tally is the sum of the scenarios' tallies, so
    both levels report the same figures computed the same way."""

    scenarios: int = 0
    passed: int = 0  # scenarios whose every run passed (pass^K)
    runs: int = 0
    passed_runs: int = 0
    tool_turns: int = 0
    tool_correct: int = 0
    wrong_issue_creations: int = 0
    missed_issue_creations: int = 0
    emergency_false_positives: int = 0
    emergency_false_negatives: int = 0
    escalations: int = 0
    # Turns where gating refused a call the scenario lists as acceptable (the
    # scenario's model block, the derived answer, or live Claude chose it).
    expected_calls_refused: int = 0
    turn_latencies_ms: list[float] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KINDS, 0))
    conversation_costs_usd: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @classmethod
    def of_scenario(cls, scenario: Scenario, results: list[ScenarioResult]) -> Tally:
        tally = cls(scenarios=1, passed=int(all(r.passed for r in results)), runs=len(results))
        for result in results:
            tally.passed_runs += result.passed
            tally.seconds += result.seconds
            cost = 0.0
            for turn, spec in zip(result.turns, scenario.turns, strict=False):
                tally._turn_add(turn, spec.expect)
                cost += turn.trace["cost_usd"]
            tally.conversation_costs_usd.append(cost)
        return tally

    def _turn_add(self, turn: TurnResult, e: Expect) -> None:
        trace = turn.trace
        accepted = tool_accepted(e, turn.chosen, turn.final)
        if e.tools:
            self.tool_turns += 1
            self.tool_correct += accepted
        created = "create_issue" in turn.chosen
        if created and ("create_issue" in e.not_tools or (e.tools and "create_issue" not in e.tools)):
            self.wrong_issue_creations += 1
        # Missed: the scenario wanted an issue and the model ended with nothing it accepts.
        if "create_issue" in e.tools and not created and not accepted:
            self.missed_issue_creations += 1
        expected = _emergency_expected(e, trace["emergency"])
        raised = any(a["status"] != "dismissed" for a in trace["emergency"])
        self.emergency_false_positives += expected is False and raised
        self.emergency_false_negatives += expected is True and not raised
        self.escalations += turn.final in ("escalate", "fallback")
        self.expected_calls_refused += bool(turn.refused)
        if trace["latency_ms"].get("total") is not None:
            self.turn_latencies_ms.append(trace["latency_ms"]["total"])
        for kind in TOKEN_KINDS:
            self.tokens[kind] += trace["tokens"].get(kind, 0) or 0

    def __iadd__(self, other: Tally) -> Tally:
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, dict):
                for key in mine:
                    mine[key] += theirs[key]
            elif isinstance(mine, list):
                mine.extend(theirs)
            else:
                setattr(self, f.name, mine + theirs)
        return self

    def figures(self) -> dict:
        prompt_tokens = self.tokens["input"] + self.tokens["cache_read"] + self.tokens["cache_write"]
        costs = self.conversation_costs_usd
        return {
            "scenarios": self.scenarios,
            "passed": self.passed,
            "pass_k": self.passed / self.scenarios if self.scenarios else None,
            "runs": self.runs,
            "passed_runs": self.passed_runs,
            "tool_choice_accuracy": self.tool_correct / self.tool_turns if self.tool_turns else None,
            "tool_turns": self.tool_turns,
            "wrong_issue_creations": self.wrong_issue_creations,
            "missed_issue_creations": self.missed_issue_creations,
            "emergency_false_positives": self.emergency_false_positives,
            "emergency_false_negatives": self.emergency_false_negatives,
            "escalations": self.escalations,
            "expected_calls_refused": self.expected_calls_refused,
            "turn_latency_ms": {
                "p50": _percentile(self.turn_latencies_ms, 0.5),
                "p95": _percentile(self.turn_latencies_ms, 0.95),
            },
            "tokens": dict(self.tokens),
            "cache_read_share": self.tokens["cache_read"] / prompt_tokens if prompt_tokens else 0.0,
            "cost_per_conversation_usd": statistics.mean(costs) if costs else 0.0,
            "seconds": round(self.seconds, 2),
        }


def report_build(scenarios: list[Scenario], runs: dict[str, list[ScenarioResult]], *, live: bool) -> dict:
    """The report: the figures overall, then per scenario (failing first)."""
    by_id = {s.id: s for s in scenarios}
    overall = Tally()
    per_scenario = []
    for scenario_id, results in runs.items():
        scenario = by_id[scenario_id]
        tally = Tally.of_scenario(scenario, results)
        overall += tally
        per_scenario.append(
            {
                "id": scenario_id,
                "title": scenario.title,
                "pass_all": bool(tally.passed),
                "failures": [f for r in results for f in r.failures],
                "refused": [{"turn": t.index + 1, **call} for r in results for t in r.turns for call in t.refused],
                **tally.figures(),
            }
        )
    per_scenario.sort(key=lambda s: (s["pass_all"], s["id"]))
    return {"mode": "live" if live else "replay", **overall.figures(), "results": per_scenario}


def _figures_text(fig: dict) -> list[str]:
    """The figures of one tally (a scenario's or the whole run's) as text."""
    accuracy = fig["tool_choice_accuracy"]
    latency, tokens = fig["turn_latency_ms"], fig["tokens"]
    ms = {k: "n/a" if v is None else f"{v:.0f} ms" for k, v in latency.items()}
    return [
        f"tool choice {'n/a' if accuracy is None else f'{accuracy:.0%}'} of {fig['tool_turns']} turn(s); "
        f"issue creations wrong {fig['wrong_issue_creations']}, missed {fig['missed_issue_creations']}; "
        f"emergency false positives {fig['emergency_false_positives']}, "
        f"false negatives {fig['emergency_false_negatives']}; escalations {fig['escalations']}; "
        f"turns where gating refused an expected tool {fig['expected_calls_refused']}",
        f"turn latency p50 {ms['p50']}, p95 {ms['p95']}; tokens in {tokens['input']}, out {tokens['output']}, "
        f"cache read {tokens['cache_read']}, cache write {tokens['cache_write']} "
        f"(cache-read share {fig['cache_read_share']:.1%}); cost per conversation "
        f"${fig['cost_per_conversation_usd']:.4f}",
    ]


def report_text(report: dict) -> str:
    """Failures first, each saying what was expected and what happened; in
    live mode every scenario's figures; the overall figures last."""
    live = report["mode"] == "live"
    lines = []
    for s in report["results"]:
        if s["pass_all"]:
            lines.append(f"ok   {s['id']} ({s['runs']} run{'s' if s['runs'] > 1 else ''}, {s['seconds']}s)")
        else:
            lines.append(f"FAIL {s['id']} ({s['passed_runs']}/{s['runs']} runs passed): {s['title']}")
            lines += [f"     - {f}" for f in dict.fromkeys(s["failures"])]
        refused = dict.fromkeys(f"turn {r['turn']}: {r['tool']} refused: {r['rejection']}" for r in s["refused"])
        lines += [f"     ! {line}" for line in refused]
        if live:
            lines += [f"       {line}" for line in _figures_text(s)]
    pass_k = report["pass_k"]
    lines += [
        "",
        f"{report['mode']}: {report['passed']}/{report['scenarios']} scenarios pass in every run "
        f"(pass^k {'n/a' if pass_k is None else f'{pass_k:.2f}'}, {report['passed_runs']}/{report['runs']} runs), "
        f"{report['seconds']}s",
        *_figures_text(report),
    ]
    return "\n".join(lines)
