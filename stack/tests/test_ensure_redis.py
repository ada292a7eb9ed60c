"""``scripts/ensure-redis`` (``make test``, ``make run``): a Redis that answers
at REDIS_URL's port, even one that asks for a password or speaks TLS, is left
alone and no second server is started on that port; with nothing there it
starts one where the URL (with its password, and its TLS) points."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from conftest import ROOT, wait_for

SCRIPT = ROOT / "scripts" / "ensure-redis"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ensure_redis(url: str, pidfile: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "REDIS_URL": url, "REDIS_PIDFILE": str(pidfile)}
    return subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)


def _answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


@pytest.fixture
def redis_with_password(tmp_path) -> Iterator[int]:
    """A redis-server on a port of its own that wants the password ``s3cret``."""
    port = _free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--requirepass", "s3cret", "--save", ""],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _answers(f"redis://:s3cret@127.0.0.1:{port}/0"), timeout=10, message="redis-server")
        yield port
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("scheme", ["redis", "rediss"])
def test_a_redis_that_wants_a_password_or_tls_is_left_alone(redis_with_password, tmp_path, scheme):
    port, pidfile = redis_with_password, tmp_path / "redis.pid"
    result = _ensure_redis(f"{scheme}://user:s3cret@127.0.0.1:{port}/0", pidfile)

    assert result.returncode == 0, result.stderr
    assert f"127.0.0.1:{port}" in result.stderr and "not starting another" in result.stderr
    if scheme == "redis":
        assert "NOAUTH" in result.stderr
    assert not pidfile.exists()  # nothing started
    assert _answers(f"redis://:s3cret@127.0.0.1:{port}/0")


def test_with_nothing_listening_it_starts_a_server_a_url_with_a_password_reaches(tmp_path):
    url, pidfile = f"redis://:s%40cret@127.0.0.1:{_free_port()}/0", tmp_path / "redis.pid"
    result = _ensure_redis(url, pidfile)
    try:
        assert result.returncode == 0, result.stderr
        assert pidfile.exists()
        assert _answers(url)
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


def test_with_nothing_listening_it_refuses_to_start_a_plain_server_for_a_tls_url(tmp_path):
    result = _ensure_redis(f"rediss://127.0.0.1:{_free_port()}/0", tmp_path / "redis.pid")
    assert result.returncode == 1
    assert "starts only a plain redis:// server, not rediss://" in result.stderr
    assert not (tmp_path / "redis.pid").exists()


def test_something_else_on_the_port_is_reported_and_no_redis_is_started(tmp_path):
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        result = _ensure_redis(f"redis://127.0.0.1:{port}/0", tmp_path / "redis.pid")
    assert result.returncode == 1
    assert f"Something listens at 127.0.0.1:{port} but does not answer PING as Redis does" in result.stderr
    assert not (tmp_path / "redis.pid").exists()


def test_run_stack_stops_with_a_clear_error_at_a_redis_it_cannot_use(redis_with_password, tmp_path, settings):
    """Left alone is not usable: without the password the workers would only
    crash over and over, so the stack does not start."""
    from django.core.management import CommandError

    from stack.management.commands.run_stack import redis_ensure

    settings.REDIS_URL = f"redis://127.0.0.1:{redis_with_password}/0"
    with pytest.raises(CommandError, match="check the password or TLS"), redis_ensure(pidfile=tmp_path / "redis.pid"):
        pass
