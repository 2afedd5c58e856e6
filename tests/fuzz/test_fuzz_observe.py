"""The observe fuzzer in the default test run (see `gen_observe`): generated functions with
lists of Python numbers grown in graph loops, argument fields changed between calls, dicts
counted into, traced pairs in sets, dtype-widening loops and jumps in `finally`, each run
eagerly and converted over several inputs through one program. Allowed: same results (and the
same argument object afterwards); the same exception type from both; a documented refusal
(`d2s.ConversionError`). Not allowed: different results or any other static error."""
import pytest
from hypothesis import HealthCheck, given, settings

from . import gen_observe, runner


# Known open (issue 33): `python -m tests.fuzz --gen observe --examples 2000 --seed 17010`
# finds 5 disagreements and 2 internal errors in 2,000 (seed 33001: 0 in 1,000): `sum()` of an
# int list popped under a tensor `if` in a graph loop and returned after a `try`/`finally` in a
# Python `for` comes back as a 0-d int64 Tensor for eager's int; a `ValueError` naming a
# Variable made inside a cond/while block. Not strict: most runs of 40 examples pass. Slow.
@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason="sum() type after a pop under a tensor if in a graph "
                   "loop; a Variable made in a block (issue 33, open)")
@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=gen_observe.programs())
def test_fuzz_observe(case):
    source, inputs = case
    out = runner.compare(source, inputs, gen_observe.make_observed)
    assert out.kind in ("same", "same_error", "refused"), str(out)
