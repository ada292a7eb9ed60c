"""Fixtures every app's tests share: a real Celery worker on real Redis."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real ``celery worker`` subprocess on every queue, using the test
    database and this run's own Redis key prefix. Tests that use it must commit
    their data (``transactional_db``) so the worker can see it."""
    test_db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": (
            f"postgresql://{test_db['USER']}:@/{test_db['NAME']}?host={test_db['HOST']}"
            if not test_db.get("PORT")
            else f"postgresql://{test_db['USER']}:{test_db['PASSWORD']}@{test_db['HOST']}:{test_db['PORT']}/{test_db['NAME']}"
        ),
        "CELERY_KEY_PREFIX": os.environ["CELERY_KEY_PREFIX"],
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp_path / "worker.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "-Q",
            "inbound,llm,outbound,embeddings,default",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"test-{os.getpid()}@%h",
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while "ready." not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"Celery worker did not start:\n{log.read_text()}")
        time.sleep(0.2)
    proc.log_path = log
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def wait_for(predicate, *, timeout: float = 30.0, interval: float = 0.1, message: str = "condition"):
    """Poll ``predicate`` until it is truthy; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {message}")


@pytest.fixture
def anthropic_stub(settings, monkeypatch):
    """The real anthropic SDK pointed at a local stub server. Also exported in the
    environment, so a Celery worker started after this fixture uses it too."""
    from orchestration.llm import _client
    from orchestration.testing.anthropic_stub import AnthropicStubServer

    with AnthropicStubServer() as server:
        values = {
            "LLM_BACKEND": "anthropic",
            "ANTHROPIC_API_KEY": "test-key-not-real",
            "ANTHROPIC_BASE_URL": server.url,
            "LLM_TIMEOUT_SECONDS": "2",
            "LLM_MAX_RETRIES": "2",
        }
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        settings.LLM_BACKEND = "anthropic"
        settings.ANTHROPIC_API_KEY = values["ANTHROPIC_API_KEY"]
        settings.ANTHROPIC_BASE_URL = server.url
        settings.LLM_TIMEOUT_SECONDS = 2.0
        settings.LLM_MAX_RETRIES = 2
        _client.cache_clear()
        yield server.stub
        _client.cache_clear()


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def pytest_sessionfinish(session, exitstatus):
    # Drop this run's Celery keys from the shared Redis.
    try:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL)
        prefix = os.environ.get("CELERY_KEY_PREFIX", "")
        if prefix:
            for key in client.scan_iter(f"{prefix}*"):
                client.delete(key)
    except Exception:  # noqa: S110 - best-effort cleanup of a shared Redis
        pass
