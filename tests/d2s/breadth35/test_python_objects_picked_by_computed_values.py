"""A computed value choosing a Python object (issues 33/35): `LABELS[int(x.argmax())]`,
`_CHARS[i]` over a tensor's ids, `{0: None, 1: "person"}[int(t)]`, `SCALES[k]`, a dict read
by a picked label, `best if report else None`. Each was refused at the user's line ("a value
computed by the converted program indexes a Python container", "a string chosen by a tensor
condition"); now the program picks the item from a constant table when it runs
(`d2s/operators/python_picks.py`): strs and None come back as eager's strs and None, numbers
as eager's int / float / bool, tensors as the item's (gradients to that item only). Eager vs
static vs a NumPy reference over inputs that take different paths through one program; what
no program can pick among stays refused at the line."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

from .messages import assert_at_user_line

LABELS = ("cat", "dog", "bird")
COCO = {0: None, 1: "person", 3: "car"}  # (a detector's id -> name; 0: background)
SCALES = [0.5, 1.0, 2.0]
STRIDES = [8, 16, 32]
FLIPS = (False, True, False)
WEIGHT = {"cat": 1.5, "dog": 2.5, "bird": 0.5}
_CHARS = "-abcd"


def _t(v, dtype="float32"):
    return rt.to_tensor(np.array(v, dtype))


def _one_program(fn, inputs, reference):
    static = d2s.to_static(fn)
    for args in inputs:
        want = reference(*[np.asarray(a.numpy()) if isinstance(a, rt.Tensor) else a
                           for a in args])
        eager = fn(*args)
        _same_as_reference(eager, want)
        assert_same_leaves(static(*args), eager)
    cache = static.forward.program_cache if isinstance(static, rt.nn.Layer) else \
        static.program_cache
    assert len(cache) == 1


def _same_as_reference(got, want):
    """Python leaves of one type and value; tensors against NumPy values."""
    if isinstance(got, rt.Tensor):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        return
    assert type(got) is type(want), (got, want)
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            _same_as_reference(g, w)
    else:
        assert got == want, (got, want)


class Classifier(rt.nn.Layer):
    """A head whose prediction is reported as a label, a loss weight per label and the
    label's text in a log line."""

    def __init__(self, labels=LABELS):
        super().__init__()
        self.labels = labels

    def forward(self, logits):
        k = int(logits.argmax())
        label = self.labels[k]
        if label == "cat":
            note = label.upper()
        else:
            note = label + "!"
        return label, note, WEIGHT[label], logits * WEIGHT[label], label in ("cat", "dog")


def _classifier_reference(logits):
    label = LABELS[int(np.argmax(logits))]
    note = label.upper() if label == "cat" else label + "!"
    return label, note, WEIGHT[label], logits * WEIGHT[label], label in ("cat", "dog")


def test_a_label_picked_by_argmax_compares_reads_a_dict_and_returns_as_a_str():
    rows = [[0.9, 0.1, 0.2], [0.1, 0.8, 0.3], [0.1, 0.2, 0.7]]
    _one_program(Classifier(), [(_t(r),) for r in rows], _classifier_reference)


def pyramid_level(x, sizes):
    level = int((sizes > 64).astype("int64").sum())
    stride = STRIDES[level]
    return stride, SCALES[level], FLIPS[level], STRIDES[-1 - level], x * SCALES[level]


def _pyramid_reference(x, sizes):
    level = int((sizes > 64).sum())
    return STRIDES[level], SCALES[level], FLIPS[level], STRIDES[-1 - level], x * SCALES[level]


def test_numbers_picked_from_constant_tables_keep_their_python_type():
    x = _t([1.0, -2.0])
    inputs = [(x, _t([10.0, 20.0])), (x, _t([100.0, 20.0])), (x, _t([100.0, 200.0]))]
    _one_program(pyramid_level, inputs, _pyramid_reference)


def detection_name(class_ids, scores):
    best = int(scores.argmax())
    name = COCO[int(class_ids[best])]
    if name is None:
        return None, False, scores.max() * 0.0
    return name, name is not None, scores.max()


def _detection_reference(class_ids, scores):
    best = int(np.argmax(scores))
    name = COCO[int(class_ids[best])]
    top = np.float32(scores.max())
    return (None, False, top * np.float32(0.0)) if name is None else (name, True, top)


def test_a_str_or_none_picked_by_a_dict_with_int_keys():
    ids = _t([0, 1, 3], "int64")
    inputs = [(ids, _t([0.9, 0.1, 0.2])), (ids, _t([0.1, 0.8, 0.3])),
              (ids, _t([0.1, 0.2, 0.7]))]
    _one_program(detection_name, inputs, _detection_reference)


def ctc_decode(ids):
    """PaddleOCR's CTC label decode: repeated ids and blanks (0) dropped, the rest looked up
    in a character table."""
    chars = []
    prev = -1
    for i in ids:
        if i != 0 and i != prev:
            chars.append(_CHARS[i])
        prev = i
    text = "".join(chars)
    return text, len(text), chars


def _ctc_reference(ids):
    chars, prev = [], -1
    for i in ids.tolist():
        if i != 0 and i != prev:
            chars.append(_CHARS[i])
        prev = i
    return "".join(chars), len(chars), chars


def test_characters_picked_by_ids_in_a_graph_loop_join_to_eagers_text():
    inputs = [(_t([1, 1, 0, 2, 3], "int64"),), (_t([0, 0, 0, 0, 0], "int64"),),
              (_t([4, 0, 4, 4, 1], "int64"),)]
    _one_program(ctc_decode, inputs, _ctc_reference)


CLASSES = ["background", "road", "car"]


