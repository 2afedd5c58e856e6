"""runtime/ops/numpy_calls.py (NumPy's percentile / quantile / median and np.linalg functions
as ops of converted code): their kernel is NumPy's own function, so the OpInfo harness would
compare NumPy with itself; eager (NumPy) vs static vs a NumPy reference, dtypes and shapes
of run-decided sizes, in tests/d2s/breadth35/test_numpy_statistics_and_linalg_of_computed_values.py."""
from __future__ import annotations

from opinfo import EXEMPT

_ELSEWHERE = ("NumPy's own function as the kernel (no gradient): eager, static and NumPy in "
              "tests/d2s/breadth35/test_numpy_statistics_and_linalg_of_computed_values.py")
EXEMPT["np_quantile"] = _ELSEWHERE
EXEMPT["np_linalg"] = _ELSEWHERE
OPINFOS: list = []
