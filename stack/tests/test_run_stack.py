"""``make run``: run_stack as a real process on the test database. It prints
where the webhook and the admin are, and Ctrl-C, ``kill`` (SIGTERM) or a
closed terminal (SIGHUP) leaves nothing running: no child process, and no
redis-server it started itself (one that was already running is left alone);
its children die with it even when it is killed outright. It runs from any
directory. ``make demo`` keeps the services' logs out of the transcript, and
both listen where ``BIND`` / ``--bind`` say."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import redis
import requests

from conftest import ROOT, database_url_for_children, wait_for
from emergencies.defaults import defaults_seed
from emergencies.models import EmergencyRule, SafetyMessage
from issues.models import Issue
from stack.management.commands.run_stack import bind_follow, redis_ensure


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _descendants(pid: int) -> set[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


@pytest.mark.django_db
def test_redis_ensure_leaves_a_redis_that_was_already_running_alone(settings, tmp_path):
    assert _answers(settings.REDIS_URL)  # the shared test Redis
    with redis_ensure(pidfile=tmp_path / "redis.pid") as started:
        assert started is None
    assert _answers(settings.REDIS_URL)
    assert not (tmp_path / "redis.pid").exists()


@pytest.mark.django_db
def test_redis_ensure_stops_the_redis_server_it_started(settings, tmp_path):
    settings.REDIS_URL = f"redis://127.0.0.1:{_free_port()}/0"
    assert not _answers(settings.REDIS_URL)
    with redis_ensure(pidfile=tmp_path / "redis.pid") as started:
        assert started and _running(started)
        assert _answers(settings.REDIS_URL)
    assert not _running(started)
    assert not _answers(settings.REDIS_URL)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("stop", ["ctrl-c", "SIGTERM", "SIGHUP"])
def test_run_stack_prints_where_to_go_and_stopping_it_stops_every_process_it_started(tmp_path, stop):
    """Ctrl-C signals the terminal's whole process group; ``kill``, an IDE's
    stop button (SIGTERM) and a closed terminal (SIGHUP) signal run_stack
    alone. It is started from another directory, as
    ``cd /tmp && /path/to/.venv/bin/python /path/to/manage.py run_stack``."""
    web, redis_url = f"127.0.0.1:{_free_port()}", f"redis://127.0.0.1:{_free_port()}/0"
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for_children(),  # the test database, not the developer's .data
        "DATA_DIR": str(tmp_path / "data"),
        "REDIS_URL": redis_url,  # nothing answers there: run_stack starts its own
        "PUBLIC_BASE_URL": "https://repairs.example.com",
        "LLM_BACKEND": "scripted",
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp_path / "run_stack.log"
    command = [sys.executable, str(ROOT / "manage.py"), "run_stack", "--no-seed", "--bind", web, "--web-workers", "1"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    stack = subprocess.Popen(  # its own process group, which Ctrl-C signals as a whole
        command, cwd=elsewhere, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        wait_for(lambda: "Ctrl-C stops everything" in log.read_text(), timeout=90, message=f"the banner\n{log}")
        wait_for(lambda: _healthy(web), timeout=60, message=f"gunicorn on {web}")
        wait_for(lambda: " ready." in log.read_text(), timeout=60, message="the Celery worker")
        children = _descendants(stack.pid)
        redis_pid = int((tmp_path / "data" / "redis.pid").read_text())
        assert _answers(redis_url) and _running(redis_pid)
        assert redis_pid not in children  # daemonized: Ctrl-C does not reach it, run_stack must stop it
        if stop == "ctrl-c":
            os.killpg(stack.pid, signal.SIGINT)
        else:
            os.kill(stack.pid, getattr(signal, stop))
        assert stack.wait(timeout=60) == 0  # a clean exit: its atexit hooks ran too
    finally:
        if stack.poll() is None:
            os.killpg(stack.pid, signal.SIGKILL)
    output = log.read_text()

    assert f"Started redis-server (pid {redis_pid})" in output
    assert "Webhook for Twilio:  https://repairs.example.com/webhooks/twilio/whatsapp" in output
    assert f"Admin:               http://{web}/admin/  (--no-seed: your own login)" in output
    assert "model backend: scripted" in output
    assert "Stopping..." in output
    assert len(children) >= 3  # gunicorn, the Celery worker and beat (and their own children)
    assert [pid for pid in children if _running(pid)] == []
    assert not _running(redis_pid) and not _answers(redis_url)


def test_a_service_runs_in_the_project_and_dies_with_run_stack_even_when_it_is_killed_outright(tmp_path):
    """SIGKILL (or the OOM killer) runs no handler: the kernel stops the children."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time, django\n"
            "django.setup()\n"
            "from stack.management.commands.run_stack import service_start\n"
            "child = service_start([sys.executable, '-c', 'import os, time; print(os.getcwd(), flush=True); "
            "time.sleep(120)'], env=dict(os.environ), log=None)\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(120)",
        ],
        cwd=tmp_path,  # not the project
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    lines = {parent.stdout.readline().strip() for _ in range(2)}
    child = int(next(line for line in lines if line.isdigit()))
    try:
        assert lines == {str(child), str(ROOT)}  # the child's working directory is the project
        assert _running(child)
        parent.kill()
        parent.wait()
        wait_for(lambda: not _running(child), timeout=10, message="the child to die with its parent")
    finally:
        parent.kill()
        parent.wait()
        if _running(child):
            os.kill(child, signal.SIGKILL)


