"""The state fuzzer in the default test run: a few hundred generated functions (see
`gen_state`), each run eagerly and converted over several inputs through one program.
Allowed: same results; the same exception type from both; a documented refusal
(`d2s.ConversionError`). Not allowed: different results or any other static error."""
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from . import gen_state, runner

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fake_cupy  # noqa: E402

_SETTINGS = settings(max_examples=50, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))


def _check(case):
    source, inputs = case
    out = runner.compare(source, inputs, gen_state.make_box)
    assert out.kind in ("same", "same_error", "refused"), str(out)


# 4 x 50 examples, each part well within the suite's per-test time limit; the default run
# has two (each 22-26 s on a loaded 2-core machine), `-m slow` all four
@pytest.mark.parametrize("part", [0, 1] + [pytest.param(p, marks=pytest.mark.slow)
                                           for p in (2, 3)])
@_SETTINGS
@given(case=gen_state.programs(growing=False))
def test_fuzz_same_shape_state(part, case):
    """Containers keep their shape: every change must be carried exactly."""
    _check(case)


@_SETTINGS
@given(case=gen_state.programs(growing=False))
def test_fuzz_same_shape_state_on_fake_gpu_with_cuda_graphs(case):
    """The same on `fake_cupy` with CUDA-graph capture on: a program that can be captured
    runs its third and later calls as replays of the graph captured on its second."""
    saved = os.environ.get("D2S_CUDA_GRAPH")
    os.environ["D2S_CUDA_GRAPH"] = "1"
    try:
        with fake_cupy.installed():
            _check(case)
    finally:
        if saved is None:
            del os.environ["D2S_CUDA_GRAPH"]
        else:
            os.environ["D2S_CUDA_GRAPH"] = saved


@pytest.mark.slow  # (the campaigns run this generator: `python -m tests.fuzz --gen state`)
@_SETTINGS
@given(case=gen_state.programs(growing=True))
def test_fuzz_growing_lists(case):
    """Lists may grow by a tensor-dependent count: carried, or refused with a clear error."""
    _check(case)
