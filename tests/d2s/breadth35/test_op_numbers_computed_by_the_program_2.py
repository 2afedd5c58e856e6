"""More ops given a Python number the converted code computes (`float(t)`, `t.item()`,
`int(t)`): an outlier clip at a quantile whose level a schedule's tensor gives
(`rt.quantile(x, schedule["q"].item())`), `F.normalize` / `rt.norm` with a p read from the
config tensor, hardsigmoid's slope and offset, softshrink's threshold, `rt.diag`'s
padding_value and a causal mask's diagonal (`rt.triu(s, int(offset))`). These raised
`TypeError: float() / bool() of a tensor computed by the converted code` from inside the
op; each now computes with the run's number (one program for every value), and the checks
eager makes on it (q in [0, 1], p > 0, threshold >= 0) raise eager's error when the program
runs. A number that decides the program's shape or axes (an axis, `bins`, `diff`'s n)
cannot come from a tensor: a ConversionError at the user's line names the argument and says
to pass a Python number (was a bare `bool()` error or one printing `Variable(%t0: i64[])`)."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 6)).astype("float32")
INTERNAL = ("Variable(%", "_retval", "<undefined")


class OutlierClip(nn.Layer):
    """Clip each row to the `q`-quantile of its magnitudes (q from a schedule's tensor)."""

    def __init__(self, interpolation="linear"):
        super().__init__()
        self.interpolation = interpolation

    def forward(self, x, schedule):
        level = schedule["q"].item()
        bound = rt.quantile(x.abs(), level, axis=-1, keepdim=True,
                            interpolation=self.interpolation)
        return rt.clip(x, -float(bound.max()), float(bound.max())), bound


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_at_a_level_the_program_reads_from_a_schedule(interpolation):
    model = OutlierClip(interpolation=interpolation)
    static = d2s.to_static(OutlierClip(interpolation=interpolation))
    for q in (0.9, 0.5, 0.0, 1.0, 0.3, 0.7):  # (0.5 of 6 items: a tie for "nearest")
        schedule = {"q": rt.to_tensor(np.float32(q)), "step": 3}
        want, got = model(rt.to_tensor(X), schedule), static(rt.to_tensor(X), schedule)
        ref = np.quantile(np.abs(X), float(np.float32(q)), axis=-1, keepdims=True, method=interpolation)
        np.testing.assert_allclose(want[1].numpy(), ref, rtol=1e-6)
        for w, g in zip(want, got, strict=True):
            assert g.dtype == w.dtype == rt.float32 and g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert len(static.forward.program_cache) == 1


def test_quantiles_of_a_list_with_a_computed_level_and_their_gradients():
    def lows_and_median(x, level):
        return rt.quantile(x, [float(level), 0.5], axis=0).sum()

    static = d2s.to_static(lows_and_median)
    x64 = RNG.normal(size=(5, 2))
    for q in (0.1, 0.35):
        grads = []
        for fn in (lows_and_median, static):
            x = rt.to_tensor(x64, stop_gradient=False)
            out = fn(x, rt.to_tensor(q))
            out.backward()
            grads.append((out.item(), x.grad.numpy()))
        np.testing.assert_allclose(grads[0][0], np.quantile(x64, [q, 0.5], axis=0).sum())
        np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-12)
        np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-12)
        fd = _finite_differences(lambda a: np.quantile(a, [q, 0.5], axis=0).sum(), x64)
        np.testing.assert_allclose(grads[1][1], fd, atol=1e-6)
    assert len(static.program_cache) == 1


