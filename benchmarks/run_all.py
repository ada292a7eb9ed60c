"""``make bench``: run every benchmark script in this folder, one after another,
and let each print its own figures. Pass names to run only some:
``python benchmarks/run_all.py webhook_throughput retrieval_scale``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    scripts = sorted(
        p for p in HERE.glob("*.py") if p.name not in {"run_all.py", "__init__.py"} and not p.name.startswith("_")
    )
    if names:
        scripts = [p for p in scripts if p.stem in names]
    failed = []
    for script in scripts:
        print(f"\n=== {script.stem} ===", flush=True)
        if subprocess.call([sys.executable, str(script)], cwd=HERE.parent) != 0:
            failed.append(script.stem)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
