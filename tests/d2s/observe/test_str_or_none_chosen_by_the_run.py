"""A str or None that a tensor decides (`label = name if score > thr else None`,
`LABELS.get(int(t))`, `{0: None, 1: "cat"}[int(t)]`), then used as eager code uses it:
`if label:`, `if label is None:`, `not label`, `label or "?"`, `label.upper()`, `label + "!"`,
an f-string, `str(label)`, `len(label)`, `label in (...)`, returned in a tuple or dict.
One program serves every input; each run gives eager's values and Python types, and where
eager raises on a run (`None.upper()`), the program raises eager's error on that run only.
Before: `if label:` and text of a str that may be None were refused at conversion, and
`LABELS.get(int(t))` returned None on every run (silently)."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import assert_at_user_line
from tests.d2s.observe_wild.helpers import assert_same_leaves

CLASSES = {0: None, 1: "cat", 2: "dog"}  # (class 0: background, no label)
SPECIAL = ("<pad>", "<unk>", None)
ROWS = ([0.1, 0.2, 3.0], [2.0, -1.0, -3.0], [-1.0, 4.0, 0.5], [0.3, 0.1, 0.2])


def _x(row):
    return rt.to_tensor(np.asarray(row, "float32"))


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _run(fn, *args):
    """(kind, value): eager's (or the converted call's) result or raised error."""
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)


def _same_on_every_row(fn, *extra):
    static = d2s.to_static(fn)
    for row in ROWS:
        want, got = _run(fn, _x(row), *extra), _run(static, _x(row), *extra)
        assert got[0] == want[0], (row, got, want)
        assert_same_leaves(got[1], want[1], f"row {row}")
    assert len(static.program_cache) == 1  # (one program for every path)


class Head(rt.nn.Layer):
    """A classifier head mapping the argmax to a class name (None for background)."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        with rt.no_grad():
            self.fc.weight.set_value(rt.eye(3))
            self.fc.bias.set_value(rt.zeros([3]))

    def forward(self, x):
        logits = self.fc(x)
        name = CLASSES.get(int(logits.argmax()))
        if name:
            return {"label": name.title(), "score": logits.max(), "n": len(name)}
        return {"label": "background", "score": logits.max(), "n": 0}


def test_classifier_head_get_and_truth_of_a_name():
    head = Head()
    static = d2s.to_static(head)
    for row in ROWS:
        assert_same_leaves(static(_x(row)), head(_x(row)))
    assert static(_x(ROWS[0]))["label"] == "Dog"  # (before: "background" on every row)


def detect(x, thr):
    score = x.max()
    label = "person" if score > thr else None
    if label is None:
        return "nothing", 0
    return label.upper() + "!", len(label)


def test_detector_label_or_none_checked_with_is_none():
    _same_on_every_row(detect, 1.0)


def tokenize(x):
    tok = SPECIAL[int(x.argmin())]  # ("<pad>", "<unk>" or None)
    flags = (not tok, tok in ("<pad>", "<bos>"), tok == "<unk>", tok is not None)
    return tok or "<none>", flags, {"tok": tok}


def test_tokenizer_special_token_or_none_in_containers():
    _same_on_every_row(tokenize)


def log_line(x):
    name = CLASSES[int(x.argmax())]
    text = f"class={name}"
    return text, str(name), "[%s]" % (name or "-"), name and name.capitalize()


def test_logger_formats_a_chosen_name():
    _same_on_every_row(log_line)


def shout(x):
    name = CLASSES[int(x.argmax())]
    return name.upper() + "!"  # (eager raises AttributeError where the argmax is 0)


def test_text_of_none_raises_eager_error_on_that_run_only():
    _same_on_every_row(shout)
    static = d2s.to_static(shout)
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'upper'") as e:
        static(_x(ROWS[3]))
    assert_at_user_line(e.value, __file__, line_of(shout, "return name.upper()"))


def scaled(x):
    name = "wide" if x.mean() > 0 else None
    return x * {"wide": 2.0, "narrow": 0.5}.get(name, 1.0)


def test_get_under_a_chosen_str_or_none_with_a_default():
    _same_on_every_row(scaled)


@pytest.mark.parametrize("default", ["unknown", None])
def test_get_of_a_computed_int_key_picks_the_run_item(default):
    def name_of(x, default):
        return CLASSES.get(int(x.argmax()) + 1, default)  # (key 3: the default)
    _same_on_every_row(name_of, default)
