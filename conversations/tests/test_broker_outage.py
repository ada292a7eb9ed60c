"""A Celery worker outlives its broker: Redis stops while a task is running,
comes back, and the same worker process takes the next task.

With celery 5.7.0 the worker died here with ``Unrecoverable error:
AttributeError("'NoneType' object has no attribute 'hostname'")``: on the lost
connection the consumer first collects the connection (which drops the
transport's client) and then closes it, and closing a Redis channel that still
holds an unacknowledged task tries to build a new Redis pool from that missing
client. celery 5.6.3 only collects, so the worker reconnects (requirements/base.txt).

The worker runs the pool ``run_stack`` and compose use (prefork); the task in
flight is what makes the difference, so the test holds one open across the
outage."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from config.celery import QUEUES, app
from conftest import ROOT, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

HOLD_TASK = "tests.broker_outage.hold"


@app.task(name=HOLD_TASK, acks_late=True)
def hold(started: str, release: str, done: str) -> None:
    """Say it started, wait (at most a minute) for ``release``, say it is done."""
    Path(started).touch()
    deadline = time.monotonic() + 60
    while not Path(release).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    Path(done).touch()


def _why(log: Path) -> str:
    lines = log.read_text().splitlines()
    fatal = [line for line in lines if "CRITICAL" in line]
    return "the worker died: " + ("; ".join(fatal) or "\n".join(lines[-40:]))


def _publish(*paths: Path) -> None:
    app._pool = None  # the pooled connections went with the old Redis
    app.amqp._producer_pool = None
    hold.apply_async(tuple(str(p) for p in paths), queue="default")


def test_worker_survives_redis_stopping_with_a_task_in_flight_and_takes_the_next_task(
    private_redis, celery_worker_factory, tmp_path
):
    # The factory's environment (test database, key prefix), with this test's
    # module imported by the worker so it knows the holding task.
    env = celery_worker_factory(REDIS_URL=private_redis.url).env
    log = tmp_path / "prefork-worker.log"
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--include",
            __name__,
            "--concurrency=2",  # as run_stack's worker: a free slot keeps it polling Redis
            "-Q",
            ",".join(QUEUES),
            "-n",
            f"outage-{tmp_path.name}@%h",
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(lambda: "ready." in log.read_text() or worker.poll() is not None, timeout=60, message="worker ready")
        assert worker.poll() is None, log.read_text()

        first = [tmp_path / f"first-{name}" for name in ("started", "release", "done")]
        _publish(*first)
        wait_for(first[0].exists, timeout=30, message="the first task to start")

        private_redis.stop()
        wait_for(
            lambda: "Connection to broker lost" in log.read_text() or worker.poll() is not None,
            timeout=30,
            message="the worker to notice Redis is gone",
        )
        time.sleep(3)  # the reconnect attempts while Redis stays away
        first[1].touch()  # the task finishes while Redis is away
        wait_for(first[2].exists, timeout=30, message="the first task to finish")
        assert worker.poll() is None, _why(log)

        private_redis.start()
        second = [tmp_path / f"second-{name}" for name in ("started", "release", "done")]
        second[1].touch()
        _publish(*second)
        wait_for(
            lambda: second[2].exists() or worker.poll() is not None,
            timeout=60,
            message="the worker to take a task queued after Redis came back",
        )
        assert worker.poll() is None, _why(log)
        assert second[2].exists()
        assert "Unrecoverable error" not in log.read_text()
    finally:
        if worker.poll() is None:
            worker.terminate()
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                worker.kill()
