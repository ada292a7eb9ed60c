"""The production compose file stays in step with the Celery queue table."""

import pytest
import yaml
from django.conf import settings

from config.celery import QUEUES
from config.tests.test_settings import django_setup

COMPOSE = settings.BASE_DIR / "docker" / "compose.yaml"


@pytest.fixture(scope="module")
def services() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def workers(services: dict) -> dict[str, list[str]]:
    return {
        name: s["command"]
        for name, s in services.items()
        if s.get("command", [])[:4] == ["celery", "-A", "config", "worker"]
    }


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_every_queue_has_a_worker_and_each_queue_one_worker_service(services):
    consumed = [q for command in workers(services).values() for q in option(command, "-Q").split(",")]
    assert sorted(consumed) == sorted(QUEUES)


def test_workers_take_one_task_at_a_time(services):
    for name, command in workers(services).items():
        assert option(command, "--prefetch-multiplier") == "1", name


def test_every_long_running_service_has_a_health_check(services):
    one_shot = {name for name, s in services.items() if s.get("restart") == "no"}
    assert one_shot == {"migrate"}
    assert [name for name, s in services.items() if name not in one_shot and "healthcheck" not in s] == []


def test_exactly_one_beat(services):
    assert [name for name, s in services.items() if s.get("command", [])[3:4] == ["beat"]] == ["beat"]


def test_task_time_limits_must_stay_below_the_visibility_timeout():
    result = django_setup(CELERY_TASK_TIME_LIMIT="900")
    assert result.returncode != 0
    assert "CELERY_VISIBILITY_TIMEOUT" in result.stderr
