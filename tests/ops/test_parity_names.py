"""Paddle names that ported scripts call (session 24's probe), in model code as scripts write
it: eager vs converted vs NumPy, with inputs that take different branches of one program,
gradients against finite differences, Paddle's keywords, and the Python values of `dim()` and
`is_floating_point()` (the same in converted code as eagerly)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt


class PairScorer(rt.nn.Layer):
    """Scores pairs of rows: an inner-product gram matrix, its diagonal and trace, a blend
    towards the rows' smoothed differences, and robust statistics of the scores."""

    def __init__(self):
        super().__init__()
        self.mix = 0.25

    def forward(self, h, valid):
        gram = rt.inner(h, h)  # [n, n]
        self_sim = gram.diagonal()
        spread = gram.trace() / h.shape[0]
        steps = rt.diff(h, axis=-1, prepend=h[:, :1])
        blended = rt.lerp(h, steps, self.mix)
        if blended.amax() > 1.0:  # a tensor branch: rescale large activations
            blended = blended / blended.amax(axis=-1, keepdim=True).abs().clip(min=1.0)
        masked = rt.where(valid, blended, rt.full_like(blended, float("nan")))
        row_mean = masked.nanmean(axis=-1)
        counts = valid.count_nonzero(axis=-1)
        clean = rt.nan_to_num(masked, nan=0.0)
        return self_sim, spread, row_mean, counts, clean, rt.amin(clean, axis=0)


def _numpy_pairs(h, valid):
    gram = np.inner(h, h)
    steps = np.diff(h, axis=-1, prepend=h[:, :1])
    blended = h + 0.25 * (steps - h)
    if blended.max() > 1.0:
        blended = blended / np.clip(np.abs(blended.max(axis=-1, keepdims=True)), 1.0, None)
    masked = np.where(valid, blended, np.nan)
    clean = np.nan_to_num(masked, nan=0.0)
    return (np.diagonal(gram), np.trace(gram) / h.shape[0], np.nanmean(masked, axis=-1),
            np.count_nonzero(valid, axis=-1), clean, clean.min(axis=0))


CASES = [  # the first takes the rescaling branch, the second does not
    (np.array([[0.5, 2.5, -0.3, 0.8], [1.2, -0.7, 0.1, 3.0], [0.2, 0.4, -1.1, 0.9]]),
     np.array([[True, True, False, True], [True, False, False, True],
               [True, True, True, True]])),
    (np.array([[0.1, -0.5, -0.3, 0.2], [-0.2, -0.7, 0.1, 0.3], [0.2, 0.4, -1.1, 0.05]]),
     np.array([[False, True, True, True], [True, True, True, False],
               [True, False, True, True]])),
]


@pytest.mark.parametrize("convert", [False, True])
def test_pair_scores_match_numpy_eager_and_converted(convert):
    model = PairScorer()
    if convert:
        model = d2s.to_static(model)
    for h, valid in CASES:
        got = model(rt.to_tensor(h), rt.to_tensor(valid))
        want = _numpy_pairs(h, valid)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == ("int64" if w.dtype.kind == "i" else "float64")
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)
    if convert:
        assert len(model.forward.program_cache) == 1


def _pairs_loss(h, valid):
    self_sim, spread, row_mean, _, clean, low = PairScorer()(h, valid)
    return (self_sim * rt.arange(3, dtype="float64")).sum() + spread + row_mean.sum() * 2.0 \
        + (clean * clean).sum() + low.sum()


def _pairs_loss_np(h, valid):
    self_sim, spread, row_mean, _, clean, low = _numpy_pairs(h, valid)
    return float((self_sim * np.arange(3)).sum() + spread + 2 * row_mean.sum()
                 + (clean * clean).sum() + low.sum())


@pytest.mark.parametrize("case", [0, 1])
def test_pair_scores_gradient_matches_finite_differences(case):
    h0, valid = CASES[case]
    want = numeric_grad(lambda a: _pairs_loss_np(a, valid), h0)
    for fn in (_pairs_loss, d2s.to_static(_pairs_loss)):
        h = rt.to_tensor(h0, stop_gradient=False)
        fn(h, rt.to_tensor(valid)).backward()
        np.testing.assert_allclose(h.grad.numpy(), want, rtol=1e-6, atol=1e-8)


def expand_tokens(frames, durations, scatter_to, extra):
    """A duration model's length regulator: each frame repeated `durations[i]` times (the
    output length is known only when the program runs), and per-frame corrections added
    back at the positions `scatter_to`."""
    expanded = rt.repeat_interleave(frames, durations, axis=0)
    corrected = frames.index_add(scatter_to, 0, extra)
    return expanded, rt.shape(expanded)[0], corrected


