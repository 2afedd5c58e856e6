"""An f-string of values the converted code computes, used as a value (a Lightning-style
`training_step` returning `{"loss": loss, "progress": f"loss={loss.item():.3f}"}`, a log
line kept on `self`, a list of messages): it was refused at conversion ("its text exists
only when the program runs"). A `py_format` op makes the text when the program runs, as
eager's f-string would (format specs, `!r`, tensors shown as eager shows them); returned,
stored on an object the caller reaches or printed, the call gives that str, `==` with a str
is eager's bool, and a tensor `if` may choose between such texts. Any other use of its text
(`.upper()`, `+`, `len`) is refused at the user's line. Eager vs static vs NumPy on inputs
that take both paths of the tensor `if`s through one program."""
import contextlib
import io
import json
import os
import types

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import assert_same_leaves


class LitRegressor(nn.Layer):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.last_log = ""

    def forward(self, x, y, batch_idx):
        pred = self.net(x).squeeze(-1)
        loss = F.mse_loss(pred, y)
        if loss > 1.0:
            loss = loss * 0.5  # (a tensor `if`: the printed loss follows the run)
        self.last_log = f"step {batch_idx}: loss={loss.item():.4f} max={pred.max().item()!r}"
        return {"loss": loss, "progress": f"loss={loss.item():.3f}",
                "tensor": f"{loss}", "zero": self.last_log == "step 0: loss=0.0000"}


def lit_ref(net, x, y, batch_idx):
    w, b = net.weight.numpy(), net.bias.numpy()
    pred = (x @ w + b)[:, 0]
    loss = float(np.float32(((pred - y) ** 2).mean()))
    return np.float32(loss * 0.5 if loss > 1.0 else loss), loss > 1.0


def test_a_training_step_returns_and_stores_its_log_texts():
    rt.seed(0)
    eager = LitRegressor()
    static = d2s.to_static(LitRegressor())
    static.set_state_dict(eager.state_dict())
    rng = np.random.default_rng(0)
    halved = set()
    for i, scale in enumerate((0.1, 5.0, 0.2)):
        x = rng.standard_normal((4, 3)).astype("float32") * scale
        y = rng.standard_normal(4).astype("float32") * scale
        want = eager(rt.to_tensor(x), rt.to_tensor(y), i)
        got = static(rt.to_tensor(x), rt.to_tensor(y), i)
        ref, was_halved = lit_ref(eager.net, x, y, i)
        np.testing.assert_allclose(want["loss"].numpy(), ref, rtol=1e-5)
        assert want["progress"] == f"loss={ref.item():.3f}"
        assert_same_leaves(got, want)
        assert type(got["progress"]) is str and got["tensor"].startswith("Tensor(")
        assert static.last_log == eager.last_log and type(static.last_log) is str
        halved.add(was_halved)
    assert halved == {True, False}
    assert len(static.forward.program_cache) == 3  # (one per batch_idx: a Python int)


def chosen_note(x, threshold):
    loss = (x ** 2).mean()
    note = f"ok {loss.item():.2f}"
    if loss > threshold:
        note = f"high {loss.item():.1f}"
    print(note)
    notes = types.SimpleNamespace(last=note, all=[note, f"{x.sum()}"])
    return note, notes.all, note == "ok 0.01"


def test_a_text_chosen_by_a_tensor_if_returned_and_printed():
    static = d2s.to_static(chosen_note)
    for v in (0.1, 2.0, 0.3):
        x = rt.to_tensor(np.full([3], v, "float32"))
        outs = []
        for fn in (chosen_note, static):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                outs.append(fn(x, 1.0))
            outs.append(buf.getvalue())
        want, want_out, got, got_out = outs
        loss = float(np.float32(v) ** 2)
        assert want[0] == (f"high {loss:.1f}" if loss > 1.0 else f"ok {loss:.2f}")
        assert_same_leaves(got, want)
        assert got_out == want_out
    assert len(static.program_cache) == 1


def upper_of_made_text(x):
    label = f"sum={x.sum().item()}"
    return label.upper()


def concat_of_made_text(x):
    label = f"sum={x.sum().item()}"
    return label + "!"


@pytest.mark.parametrize("fn", [upper_of_made_text, concat_of_made_text])
def test_other_uses_of_its_text_are_refused_at_the_line(fn):
    x = rt.ones([3])
    assert "SUM=3.0" in fn(x).upper()
    with pytest.raises(d2s.ConversionError, match="an f-string of a value the converted code "
                                                  "computes") as e:
        d2s.to_static(fn)(x)
    assert "test_fstrings_made_when_run.py" in str(e.value) and "label" in str(e.value)


def checkpoint_path(x):
    return os.path.join("ckpt", f"step_{x.sum().item():.0f}.pt")


def logged_json(x):
    return json.dumps({"loss": f"{x.sum().item():.3f}"})


@pytest.mark.parametrize("fn", [checkpoint_path, logged_json])
def test_library_code_needing_its_text_is_refused_at_the_line(fn):
    x = rt.ones([3])
    fn(x)  # eager runs
    with pytest.raises(d2s.ConversionError, match="an f-string of a value the converted code "
                                                  "computes is used as text") as e:
        d2s.to_static(fn)(x)
    shown = str(e.value) + "".join(getattr(e.value, "__notes__", []))
    assert "MadeText" not in shown and fn.__name__ in shown
