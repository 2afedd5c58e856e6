"""Internal errors the 10,000-example state campaign found in functions whose lists grow by a
tensor-dependent count (kept as found, with the inputs and the first error in the header):
each must now agree with eager (also by raising the error eager raises) or be a documented
refusal (`d2s.ConversionError`)."""
import pathlib

import pytest

from .. import gen_state, runner
from .test_alias_scan_work import CASE as SCANNED

# (test_alias_scan_work runs its case, requiring "same" and counting the heap scans)
CASES = sorted(p for p in (pathlib.Path(__file__).parent / "growing").glob("*.txt")
               if p != SCANNED)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_growing_list_case(path):
    out = runner.compare_saved(path, gen_state.make_box)
    assert out.kind in ("same", "same_error", "refused"), str(out)
