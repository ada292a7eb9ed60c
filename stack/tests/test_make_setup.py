"""``make setup`` (run by every target): it makes ``.venv`` again when the one
there has no working pip (``python3.11 -m venv`` that failed at ensurepip
leaves such a one), removes one it failed to make, and does nothing at all
when the venv is installed and the requirements have not changed. Run on a
copy of the Makefile with stand-ins for Python."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import ROOT

# Stands for python3.11: `-m venv DIR` makes a venv whose python (with pip) logs its calls.
GOOD_PYTHON = """#!/bin/sh
[ "$1 $2" = "-m venv" ] || exit 2
mkdir -p "$3/bin"
printf '#!/bin/sh\\necho "$*" >> "$(dirname "$0")/../calls"\\n' > "$3/bin/python"
chmod +x "$3/bin/python"
"""
# python3.11 -m venv without Debian's python3.11-venv: the interpreter is there, pip is not.
NO_PIP = """#!/bin/sh
echo "No module named pip" >&2
exit 1
"""
ENSUREPIP_FAILS = """#!/bin/sh
mkdir -p "$3/bin"
printf '#!/bin/sh\\nexit 1\\n' > "$3/bin/python"
chmod +x "$3/bin/python"
echo "Error: ensurepip failed" >&2
exit 1
"""


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "requirements").mkdir(parents=True)
    shutil.copy(ROOT / "Makefile", project / "Makefile")
    for name in ("base.txt", "dev.txt"):
        (project / "requirements" / name).write_text("")
    return project


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _make_setup(project: Path, python: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "--no-print-directory", "setup", f"PYTHON={python}"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_venv_without_pip_is_made_again_and_a_good_one_is_left_alone(tmp_path):
    project = _project(tmp_path)
    (project / ".venv" / "bin").mkdir(parents=True)
    _script(project / ".venv" / "bin" / "python", NO_PIP)

    result = _make_setup(project, _script(tmp_path / "python3.11", GOOD_PYTHON))
    assert result.returncode == 0, result.stdout + result.stderr
    calls = (project / ".venv" / "calls").read_text().splitlines()
    assert calls == ["-m pip install --quiet --disable-pip-version-check -r requirements/dev.txt"]  # the new venv's

    again = _make_setup(project, tmp_path / "python3.11")
    assert again.returncode == 0
    assert (project / ".venv" / "calls").read_text().splitlines() == calls  # nothing run: no slower


def test_a_venv_that_could_not_be_made_is_removed(tmp_path):
    project = _project(tmp_path)
    result = _make_setup(project, _script(tmp_path / "python3.11", ENSUREPIP_FAILS))
    assert result.returncode != 0
    assert "ensurepip failed" in result.stderr
    assert not (project / ".venv").exists()