def _finite_differences(f, x, h=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = h
        out[i] = (f(x + d) - f(x - d)) / (2 * h)
    return out


class Embed(nn.Layer):
    """Features normalized with a p-norm whose p the config holds as a tensor."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 4)

    def forward(self, x, cfg):
        feat = self.proj(x)
        return F.normalize(feat, p=float(cfg["p"]), axis=1), rt.norm(x, p=cfg["p"].item(), axis=0)


def _np_norm(a, p, axis, keepdims=False):
    return np.linalg.norm(a, ord=p, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("seed", [0])
def test_normalize_with_a_p_the_program_computes(seed):
    rt.seed(seed)
    model = Embed()
    static = d2s.to_static(model)
    for p in (2.0, 1.0, 3.0, float("inf"), 0.5, float("-inf")):
        cfg = {"p": rt.to_tensor(np.float64(p))}
        want, got = model(rt.to_tensor(X), cfg), static(rt.to_tensor(X), cfg)
        feat = X @ model.proj.weight.numpy() + model.proj.bias.numpy()
        n = np.maximum(_np_norm(feat, p, 1, keepdims=True), 1e-12)
        np.testing.assert_allclose(want[0].numpy(), feat / n, rtol=1e-5)
        np.testing.assert_allclose(want[1].numpy(), _np_norm(X, p, 0), rtol=1e-5)
        for w, g in zip(want, got, strict=True):
            assert g.dtype == w.dtype == rt.float32 and g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5)
    assert len(static.forward.program_cache) == 1


def test_norm_gradient_with_a_computed_p_against_finite_differences():
    def loss(x, p):
        return rt.norm(x, p=float(p), axis=1).sum()

    static = d2s.to_static(loss)
    x64 = RNG.normal(size=(2, 3))
    for p in (3.0, 1.5):
        grads = []
        for fn in (loss, static):
            x = rt.to_tensor(x64, stop_gradient=False)
            fn(x, rt.to_tensor(p)).backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9)
        fd = _finite_differences(lambda a: _np_norm(a, p, 1).sum(), x64)
        np.testing.assert_allclose(grads[1], fd, rtol=1e-5)
    assert len(static.program_cache) == 1


# name: (fn(x, t), numpy reference(x, t as a Python number), t values)
CASES = {
    "hardsigmoid": (lambda x, t: F.hardsigmoid(x, slope=float(t), offset=t.item() / 2),
                    lambda x, v: np.clip(x * np.float32(v) + np.float32(v / 2), 0, 1),
                    (0.2, 0.5, 1.0)),
    "softshrink": (lambda x, t: F.softshrink(x, threshold=float(t)),
                   lambda x, v: np.where(x > v, x - v, np.where(x < -v, x + v, 0)),
                   (0.0, 0.5, 1.2)),
    "causal_mask": (lambda x, t: rt.triu(rt.ones([3, 6]), diagonal=int(t)) * x[:1] + x.tril(int(t)),
                    lambda x, v: np.triu(np.ones([3, 6]), v) * x[:1] + np.tril(x, v),
                    (1, 0, -2, 7)),
    "diag_padding": (lambda x, t: rt.diag(x[0], offset=1, padding_value=float(t)),
                     lambda x, v: _np_diag(x[0], 1, v), (0.0, -1.5, 2.0)),
}


def _np_diag(v, offset, padding):
    out = np.full([len(v) + offset] * 2, padding, v.dtype)
    out[np.arange(len(v)), np.arange(len(v)) + offset] = v
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_static_and_numpy_agree_through_one_program(name):
    fn, ref, values = CASES[name]
    static = d2s.to_static(fn)
    for v in values:
        t = rt.to_tensor(np.int64(v) if isinstance(v, int) else np.float32(v))
        want, got = fn(rt.to_tensor(X), t), static(rt.to_tensor(X), t)
        assert got.dtype == want.dtype == rt.float32 and got.shape == want.shape
        np.testing.assert_allclose(want.numpy(), ref(X, v), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    assert len(static.program_cache) == 1


def test_the_checks_eager_makes_raise_when_the_program_runs():
    def clip_at(x, q):
        return rt.quantile(x, float(q))

    def pnorm(x, p):
        return F.normalize(x, p=p.item())

    def shrink(x, t):
        return F.softshrink(x, float(t))

    x = rt.to_tensor(X)
    for fn, bad, good, message in (
            (clip_at, 1.5, 0.5, r"quantile: q=1.5; every q must be in \[0, 1\]"),
            (pnorm, 0.0, 2.0, r"norm: p=0.0 is not supported"),
            (pnorm, -1.0, 2.0, r"norm: p=-1.0 is not supported"),
            (shrink, -0.5, 0.5, r"softshrink: threshold must be >= 0, got -0.5")):
        static = d2s.to_static(fn)
        for f in (fn, static):
            with pytest.raises(ValueError, match=message):
                f(x, rt.to_tensor(np.float64(bad)))
            f(x, rt.to_tensor(np.float64(good)))  # (the same program runs on a good value)
        assert len(static.program_cache) == 1


# numbers that decide the program's shape or axes: (fn(x, t), the argument named)
REFUSED = {
    "softmax_axis": (lambda x, t: F.softmax(x, axis=int(t)), "axis"),
    "flatten": (lambda x, t: x.reshape([1, 3, 6]).flatten(start_axis=int(t)), "start_axis"),
    "diff": (lambda x, t: rt.diff(x, n=int(t)), "n"),
    "histogram_bins": (lambda x, t: rt.histogram(x, bins=int(t)), "bins"),
    "glu": (lambda x, t: F.glu(x, axis=t.item()), "axis"),
    "concat": (lambda x, t: rt.concat([x, x], axis=int(t)), "axis"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_number_that_decides_shapes_is_refused_at_the_line_naming_it(name):
    fn, arg = REFUSED[name]
    fn(rt.to_tensor(X), rt.to_tensor(np.int64(1)))  # (eagerly: a Python int)
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(rt.to_tensor(X), rt.to_tensor(np.int64(1)))
    text = str(info.value) + "\n".join(getattr(info.value, "__notes__", []))
    assert f"{arg}" in str(info.value) and "Python" in str(info.value)
    assert "is a number the converted code computes" in str(info.value)
    assert "test_op_numbers_computed_by_the_program_2.py" in text
    assert not any(word in text for word in INTERNAL), text


def test_noise_with_a_std_the_program_computes_keeps_the_shape_asked():
    """`rt.normal(std=float(t), shape=...)`: a computed number was taken as a 0-d tensor std
    (the result 0-d float64, `shape` ignored: a wrong value, silently)."""
    def noisy(x, sigma):
        return x + rt.normal(mean=0.0, std=float(sigma) * 0.5, shape=x.shape)

    static = d2s.to_static(noisy)
    for s in (0.0, 1.0, 4.0):
        rt.seed(3)
        want = noisy(rt.to_tensor(X), rt.to_tensor(s))
        rt.seed(3)
        got = static(rt.to_tensor(X), rt.to_tensor(s))
        assert got.dtype == want.dtype == rt.float32 and got.shape == want.shape == [3, 6]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(want.numpy() != X, True)
    assert len(static.program_cache) == 1
