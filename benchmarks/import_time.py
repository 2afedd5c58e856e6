"""Seconds of `import numpy` and of `import numpy, runtime, d2s` in fresh processes (the best of
`--repeat`), and their ratio: what a newcomer waits before the first line runs.

    python benchmarks/import_time.py [--repeat 7] [--root CHECKOUT]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def best_of(code: str, root: str, repeat: int) -> float:
    """The least wall time of `code` over `repeat` fresh interpreters (run from /, with
    `root` on the path, so no other checkout is imported; bytecode written and read, as on a
    user's machine: the first run writes it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for _ in range(repeat):
        timed = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
        out = subprocess.run([sys.executable, "-c", timed], capture_output=True, text=True,
                             cwd=os.sep, env={**env, "PYTHONPATH": root}, check=True)
        times.append(float(out.stdout.strip()))
    return min(times)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/import_time.py")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--root", default=ROOT)
    a = p.parse_args(argv)
    numpy = best_of("import numpy", a.root, a.repeat)
    both = best_of("import numpy, runtime, d2s", a.root, a.repeat)
    print(f"import numpy {numpy * 1000:.0f} ms; import numpy, runtime, d2s {both * 1000:.0f} ms;"
          f" ratio {both / numpy:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
