"""The parameter fuzzer in the default test run (see `gen_observe_params`): generated training
code with heads of a Layer under tensor `if`s, graph loops that may run zero times and early
returns, then `backward()` and a Momentum step with weight decay (by the caller, or inside the
converted function), each run eagerly and converted over several inputs through one program.
Allowed: the same results, parameters and `.grad` (None or values) after each call; the same
exception type from both; a documented refusal (`d2s.ConversionError`). Not allowed: anything
else."""
import pytest
from hypothesis import HealthCheck, given, settings

from . import gen_observe_params, runner


# Campaigns (2026-12-06; programs(detach=False), 150 to 200 each): seed 20211, 25
# disagreements (item() held as float32: fixed), then 25 (a parameter read in a graph loop
# only for an unused value got zeros: fixed); 20212: 14 (the same under a tensor `if` in the
# body: fixed); 20213: 200 same. With `detach()` under tensor `if`s (`--gen observe-params`),
# seed 20214: 28 of 150 disagree (the detach chosen by a tensor condition: fixed, also in
# graph loop bodies); seed 23001: 50 of 150 on main before the fix, 0 after. With the early
# return under a tensor `if` in whole steps too (backward() and the step there, issue 35),
# seed 35101: 14 of 200 disagree and 7 internal errors (the reach of the branch's backward()
# and a condition lifted from an earlier `if`: fixed), then 200 same or same error; 35102:
# 300 (293 same, 7 same error).
@pytest.mark.slow
@settings(max_examples=20, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(case=gen_observe_params.programs())
def test_fuzz_observe_params(case):
    source, inputs = case
    out = runner.compare(source, inputs, gen_observe_params.make_trainer)
    assert out.kind in ("same", "same_error", "refused"), str(out)
