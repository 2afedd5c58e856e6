"""A Python number the converted code computes (`float(x.abs().max())`, `t.item()`) given to
an op as one of its number arguments: a histogram observer's range (corpus case
wild8_efficient.histogram_percentile_clip), a leaky slope, hardtanh bounds, a softplus beta,
`scale`'s factor, `isclose`'s tolerances, nan_to_num's replacements, celu's alpha and
label_smooth's epsilon taken from a schedule. Eagerly each is a Python float; in a program
its value is known only when the program runs. These raised `TypeError: bool() of a tensor
computed by the converted code` (histogram: from its own range check) or `float() of a
tensor ...` from inside the op; now each op computes with the run-time number, and the
checks eager makes on it (histogram's max >= min, celu's alpha != 0, label_smooth's epsilon
in [0, 1]) raise eager's error when the program runs."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F

X = np.array([[0.5, -1.0, 2.0], [3.0, 0.1, -0.2]], "float32")


def _np_softplus(x, beta, threshold=20.0):
    bx = x * beta
    return np.where(bx > threshold, x, np.logaddexp(0, bx) / beta).astype(np.float32)


def _np_celu(x, a):
    return (np.maximum(x, 0) + np.minimum(0, a * (np.exp(x / a) - 1))).astype(np.float32)


# name: (fn(x, t), numpy reference(x, t as a Python float))
CASES = {
    "leaky_relu": (lambda x, t: F.leaky_relu(x, float(t) / 10),
                   lambda x, v: np.where(x > 0, x, x * (v / 10))),
    "hardtanh": (lambda x, t: F.hardtanh(x, -float(t), float(t) / 2),
                 lambda x, v: np.clip(x, -v, v / 2)),
    "softplus": (lambda x, t: F.softplus(x, beta=float(t)), _np_softplus),
    "scale": (lambda x, t: rt.scale(x, scale=float(t), bias=1.0),
              lambda x, v: x * v + 1.0),
    "scale_before": (lambda x, t: rt.scale(x, scale=2.0, bias=t.item(), bias_after_scale=False),
                     lambda x, v: (x + v) * 2.0),
    "nan_to_num": (lambda x, t: rt.nan_to_num(x / 0.0, nan=-float(t), posinf=float(t)),
                   lambda x, v: np.nan_to_num(x / np.float32(0.0), nan=-v, posinf=v,
                                              neginf=np.finfo(np.float32).min)),
    "celu": (lambda x, t: F.celu(x, alpha=float(t)), _np_celu),
    "label_smooth": (lambda x, t: F.label_smooth(F.softmax(x), epsilon=float(t) / 10),
                     lambda x, v: (1 - v / 10) * np.exp(x) / np.exp(x).sum(-1, keepdims=True)
                     + v / 10 / x.shape[-1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("t", [3.0, 0.5, 1.0])
def test_eager_static_and_numpy_agree(name, t):
    fn, ref = CASES[name]
    static = d2s.to_static(fn)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = ref(X, t)
        want = fn(rt.to_tensor(X), rt.to_tensor(np.float32(t)))
        got = static(rt.to_tensor(X), rt.to_tensor(np.float32(t)))
    assert got.dtype == want.dtype == rt.float32 and got.shape == want.shape
    np.testing.assert_allclose(want.numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_one_program_serves_every_number():
    static = d2s.to_static(CASES["softplus"][0])
    for t in (0.5, 3.0, 30.0):
        got = static(rt.to_tensor(X), rt.to_tensor(np.float32(t)))
        np.testing.assert_allclose(got.numpy(), _np_softplus(X, t), rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def test_gradients_flow_to_x_as_eagerly():
    def loss(x, t):
        s = float(t)
        return (F.leaky_relu(x, s / 10) * 2 + F.softplus(x, beta=s) + F.celu(x, alpha=s)
                + F.hardtanh(x, -s, s / 2) + rt.scale(x, scale=s)).sum()

    static = d2s.to_static(loss)
    grads = []
    for fn in (loss, static):
        x = rt.to_tensor(X, stop_gradient=False)
        t = rt.to_tensor(np.float32(3.0), stop_gradient=False)
        fn(x, t).backward()
        grads.append((x.grad.numpy(), t.grad))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-5)
    assert grads[0][1] is None and grads[1][1] is None  # (a Python number: no gradient path)


def observer_clip(x, bins=4, pct=0.75):
    """A histogram observer: the range is the data's own maximum, taken as a Python float."""
    amax = x.abs().max()
    hist = rt.histogram(x.abs(), bins=bins, min=0.0, max=float(amax))
    cdf = rt.cumsum(hist.astype("float32"), axis=0) / hist.sum().astype("float32")
    for i in range(bins):
        if cdf[i] >= pct:
            return hist, amax / bins * (i + 1)
    return hist, amax


