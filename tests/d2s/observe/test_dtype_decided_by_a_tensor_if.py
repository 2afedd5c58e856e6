"""A value whose dtype a tensor `if` decides (issue 35; refused with "... is an int64 tensor in
the if branch and a float32 tensor in the else branch ..." before): returned (also inside
tuples, lists and dicts, and through nested tensor `if`s) or written back to `self`, the call
gives the run's path's value with eager's dtype, `stop_gradient` and gradient (only the taken
branch's), `.grad` None where eager leaves it None; one program serves every path. Any other
use (arithmetic, `.dtype`, a graph loop carrying it, `d2s.save`) is a clear error.

Eager vs converted vs a NumPy reference over inputs that take each path."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


def quantize_or_scale(x):
    """Integer codes for confident inputs, a soft scale otherwise (as a quantizer writes it)."""
    y = x.astype("int64") if x.sum() > 0 else x * 0.5
    return y


def pick(x, k):
    """An index where the score is large, the smoothed scores elsewhere, in a dict of a list."""
    if x.mean() > 0:
        if x.max() > k:
            out = x.argmax(-1)
        else:
            out = (x * 2).sum(-1)
    else:
        out = x.sum(-1) * 0.5
    return {"pred": [out, x + 1.0]}


def pick_ref(x, k):
    if x.mean() > 0:
        out = x.argmax(-1) if x.max() > k else (x * 2).sum(-1)
    else:
        out = x.sum(-1) * np.float32(0.5)
    return out


ROWS = [[1.5, 2.5, -1.0], [-1.5, -2.0, 1.0], [0.25, 0.5, 0.75]]


def _grad_of(fn, row, *args):
    x = rt.to_tensor(np.array(row, "float32"), stop_gradient=False)
    out = fn(x, *args)
    y = out if rt.is_tensor(out) else out["pred"][0]
    loss = (y.astype("float32") if y.dtype != rt.float32 else y).sum() * 3.0
    if not y.stop_gradient:
        loss.backward()
    return out, x.grad


@pytest.mark.parametrize("row", ROWS)
def test_returned_value_has_the_run_s_dtype(row):
    converted = d2s.to_static(quantize_or_scale)
    for other in ROWS:  # (every path through one program)
        converted(rt.to_tensor(np.array(other, "float32"), stop_gradient=False))
    x = np.array(row, "float32")
    want = x.astype("int64") if x.sum() > 0 else x * np.float32(0.5)
    (e, e_grad), (s, s_grad) = (_grad_of(fn, row) for fn in (quantize_or_scale, converted))
    for y in (e, s):
        assert y.dtype.name == want.dtype.name
        np.testing.assert_array_equal(y.numpy(), want)
        assert y.stop_gradient is (want.dtype.kind == "i")
    assert (e_grad is None) == (s_grad is None) == (want.dtype.kind == "i")
    if s_grad is not None:  # d(3 * sum(0.5 x))/dx = 1.5, as finite differences give
        np.testing.assert_allclose(s_grad.numpy(), e_grad.numpy())
        np.testing.assert_allclose(s_grad.numpy(), np.full(3, 1.5), rtol=1e-6)
    assert len(converted.program_cache) == 1


@pytest.mark.parametrize("row", ROWS)
@pytest.mark.parametrize("k", [1.0, 5.0])
def test_nested_ifs_and_a_returned_dict_of_a_list(row, k):
    converted = d2s.to_static(pick)
    for other in ROWS:
        converted(rt.to_tensor(np.array(other, "float32"), stop_gradient=False), k)
    want = pick_ref(np.array(row, "float32"), k)
    (e, e_grad), (s, s_grad) = (_grad_of(fn, row, k) for fn in (pick, converted))
    assert list(s) == ["pred"] and type(s["pred"]) is list and len(s["pred"]) == 2
    for out in (e, s):
        y = out["pred"][0]
        assert y.dtype.name == np.asarray(want).dtype.name
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
        assert y.stop_gradient is (np.asarray(want).dtype.kind == "i")
        np.testing.assert_allclose(out["pred"][1].numpy(), np.array(row, "float32") + 1)
    assert (e_grad is None) == (s_grad is None)
    if s_grad is not None:
        np.testing.assert_allclose(s_grad.numpy(), e_grad.numpy(), rtol=1e-6)
        # finite differences of the float path taken (3 * sum of the scores' reduction)
        x, eps = np.array(row, "float64"), 1e-3
        fd = [(3 * pick_ref(x + eps * d, k).sum() - 3 * pick_ref(x - eps * d, k).sum())
              / (2 * eps) for d in np.eye(3)]
        np.testing.assert_allclose(s_grad.numpy(), fd, rtol=1e-4)
    assert len(converted.program_cache) == 1


class Decoder(rt.nn.Layer):
    """Keeps the last step's output on `self`: token ids when confident, scores otherwise;
    `soft` is used only on the unconfident path."""

    def __init__(self):
        super().__init__()
        self.proj = rt.nn.Linear(3, 3)
        self.soft = rt.nn.Linear(3, 3)

    def forward(self, x):
        h = self.proj(x)
        if h.sum() > 0:
            self.last = h.argmax(-1)
            out = h.argmax(-1)
        else:
            self.last = (h * 2).sum(-1)
            out = self.soft(h).sum(-1)
        return out, h


def test_written_back_and_which_parameters_get_a_gradient():
    rt.seed(3)
    eager, static = Decoder(), Decoder()
    static.set_state_dict(eager.state_dict())
    converted = d2s.to_static(static)
    for row in ([[1.5, 2.5, -1.0]], [[-1.5, -2.0, 1.0]], [[3.0, 1.0, 2.0]], [[-3.0, -1, -2]]):
        x = rt.to_tensor(np.array(row, "float32"))
        seen = []
        for model, call in ((eager, eager), (static, converted)):
            for p in model.parameters():
                p.clear_grad()  # (None: as before any backward)
            out, h = call(x)
            loss = h.sum() + (out.sum() if out.dtype == rt.float32 else 0.0)
            loss.backward()
            seen.append((out.dtype, out.stop_gradient, out.numpy(), model.last.dtype,
                         model.last.numpy(), [p.grad for p in model.parameters()]))
        (ed, es, ev, eld, elv, eg), (sd, ss, sv, sld, slv, sg) = seen
        assert (ed, es, eld) == (sd, ss, sld)
        np.testing.assert_allclose(sv, ev, rtol=1e-6)
        np.testing.assert_allclose(slv, elv, rtol=1e-6)
        assert [g is None for g in sg] == [g is None for g in eg]
        for a, b in zip(sg, eg, strict=True):
            if a is not None:
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)
    assert len(converted.forward.program_cache) == 1


def scaled_again(x):
    y = x.astype("int64") if x.sum() > 0 else x * 0.5
    return y * 2


def dtype_read(x):
    if x.sum() > 0:
        y = x.astype("int64")
    else:
        y = x * 0.5
    return y, str(y.dtype)


def carried(x, n):
    y = x.astype("int64") if x.sum() > 0 else x * 0.5
    for _ in range(n):
        y = y
        x = x + 1
    return x, y


@pytest.mark.parametrize("fn,args,use,line", [
    (scaled_again, (), "used in an op here", "return y * 2"),
    (dtype_read, (), "read as .dtype here", "return y, str(y.dtype)"),
    (carried, (rt.to_tensor(2),), "carried by a loop whose condition is a tensor",
     "for _ in range(n):"),
])
def test_other_uses_are_a_clear_error_at_the_line(fn, args, use, line):
    x = rt.to_tensor(np.array(ROWS[0], "float32"))
    fn(x, *args)  # (eager runs)
    with pytest.raises(ConversionError, match="an int64 tensor on some runs and a float32 "
                       "tensor on others") as info:
        d2s.to_static(fn)(x, *args)
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert use in text and line in text.split("In user code")[-1]
    for internal in ("_retval", "Variable(%", "<undefined", "_ifexp"):
        assert internal not in text


def test_saved_model_refuses_it(tmp_path):
    fn = d2s.to_static(quantize_or_scale, input_spec=[d2s.InputSpec([3], "float32")])
    with pytest.raises(TypeError, match="whose dtype or shape only the run decides"):
        d2s.save(fn, str(tmp_path / "m"))
