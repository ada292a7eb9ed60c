"""run_stack starts a stopped child again, and gives up on one that keeps stopping."""

from __future__ import annotations

import subprocess
import sys

from stack.management.commands import run_stack
from stack.management.commands.run_stack import RESTART_LIMIT, Command


def test_a_child_that_stops_is_started_again_and_one_that_keeps_stopping_ends_the_stack(monkeypatch):
    monkeypatch.setattr(run_stack.time, "sleep", lambda seconds: None)
    starts: dict[str, int] = {"worker": 0, "web": 0}
    commands = {
        # The worker dies every time; web runs until the test ends.
        "worker": [sys.executable, "-c", "raise SystemExit(1)"],
        "web": [sys.executable, "-c", "import time; time.sleep(60)"],
    }

    def start(name: str) -> subprocess.Popen:
        starts[name] += 1
        child = subprocess.Popen(commands[name])
        if name == "worker":
            child.wait()
        return child

    children = {name: start(name) for name in commands}
    command = Command()
    try:
        assert command._supervise(children, start) == ["worker"]
    finally:
        children["web"].kill()
    assert starts == {"worker": RESTART_LIMIT, "web": 1}
