"""The observe fuzzer in the default test run (see `gen_observe`): generated functions with
lists of Python numbers grown in graph loops, argument fields changed between calls, dicts
counted into, traced pairs in sets, dtype-widening loops and jumps in `finally`, each run
eagerly and converted over several inputs through one program. Allowed: same results (and the
same argument object afterwards); the same exception type from both; a documented refusal
(`d2s.ConversionError`). Not allowed: different results or any other static error."""
import pytest
from hypothesis import HealthCheck, given, settings

from . import gen_observe, runner


# Known open (issue 33): Python-type differences with equal values, 2 in 1000 generated
# programs (`python -m tests.fuzz --gen observe --examples 1000 --seed 33001`; 0 in
# `--examples 300 --seed 33002 --native sync`): `sum()` of a list grown in a graph loop, returned
# in a tuple from inside `try`/`finally` in a `for` that a tensor `break` in the `finally` makes
# a graph loop, comes back as `0.0` for eager's `0` (a lone `return sum(...)` there is refused).
# Not strict: most runs of 40 examples pass. A run takes minutes: slow.
@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason="sum() type of a tuple returned through try/finally "
                   "in a graph loop (issue 33, open)")
@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=gen_observe.programs())
def test_fuzz_observe(case):
    source, inputs = case
    out = runner.compare(source, inputs, gen_observe.make_observed)
    assert out.kind in ("same", "same_error", "refused"), str(out)
