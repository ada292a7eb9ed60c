"""Tier 1: every golden scenario in replay mode, on every commit. A failing
scenario fails CI with what was expected and what happened."""

import pytest

from evals.runner import scenario_run
from evals.scenarios import scenarios_load

SCENARIOS = scenarios_load()


def test_there_are_enough_scenarios():
    assert len(SCENARIOS) >= 40


@pytest.mark.django_db
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_golden_scenario(scenario):
    result = scenario_run(scenario)
    assert result.passed, f"{scenario.id} ({scenario.path.name}):\n  " + "\n  ".join(result.failures)