def _np_observer(x, bins=4, pct=0.75):
    amax = np.abs(x).max()
    hist = np.histogram(np.abs(x), bins=bins, range=(0, float(amax)))[0]
    cdf = np.cumsum(hist) / hist.sum()
    for i in range(bins):
        if cdf[i] >= pct:
            return hist, np.float32(amax / bins * (i + 1))
    return hist, amax


@pytest.mark.parametrize("values", [[0.1, 0.2, 0.3, 4.0], [1.0, 1.0, 1.0, 1.0],
                                    [0.1, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]])
def test_a_histogram_over_a_range_the_program_computes(values):
    static = d2s.to_static(observer_clip)
    x = np.array(values, "float32")
    want, got = observer_clip(rt.to_tensor(x)), static(rt.to_tensor(x))
    expected = _np_observer(x)
    for w, g, e in zip(want, got, expected, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(w.numpy(), e, rtol=1e-6)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert len(static.program_cache) == 1


def test_a_histogram_range_given_as_tensors_eagerly_and_its_checks():
    x = rt.to_tensor([1.0, 2.0, 1.0, 4.0])
    assert rt.histogram(x, bins=3, min=rt.to_tensor(1.0), max=4).tolist() == [2, 1, 1]
    with pytest.raises(ValueError, match=r"max \(0.5\) must not be less than min \(1.0\)"):
        rt.histogram(x, bins=3, min=rt.to_tensor(1.0), max=rt.to_tensor(0.5))
    with pytest.raises(TypeError, match="max must be a number or a 0-d tensor"):
        rt.histogram(x, bins=3, min=0.0, max=rt.to_tensor([1.0, 2.0]))


def test_the_checks_eager_makes_raise_when_the_program_runs():
    def hist(x, lo):
        return rt.histogram(x, bins=2, min=float(lo), max=1.0)

    def celu(x, a):
        return F.celu(x, alpha=float(a))

    def smooth(x, e):
        return F.label_smooth(x, epsilon=float(e))

    x = rt.to_tensor(X)
    for fn, bad, good, error, message in (
            (hist, 2.0, 0.0, ValueError, r"max \(1.0\) must not be less than min \(2.0\)"),
            (celu, 0.0, 1.0, ValueError, "celu: alpha must not be 0"),
            (smooth, 1.5, 0.2, ValueError, r"epsilon must be in \[0, 1\], got 1.5")):
        static = d2s.to_static(fn)
        for f in (fn, static):
            with pytest.raises(error, match=message):
                f(x, rt.to_tensor(np.float32(bad)))
            f(x, rt.to_tensor(np.float32(good)))  # (the same program runs on a good value)
        assert len(static.program_cache) == 1


@pytest.mark.parametrize("tol", [0.5, 1e-3])
def test_isclose_with_computed_tolerances(tol):
    def close(x, y, t):
        return rt.isclose(x, y, rtol=0.0, atol=float(t), equal_nan=True)

    x = np.array([1.0, np.inf, np.nan, 2.0, -np.inf, 1.0], "float32")
    y = np.array([1.2, np.inf, np.nan, 2.0001, np.inf, np.nan], "float32")
    expected = np.isclose(x, y, rtol=0.0, atol=tol, equal_nan=True)
    for fn in (close, d2s.to_static(close)):
        got = fn(rt.to_tensor(x), rt.to_tensor(y), rt.to_tensor(np.float32(tol)))
        assert got.dtype == rt.bool
        np.testing.assert_array_equal(got.numpy(), expected)
