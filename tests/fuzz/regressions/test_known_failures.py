"""Failures the state fuzzer found that are not fixed yet, kept as strict xfails so that the fix
is noticed (each file: the inputs and the first error in its header)."""
import pathlib

import pytest

from .. import gen_state, runner

DEAD_PATH = sorted((pathlib.Path(__file__).parent / "dead_path").glob("*.txt"))


@pytest.mark.xfail(strict=True, reason="a Python list emptied by pop() on the traced path of a "
                   "tensor if is read or popped again on a path that a tensor return / continue "
                   "guards (never run with that data, but traced): the trace raises IndexError "
                   "where eager runs; found by the 300-example state campaign with pops "
                   "(session of issue 11, state2); not yet fixed")
@pytest.mark.parametrize("path", DEAD_PATH, ids=[p.stem for p in DEAD_PATH])
def test_dead_path_failure(path):
    out = runner.compare_saved(path, gen_state.make_box)
    assert out.kind in ("same", "refused"), str(out)
