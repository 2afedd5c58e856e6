"""The data-parallel digits demo, in one process and under `mpiexec -n 2` (slow: it trains
LeNet for real)."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")
from test_mpi import ROOT, mpiexec

pytestmark = pytest.mark.slow


def test_demo_one_process():
    from examples import demo_distributed
    assert demo_distributed.main(epochs=4) == 0


def test_demo_two_processes():
    if mpiexec() is None:
        pytest.fail("mpiexec not found: pip install -e '.[test]'")
    out = subprocess.run([mpiexec(), "-n", "2", sys.executable, "-m",
                          "examples.demo_distributed"], capture_output=True, text=True,
                         check=False, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 process(es), engine 'mpi'" in out.stdout
    assert "largest parameter difference between ranks 0.0e+00" in out.stdout