@pytest.mark.parametrize("convert", [False, True])
def test_repeat_interleave_with_counts_known_at_run_time(convert):
    fn = d2s.to_static(expand_tokens) if convert else expand_tokens
    frames0 = np.arange(6.0).reshape(3, 2)
    extra0 = np.array([[1.0, 2.0], [3.0, 4.0]])
    for durations in ([2, 0, 3], [1, 1, 1], [0, 4, 0]):  # three lengths, one program
        frames = rt.to_tensor(frames0, stop_gradient=False)
        extra = rt.to_tensor(extra0, stop_gradient=False)
        expanded, length, corrected = fn(frames, rt.to_tensor(durations),
                                         rt.to_tensor([2, 2]), extra)
        want = np.repeat(frames0, durations, axis=0)
        np.testing.assert_array_equal(expanded.numpy(), want)
        assert int(length) == len(want)
        want_corrected = frames0.copy()
        want_corrected[2] += extra0.sum(axis=0)
        np.testing.assert_array_equal(corrected.numpy(), want_corrected)
        ((expanded * 2.0).sum() + (corrected * corrected).sum()).backward()
        want_grad = 2.0 * np.array(durations, float)[:, None] + 2 * want_corrected
        np.testing.assert_allclose(frames.grad.numpy(), want_grad * np.ones((3, 2)))
        np.testing.assert_allclose(extra.grad.numpy(), 2 * np.stack([want_corrected[2]] * 2))
    if convert:
        assert len(fn.program_cache) == 1


def to_float_features(x):
    """Scripts branch on a tensor's rank and dtype: Python values, so each input signature
    gets its own program and the branch is decided when it is traced."""
    if not x.is_floating_point():
        x = x.astype("float32")
    if x.dim() == 3:
        x = x.mean(axis=1)
    return x * 2.0, x.ndimension(), rt.is_floating_point(x), rt.is_integer(x)


@pytest.mark.parametrize("convert", [False, True])
def test_rank_and_dtype_queries_are_python_values(convert):
    fn = d2s.to_static(to_float_features) if convert else to_float_features
    for x0 in (np.arange(6).reshape(2, 3), np.arange(24.0).reshape(2, 3, 4).astype("float32")):
        out, rank, is_float, is_int = fn(rt.to_tensor(x0))
        ref = x0.astype("float32")
        ref = ref.mean(axis=1) if ref.ndim == 3 else ref
        np.testing.assert_allclose(out.numpy(), ref * 2.0)
        assert out.dtype == "float32"
        assert type(rank) is int and rank == 2
        assert is_float is True and is_int is False
    x = rt.to_tensor([1, 2], dtype="int32")
    assert (x.dim(), x.is_floating_point(), x.is_integer(), x.is_complex()) == (1, False, True,
                                                                                 False)
    assert rt.is_complex(rt.complex(rt.ones([2]), rt.zeros([2])))
    assert not rt.to_tensor([True]).is_integer()


PADDLE_SIGNATURES = {  # Paddle 3.x's parameter names, in order
    "diagonal": "x offset axis1 axis2 name", "trace": "x offset axis1 axis2 name",
    "amax": "x axis keepdim name", "amin": "x axis keepdim name",
    "count_nonzero": "x axis keepdim name", "nansum": "x axis dtype keepdim name",
    "nanmean": "x axis keepdim name", "nan_to_num": "x nan posinf neginf name",
    "inner": "x y name", "lerp": "x y weight name", "diff": "x n axis prepend append name",
    "repeat_interleave": "x repeats axis name", "index_add": "x index axis value name",
    "is_floating_point": "x", "is_complex": "x", "is_integer": "x",
    "logcumsumexp": "x axis dtype name", "cummax": "x axis dtype name",
    "cummin": "x axis dtype name", "histogram": "input bins min max name",
    "tan": "x name", "atan2": "x y name", "logit": "x eps name", "isclose":
    "x y rtol atol equal_nan name", "mm": "input mat2 name", "mv": "x vec name",
    "cross": "x y axis name", "cholesky": "x upper name",
}


@pytest.mark.parametrize("name", sorted(PADDLE_SIGNATURES))
def test_paddle_parameter_names_and_methods(name):
    params = list(inspect.signature(getattr(rt, name)).parameters)
    assert params == PADDLE_SIGNATURES[name].split()
    assert getattr(rt.Tensor, name) is getattr(rt, name)
    assert getattr(rt.static.Variable, name) is getattr(rt, name)


def test_vander_and_linalg_parameter_names():
    assert list(inspect.signature(rt.vander).parameters) == ["x", "n", "increasing", "name"]
    for name, params in {"det": "x name", "slogdet": "x name", "solve": "x y left name",
                         "cholesky": "x upper name", "matrix_power": "x n name",
                         "multi_dot": "x name", "cross": "x y axis name"}.items():
        assert list(inspect.signature(getattr(rt.linalg, name)).parameters) == params.split()


