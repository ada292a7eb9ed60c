"""CPU time per request, by process group: what the server pays for each
request, whatever the load generator manages to send.

A throughput ratio on one small machine also measures the load generator:
when it is the bottleneck (a Python client with threads saturates one core
near 900 requests a second here), the faster side's figure is the client's
limit. CPU seconds per request do not depend on that.

    groups = cpu_groups(gunicorn_pid=..., data_dir=...)
    with cpu_used(groups) as used:
        ...  # the phase
    used  # {"gunicorn": seconds, "PostgreSQL": ..., "Redis": ..., "load generator": ...}
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

Group = Callable[[], list[psutil.Process]]


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def cpu_groups(*, gunicorn_pid: int, data_dir: Path) -> dict[str, Group]:
    """gunicorn with its workers; the benchmark's own embedded PostgreSQL (its
    postmaster names the data folder) with its backends; every redis-server
    on the machine; and this process, the load generator."""
    gunicorn = psutil.Process(gunicorn_pid)
    me = psutil.Process()

    def postgres() -> list[psutil.Process]:
        for proc in psutil.process_iter(["name", "cmdline"]):
            if proc.info["name"] == "postgres" and str(data_dir) in " ".join(proc.info["cmdline"] or []):
                return _tree(proc)
        return []

    def redis() -> list[psutil.Process]:
        return [proc for proc in psutil.process_iter(["name"]) if proc.info["name"] == "redis-server"]

    return {
        "gunicorn": lambda: _tree(gunicorn),
        "PostgreSQL": postgres,
        "Redis": redis,
        "load generator": lambda: [me],
    }


def _seconds(groups: dict[str, Group]) -> dict[tuple[str, int], float]:
    seen = {}
    for name, members in groups.items():
        for proc in members():
            try:
                times = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            seen[(name, proc.pid)] = times.user + times.system
    return seen


@contextmanager
def cpu_used(groups: dict[str, Group]) -> Iterator[dict[str, float]]:
    """CPU seconds each group used inside the block (a process that started
    inside it counts from zero; one that ended inside it is not counted)."""
    used: dict[str, float] = dict.fromkeys(groups, 0.0)
    before = _seconds(groups)
    yield used
    for (name, pid), seconds in _seconds(groups).items():
        used[name] += seconds - before.get((name, pid), 0.0)


def cpu_line(used: dict[str, float], requests: int, wall: float) -> str:
    """ "CPU ms per request: gunicorn 0.52, PostgreSQL 0.00, ... (load generator 95% of a core)"."""
    parts = ", ".join(f"{name} {seconds / requests * 1000:.2f}" for name, seconds in used.items())
    return f"CPU ms per request: {parts} (load generator {used['load generator'] / wall:.0%} of a core)"


def server_ms(used: dict[str, float], requests: int) -> float:
    """The server's CPU milliseconds per request: everything but the load generator."""
    return sum(seconds for name, seconds in used.items() if name != "load generator") / requests * 1000
