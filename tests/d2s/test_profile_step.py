"""`benchmarks/profile_step.py` (run by `d2s bench`): the profile of a converted call splits
its time over what the compiled program calls, leaves the program as it was, and accounts for
the whole call."""
import os
import subprocess
import sys

import numpy as np

import d2s
import runtime as rt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from profile_step import profile  # noqa: E402


def test_profile_splits_a_call_and_restores_the_program():
    def f(x):
        return rt.tanh(x * 2.0 + 1.0).sum()

    static = d2s.to_static(f)
    x = rt.to_tensor(np.linspace(-1, 1, 64).astype("float32"))
    want = np.tanh(x.numpy() * 2.0 + 1.0).sum()
    static(x)
    entry = static.program_cache.last_entry
    names = dict(entry.compiled.body.__globals__)
    plain, table, profiled = profile(lambda: static(x), entry.compiled.body.__globals__, 20)
    assert entry.compiled.body.__globals__ == names  # every function put back
    np.testing.assert_allclose(static(x).numpy(), want, rtol=1e-6)
    assert {"np.tanh", "np.multiply", "np.add"} <= set(table)
    assert all(calls == 1 for name, (calls, _) in table.items() if name.startswith("np.t"))
    assert plain > 0 and profiled > 0
    assert sum(ms for _, ms in table.values()) <= profiled * 1.5


def test_the_script_prints_both_tables():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "profile_step.py"),
                        "--calls", "10", "--model", "DeepFM", "--optimizer", "SGD"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "MLP 784-256-256-10, batch 1" in r.stdout and "| np.matmul | 3 |" in r.stdout
    assert "DeepFM: one whole training step (SGD), batch 256" in r.stdout
    assert r.stdout.count("the program's own Python and the call path") == 2
