"""Turning scenario results into the numbers the ADR asks for: pass^K per
scenario, tool-choice accuracy, wrong and missed issue creations, emergency
false positives and negatives, escalations, latency, tokens, cache share and
cost per conversation."""

from __future__ import annotations

import statistics
from collections import defaultdict

from evals.runner import ScenarioResult
from evals.scenarios import Scenario


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


def report_build(scenarios: list[Scenario], runs: dict[str, list[ScenarioResult]], *, live: bool) -> dict:
    by_id = {s.id: s for s in scenarios}
    counts = defaultdict(int)
    latencies, costs = [], []
    tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    per_scenario = []
    for scenario_id, results in runs.items():
        scenario = by_id[scenario_id]
        for result in results:
            cost = 0.0
            for turn, spec in zip(result.turns, scenario.turns, strict=False):
                e = spec.expect
                trace = turn.trace
                if e.tools:
                    counts["tool_turns"] += 1
                    counts["tool_correct"] += turn.final in e.tools
                created = "create_issue" in turn.chosen
                if created and ("create_issue" in e.not_tools or (e.tools and "create_issue" not in e.tools)):
                    counts["wrong_issue_creations"] += 1
                if "create_issue" in e.tools and turn.final != "create_issue":
                    counts["missed_issue_creations"] += 1
                raised = bool(trace["emergency"]) and any(a["status"] != "dismissed" for a in trace["emergency"])
                if e.emergency is False and raised:
                    counts["emergency_false_positives"] += 1
                if e.emergency is True and not raised:
                    counts["emergency_false_negatives"] += 1
                counts["escalations"] += turn.final in ("escalate", "fallback")
                if trace["latency_ms"].get("total") is not None:
                    latencies.append(trace["latency_ms"]["total"])
                for key in tokens:
                    tokens[key] += trace["tokens"].get(key, 0) or 0
                cost += trace["cost_usd"]
            costs.append(cost)
        per_scenario.append(
            {
                "id": scenario_id,
                "title": scenario.title,
                "runs": len(results),
                "passed_runs": sum(r.passed for r in results),
                "pass_all": all(r.passed for r in results),
                "failures": [f for r in results for f in r.failures],
                "seconds": round(sum(r.seconds for r in results), 2),
            }
        )
    per_scenario.sort(key=lambda s: (s["pass_all"], s["id"]))
    prompt_tokens = tokens["input"] + tokens["cache_read"] + tokens["cache_write"]
    return {
        "mode": "live" if live else "replay",
        "scenarios": len(per_scenario),
        "passed": sum(s["pass_all"] for s in per_scenario),
        "pass_k": sum(s["pass_all"] for s in per_scenario) / max(1, len(per_scenario)),
        "tool_choice_accuracy": counts["tool_correct"] / max(1, counts["tool_turns"]),
        "wrong_issue_creations": counts["wrong_issue_creations"],
        "missed_issue_creations": counts["missed_issue_creations"],
        "emergency_false_positives": counts["emergency_false_positives"],
        "emergency_false_negatives": counts["emergency_false_negatives"],
        "escalations": counts["escalations"],
        "turn_latency_ms": {"p50": _percentile(latencies, 0.5), "p95": _percentile(latencies, 0.95)},
        "tokens": tokens,
        "cache_read_share": tokens["cache_read"] / prompt_tokens if prompt_tokens else 0.0,
        "cost_per_conversation_usd": statistics.mean(costs) if costs else 0.0,
        "results": per_scenario,
    }


def report_text(report: dict) -> str:
    lines = []
    failing = [s for s in report["results"] if not s["pass_all"]]
    for s in failing:
        lines.append(f"FAIL {s['id']} ({s['passed_runs']}/{s['runs']} runs passed): {s['title']}")
        lines += [f"     - {f}" for f in dict.fromkeys(s["failures"])]
    for s in report["results"]:
        if s["pass_all"]:
            lines.append(f"ok   {s['id']} ({s['runs']} run{'s' if s['runs'] > 1 else ''}, {s['seconds']}s)")
    latency = report["turn_latency_ms"]
    lines += [
        "",
        f"{report['mode']}: {report['passed']}/{report['scenarios']} scenarios pass in every run "
        f"(pass^k {report['pass_k']:.2f}); tool-choice accuracy {report['tool_choice_accuracy']:.2%}",
        f"wrong issue creations {report['wrong_issue_creations']}, missed {report['missed_issue_creations']}; "
        f"emergency false positives {report['emergency_false_positives']}, false negatives "
        f"{report['emergency_false_negatives']}; escalations {report['escalations']}",
        f"turn latency p50 {latency['p50']} ms, p95 {latency['p95']} ms; tokens {report['tokens']}; "
        f"cache-read share {report['cache_read_share']:.1%}; cost per conversation "
        f"${report['cost_per_conversation_usd']:.4f}",
    ]
    return "\n".join(lines)