def dominant_class(logits, min_frac):
    pred = logits.argmax(0)
    report = {}
    for c, name in enumerate(CLASSES):
        frac = float((pred == c).astype("float32").mean())
        if frac < min_frac:
            continue
        report[name] = frac
    dominant = max(report, key=report.get) if report else None
    return dominant, dominant is None, dominant == "road"


def _dominant_reference(logits, min_frac):
    pred = logits.argmax(0)
    report = {n: float((pred == c).mean()) for c, n in enumerate(CLASSES)
              if float((pred == c).mean()) >= min_frac}
    dominant = max(report, key=report.get) if report else None
    return dominant, dominant is None, dominant == "road"


def test_a_str_or_none_chosen_by_a_tensor_condition():
    road = np.zeros([3, 2, 2], "float32")
    road[1] = 1.0
    mixed = np.random.default_rng(0).uniform(size=[3, 2, 2]).astype("float32")
    inputs = [(_t(road), 0.3), (_t(mixed), 0.3), (_t(mixed * 0.0 + 1.0), 0.3)]
    _one_program(dominant_class, inputs, _dominant_reference)


class Prototypes(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.near = self.create_parameter([3])
        self.far = self.create_parameter([3])

    def forward(self, x):
        protos = [self.near, self.far]
        return (x * protos[int(x.sum() < 0)]).sum()


def test_a_tensor_picked_from_a_list_gives_a_gradient_to_that_one_only():
    model = Prototypes()
    static = d2s.to_static(model)
    for v in ([1.0, 2.0, 0.5], [-1.0, -2.0, 0.5]):
        grads = []
        for fn in (model, static):
            model.clear_gradients()
            loss = fn(_t(v))
            loss.backward()
            grads.append([None if p.grad is None else p.grad.numpy() for p in
                          (model.near, model.far)])
        (e_near, e_far), (s_near, s_far) = grads
        assert (e_near is None, e_far is None) == (s_near is None, s_far is None) == (
            v[0] < 0, v[0] > 0)
        np.testing.assert_allclose(s_near if v[0] > 0 else s_far, v)


def picks_out_of_range(x):
    return LABELS[int(x.sum())]


def test_an_index_out_of_range_raises_eagers_index_error_when_the_program_runs():
    static = d2s.to_static(picks_out_of_range)
    assert static(_t([1.0, 1.0])) == "bird"
    assert static(_t([-1.0, 0.0])) == "bird"  # (negative: from the end)
    assert static(_t([-3.0, 0.0])) == "cat"
    for v in ([2.0, 2.0], [-2.0, -2.0]):
        with pytest.raises(IndexError):
            picks_out_of_range(_t(v))
        with pytest.raises(IndexError, match="tuple index out of range"):
            static(_t(v))
    with pytest.raises(KeyError):
        d2s.to_static(detection_name)(_t([0, 2, 3], "int64"), _t([0.1, 0.9, 0.2]))


HEADS = [{"scale": 0.5}, {"scale": 2.0}]
MIXED = [1, 2.5, "x"]
MAYBE = ["keep", None]


def config_of_objects(x):
    return x * HEADS[int(x.argmax())]["scale"]


def mixed_table(x):
    return MIXED[int(x.argmax())]


def text_of_str_or_none(x):
    name = MAYBE[int(x.argmax())]
    return name.upper()


@pytest.mark.parametrize("fn, line, said", [
    (config_of_objects, 'return x * HEADS[int(x.argmax())]["scale"]',
     "indexes a Python container"),
    (mixed_table, "return MIXED[int(x.argmax())]", "indexes a Python container"),
])
def test_what_no_program_picks_among_is_refused_at_the_users_line(fn, line, said):
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(_t([0.1, 0.9]))
    lines, first = inspect.getsourcelines(fn)
    lineno = first + next(k for k, text in enumerate(lines) if line in text)
    shown = assert_at_user_line(info.value, __file__, lineno)
    assert said in shown


def test_text_of_a_str_or_none_raises_when_the_run_picks_none():
    static = d2s.to_static(text_of_str_or_none)
    assert static(_t([0.9, 0.1])) == text_of_str_or_none(_t([0.9, 0.1])) == "KEEP"
    for fn in (text_of_str_or_none, static):  # (eager's error, on that run only)
        with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'upper'"):
            fn(_t([0.1, 0.9]))


def test_saving_a_picked_str_says_what_to_return_instead(tmp_path):
    static = d2s.to_static(picks_out_of_range, input_spec=[d2s.InputSpec([2], "float32")])
    with pytest.raises(TypeError, match="index into a tuple of the texts"):
        d2s.save(static, str(tmp_path / "m"))


def computed_values_picked(x):
    scores = [float(x[0]), float(x[1])]  # (Python numbers the program computes)
    halves = [x.numpy() * 0.5, x.numpy() * 2.0]  # (NumPy values)
    k = int(x.argmax())
    return scores[k], halves[k], [x, x * 2.0][k]


def _computed_reference(x):
    k = int(np.argmax(x))
    return float(x[k]), [x * 0.5, x * 2.0][k], [x, x * 2.0][k]


def test_computed_numbers_and_numpy_values_picked_keep_their_kind():
    inputs = [(_t([1.5, 0.0]),), (_t([0.0, 2.5]),)]
    static = d2s.to_static(computed_values_picked)
    for (x,) in inputs:
        got, want = static(x), computed_values_picked(x)
        assert (type(got[0]), type(got[1]), type(got[2])) == (float, np.ndarray, rt.Tensor)
        assert_same_leaves(got, want)
        _same_as_reference(list(want[:1]), list(_computed_reference(x.numpy())[:1]))
    assert len(static.program_cache) == 1