def test_defaults_follow_paddle():
    x = rt.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert rt.diagonal(x).tolist() == [1.0, 5.0] and rt.trace(x).item() == 6.0
    assert rt.diff(x).tolist() == [[1.0, 1.0], [1.0, 1.0]]  # axis=-1
    assert rt.repeat_interleave(x, 2).shape == [12]  # axis=None flattens
    assert rt.amax(x).shape == [] and rt.count_nonzero(x).dtype == "int64"
    assert rt.nan_to_num(rt.to_tensor([float("inf")], dtype="float16")).item() == 65504.0
    assert rt.nan_to_num(rt.to_tensor([3, 4])).tolist() == [3, 4]


def box_geometry(boxes, heading):
    """Rotated-box features as detection heads compute them: the angle of each box's
    diagonal, a wrapped heading difference, a smooth size code and a logit-clipped score."""
    dx, dy = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    angle = rt.atan2(dy, dx)
    delta = rt.asin(rt.sin(angle - heading).clip(-0.999, 0.999))
    size = rt.asinh(rt.hypot(dx, dy)) + rt.expm1(-dx.abs()).tanh()
    if size.mean() > 1.0:  # a tensor branch: big boxes get a coarser code
        size = rt.trunc(size * 4.0) / 4.0 + rt.frac(size * 4.0).detach() / 4.0
    score = rt.logit(rt.nn.functional.sigmoid(angle), eps=0.05)
    return rt.rad2deg(delta), size, score, rt.isclose(angle, heading, atol=0.3)


def _numpy_geometry(boxes, heading):
    dx, dy = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    angle = np.arctan2(dy, dx)
    delta = np.arcsin(np.clip(np.sin(angle - heading), -0.999, 0.999))
    size = np.arcsinh(np.hypot(dx, dy)) + np.tanh(np.expm1(-np.abs(dx)))
    if size.mean() > 1.0:
        size = np.trunc(size * 4) / 4 + (size * 4 - np.trunc(size * 4)) / 4
    p = np.clip(1 / (1 + np.exp(-angle)), 0.05, 0.95)
    return np.rad2deg(delta), size, np.log(p / (1 - p)), np.isclose(angle, heading, atol=0.3)


GEOMETRY = [  # large boxes (the coarse branch), then small ones
    (np.array([[0.0, 0.0, 3.0, 4.0], [1.0, 2.0, -2.0, 5.0], [0.5, 0.5, 2.5, -3.0]]),
     np.array([0.9, 2.0, -1.0])),
    (np.array([[0.0, 0.0, 0.3, 0.4], [1.0, 2.0, 0.8, 2.5], [0.5, 0.5, 0.6, 0.1]]),
     np.array([0.1, 1.9, -0.5])),
]


@pytest.mark.parametrize("convert", [False, True])
def test_box_geometry_matches_numpy_eager_and_converted(convert):
    fn = d2s.to_static(box_geometry) if convert else box_geometry
    for boxes, heading in GEOMETRY:
        got = fn(rt.to_tensor(boxes), rt.to_tensor(heading))
        want = _numpy_geometry(boxes, heading)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == ("bool" if w.dtype == bool else "float64")
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)
    if convert:
        assert len(fn.program_cache) == 1


@pytest.mark.parametrize("case", [0, 1])
def test_box_geometry_gradient_matches_finite_differences(case):
    boxes0, heading = GEOMETRY[case]

    def loss(b):
        delta, size, score, _ = box_geometry(b, rt.to_tensor(heading))
        return (delta * 0.01).sum() + (size * size).sum() + score.sum()

    def loss_np(b):
        delta, size, score, _ = _numpy_geometry(b, heading)
        return float((delta * 0.01).sum() + (size * size).sum() + score.sum())

    want = numeric_grad(loss_np, boxes0)
    if case == 0:  # frac(...).detach(): its part of the finite differences is not a gradient
        want = numeric_grad(lambda b: _coarse_loss_np(b, heading), boxes0)
    for fn in (loss, d2s.to_static(loss)):
        b = rt.to_tensor(boxes0, stop_gradient=False)
        fn(b).backward()
        np.testing.assert_allclose(b.grad.numpy(), want, rtol=1e-6, atol=1e-7)


