"""The op-by-op AMP table in docs/training.md is what runs: for every op in it, Paddle 3.3.1's
category, ours, and the output dtype under O1 and O2 for float32 and float16 inputs, checked
in eager mode and in the printed static program. Every difference from Paddle is in
`runtime.amp.lists.DIFFERENCES` (or is O2's black list) and has a note in the table.

`python tests/amp/test_amp_lists.py` prints the table (to paste into the docs)."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest
from amp_cases import CALLS, maker

import runtime as rt
from runtime import static
from runtime.amp import lists
from runtime.ops.registry import OPS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHORT = {"float16": "f16", "float32": "f32", "bfloat16": "bf16"}
HEADER = ("| op | Paddle O1 | ours O1 | Paddle O2 | ours O2 | O1 f32 in | O1 f16 in | O2 f32 in "
          "| O2 f16 in | note |")


def ours(name, level):
    return rt.amp.AmpState(rt.float16, level).category(OPS[name])


def out_dtype(category, dtype_in):
    return {"white": "f16", "black": "f32"}.get(category, SHORT[dtype_in])


def note(name):
    if name in lists.DIFFERENCES:
        return "ours differs: " + lists.DIFFERENCES[name][2]
    if ours(name, "O2") != lists.paddle_category(name, "O2"):
        return "ours differs at O2: O2 keeps the O1 black list"
    return ""


def row(name):
    cells = [f"`{name}`"]
    for level in ("O1", "O2"):
        cells += [lists.paddle_category(name, level), ours(name, level)]
    for level in ("O1", "O2"):
        for dt in ("float32", "float16"):
            cells.append(out_dtype(ours(name, level), dt))
    cells.append(note(name))
    return "| " + " | ".join(cells) + " |"


def table() -> str:
    names = sorted(CALLS, key=lambda n: ({"white": 0, "black": 1}.get(ours(n, "O1"), 2), n))
    return "\n".join([HEADER, "|" + "---|" * 10] + [row(n) for n in names])


def _doc_rows() -> dict:
    text = open(os.path.join(ROOT, "docs", "training.md")).read()
    start = text.index(HEADER)
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells
    return rows


def test_docs_table_is_the_table_in_force():
    doc = _doc_rows()
    assert sorted(doc) == sorted(CALLS)
    for name in CALLS:
        want = [c.strip() for c in row(name).strip("|").split("|")]
        assert doc[name] == want, f"docs/training.md row for {name}: {doc[name]} != {want}"


def test_every_registry_white_or_black_op_is_in_the_table():
    """A new op marked white/black in its registry entry must be named in lists.py (so its
    category is a reviewed choice, beside Paddle's) and get a row in the docs table."""
    marked = {n for n, op in OPS.items() if op.amp in ("white", "black")}
    assert not marked - lists.NAMED, sorted(marked - lists.NAMED)
    in_force = {n for n in OPS if ours(n, "O1") in ("white", "black")}
    assert not in_force - set(CALLS), sorted(in_force - set(CALLS))


def test_paddle_lists_kept_in_float32():
    for name in ("cumsum", "pow", "rsqrt", "softplus", "prod", "square", "exp", "log", "mean",
                 "sum", "softmax", "log_softmax", "layer_norm", "group_norm", "nll_loss",
                 "embedding", "scatter", "resize2d"):
        assert ours(name, "O1") == "black" == lists.paddle_category(name, "O1"), name
    for name in ("embedding", "scatter", "resize2d"):
        assert ours(name, "O2") == "black" == lists.paddle_category(name, "O2"), name
    assert {n for n in OPS if ours(n, "O1") == "white"} == {
        "matmul", "linear", "conv2d", "einsum", "conv2d_grad_input", "conv2d_grad_filter"}


def _static_line(name, call, dtype, state):
    main = static.Program()
    with static.program_guard(main), rt.amp.auto_cast(**state):
        out = call(maker(dtype))
    text = str(main)
    lines = [ln for ln in text.splitlines() if re.search(rf"= {name}\(", ln)]
    assert lines, f"{name} not in the program:\n{text}"
    (got,) = static.Executor().run(main, feed={}, fetch_list=[out])
    return lines[-1].split(":")[1].split("[")[0].strip(), got


@pytest.mark.parametrize("name", sorted(CALLS))
def test_op_dtypes_eager_and_static_match_the_docs(name):
    cells = _doc_rows()[name]
    call = CALLS[name]
    expected = dict(zip(["O1 float32", "O1 float16", "O2 float32", "O2 float16"], cells[5:9]))
    for key, want in expected.items():
        level, dtype = key.split()
        state = dict(level=level)
        with rt.amp.auto_cast(**state):
            eager = call(maker(dtype))
        assert SHORT[eager.dtype.name] == want, f"{name} {key}: eager {eager.dtype.name}"
        printed, got = _static_line(name, call, dtype, state)
        assert printed == want, f"{name} {key}: program line says {printed}"
        np.testing.assert_allclose(got.astype(np.float64),
                                   eager.numpy().astype(np.float64), rtol=1e-2, atol=1e-2)


if __name__ == "__main__":
    print(table())