def test_a_bad_web_concurrency_is_named_even_for_help():
    result = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "run_stack", "--help"],
        env={**os.environ, "WEB_CONCURRENCY": "two"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "WEB_CONCURRENCY must be a whole number, not 'two'" in result.stdout + result.stderr
    assert "invalid literal" not in result.stdout + result.stderr


def test_bind_makes_the_run_listen_there_and_the_public_url_follow_unless_it_is_set(settings):
    settings.BIND = "127.0.0.1:8000"
    env: dict[str, str] = {}
    bind_follow("0.0.0.0:8123", env)
    assert env == {"BIND": "0.0.0.0:8123"}  # the children's settings see the same address
    assert settings.PUBLIC_BASE_URL == "http://127.0.0.1:8123"  # the banner's, and what the demo signs over

    settings.PUBLIC_BASE_URL = "https://abc.ngrok.app"
    env = {"PUBLIC_BASE_URL": "https://abc.ngrok.app"}
    bind_follow("127.0.0.1:8124", env)
    assert settings.PUBLIC_BASE_URL == "https://abc.ngrok.app"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_make_demo_shows_banner_transcript_and_issues_and_sends_the_service_logs_to_a_file(tmp_path):
    """``run_stack --demo`` on a ``--bind`` of its own with no PUBLIC_BASE_URL:
    the banner names that address, the demo's signed requests pass the
    server's check, and gunicorn's and Celery's lines go to
    ``$DATA_DIR/stack.log``, not between the transcript's."""
    defaults_seed(EmergencyRule, SafetyMessage)  # transactional tests flush the migration's rules
    web, data = f"127.0.0.1:{_free_port()}", tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in {"BIND", "PUBLIC_BASE_URL"}}
    env.update(
        DATABASE_URL=database_url_for_children(),
        DATA_DIR=str(data),
        LLM_BACKEND="scripted",
        WHATSAPP_SENDER="console",
        INBOUND_COALESCE_SECONDS="0",
        PYTHONUNBUFFERED="1",
    )
    command = [sys.executable, "manage.py", "run_stack", "--demo", "--exit-after-demo", "--bind", web]
    command += ["--web-workers", "1"]
    stack = subprocess.Popen(  # its own process group, so a timeout stops the services too
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        terminal, _ = stack.communicate(timeout=240)
    finally:
        if stack.poll() is None:
            os.killpg(stack.pid, signal.SIGKILL)
    assert stack.returncode == 0, terminal

    log = data / "stack.log"
    assert f"Webhook for Twilio:  http://{web}/webhooks/twilio/whatsapp" in terminal
    assert f"Service logs:        {log}" in terminal
    assert "=== Amira (Flat 1) reports a leak (+447700900123) ===" in terminal
    assert "  assistant < If you smell gas" in terminal  # from the emergency worker
    assert "  assistant < " in terminal and "no reply within" not in terminal
    assert "=== Issues as the landlord sees them" in terminal
    assert Issue.objects.count() == 2
    # Nothing of the services' own output in the terminal: it is all in the file.
    services = log.read_text()
    services_lines = ["Booting worker", "emergency@", " ready.", "POST /webhooks/twilio/whatsapp"]
    services_lines += ["chunks"]  # loading the demo's documents
    for line in services_lines:
        assert line in services, line
        assert line not in terminal, line


def _healthy(bind: str) -> bool:
    try:
        return requests.get(f"http://{bind}/healthz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def test_services_that_ignore_the_stop_signal_are_killed_after_the_grace_period():
    from stack.management.commands.run_stack import services_stop

    stubborn = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(120)"
    )
    children = [subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE) for _ in range(3)]
    polite = subprocess.Popen(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(120)"], stdout=subprocess.PIPE
    )
    for child in [*children, polite]:
        assert child.stdout.readline() == b"up\n"  # running, its handler set
    services_stop([*children, polite], grace=0.5)
    assert [child.returncode for child in children] == [-signal.SIGKILL] * 3
    assert polite.returncode == -signal.SIGTERM