def _coarse_loss_np(b, heading):
    """The coarse branch with the detached fraction held at its value for `GEOMETRY[0]`."""
    delta, _, score, _ = _numpy_geometry(b, heading)
    dx, dy = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    raw = np.arcsinh(np.hypot(dx, dy)) + np.tanh(np.expm1(-np.abs(dx)))
    b0 = GEOMETRY[0][0]
    dx0, dy0 = b0[:, 2] - b0[:, 0], b0[:, 3] - b0[:, 1]
    raw0 = (np.arcsinh(np.hypot(dx0, dy0)) + np.tanh(np.expm1(-np.abs(dx0)))) * 4
    size = np.trunc(raw0) / 4 + (raw0 - np.trunc(raw0)) / 4 + 0 * raw
    return float((delta * 0.01).sum() + (size * size).sum() + score.sum())


def running_scores(scores):
    """A decoder's bookkeeping: the best score so far and where it came from, the running
    log-partition, a histogram of the scores for logging, and polynomial length features."""
    best, where = rt.cummax(scores, axis=-1)
    log_z = rt.logcumsumexp(scores, axis=-1)
    if log_z[:, -1].mean() > 3.0:  # a tensor branch: normalise confident rows
        log_z = log_z - log_z[:, -1:]
    hist = rt.histogram(scores, bins=4, min=-2, max=2)
    features = rt.vander(scores[:, 0], 3, increasing=True)
    return best, where, log_z, hist, features, scores.cummin(axis=0)[0]


def _numpy_running(s):
    best, where = np.maximum.accumulate(s, axis=-1), np.zeros(s.shape, np.int64)
    for i in range(1, s.shape[1]):
        where[:, i] = np.where(s[:, i] >= best[:, i - 1], i, where[:, i - 1])
    log_z = np.logaddexp.accumulate(s, axis=-1)
    if log_z[:, -1].mean() > 3.0:
        log_z = log_z - log_z[:, -1:]
    return (best, where, log_z, np.histogram(s, 4, (-2, 2))[0],
            np.vander(s[:, 0], 3, increasing=True), np.minimum.accumulate(s, axis=0))


SCORES = [np.array([[0.5, 1.5, 0.2, 3.1], [1.0, -0.5, 4.2, 2.0]]),
          np.array([[-0.5, -1.5, 0.2, -0.1], [0.1, -0.5, -1.2, 0.3]])]


@pytest.mark.parametrize("convert", [False, True])
def test_running_scores_match_numpy_eager_and_converted(convert):
    fn = d2s.to_static(running_scores) if convert else running_scores
    for s in SCORES:  # the first normalises (log_z's mean > 3), the second does not
        got = fn(rt.to_tensor(s))
        want = _numpy_running(s)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == ("int64" if w.dtype.kind == "i" else "float64")
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)
    if convert:
        assert len(fn.program_cache) == 1


@pytest.mark.parametrize("case", [0, 1])
def test_running_scores_gradient_matches_finite_differences(case):
    weights = np.arange(8.0).reshape(2, 4) / 8.0

    def loss(s):
        best, _, log_z, _, feats, low = running_scores(s)
        return (best * rt.to_tensor(weights)).sum() + (log_z * rt.to_tensor(weights)).sum() \
            + feats.sum() + low.sum()

    def loss_np(s):
        best, _, log_z, _, feats, low = _numpy_running(s)
        return float((best * weights).sum() + (log_z * weights).sum() + feats.sum() + low.sum())

    want = numeric_grad(loss_np, SCORES[case])
    for fn in (loss, d2s.to_static(loss)):
        s = rt.to_tensor(SCORES[case], stop_gradient=False)
        fn(s).backward()
        np.testing.assert_allclose(s.grad.numpy(), want, rtol=1e-6, atol=1e-8)


def whole_steps(x):
    """`float(...)` of a tensor is a Python float eagerly: its `is_integer()` asks whether the
    value is whole, not whether a dtype is an integer type (Paddle's `Tensor.is_integer`)."""
    steps = float(x.sum())
    return steps.is_integer(), x.is_integer(), rt.is_integer(x.astype("int32"))


@pytest.mark.parametrize("convert", [False, True])
def test_is_integer_of_a_python_float_is_the_floats_question(convert):
    fn = d2s.to_static(whole_steps) if convert else whole_steps
    for values, whole in (([1.5, 2.5], True), ([0.25, 2.0], False)):  # one program, both
        got = fn(rt.to_tensor(values))
        assert got == (whole, False, True)
        assert all(type(v) is bool for v in got)
    if convert:
        assert len(fn.program_cache) == 1


def test_is_integer_of_a_number_or_a_tensor_is_refused_clearly():
    def pick(x):
        b = 3.0
        if x.mean() > 0:
            b = x.mean() * 2
        return b.is_integer()

    with pytest.raises(d2s.ConversionError, match=r"'\.is_integer' .* of a value that is a "
                                                  r"Python float on some runs and a tensor "
                                                  r"on others"):
        d2s.to_static(pick)(rt.to_tensor([1.0, 2.0]))
