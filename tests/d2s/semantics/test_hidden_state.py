"""Random draws and clock reads in converted code (`d2s/hidden_state.py`).

Eager code draws new numbers on every call; a draw made while the program is built would be
frozen into it. Each such call is a `HiddenStateError` at the user's line; the runtime's own
random ops (drawn when the program runs) are the way to write it, and give eager's numbers for
the same `rt.seed`.
"""
import random
import time
from random import uniform as draw_uniform

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn


def _t(a):
    return rt.to_tensor(np.asarray(a, "float32"))


class LayerDropEncoder(nn.Layer):
    """LayerDrop as Hugging Face / fairseq write it (`random.uniform` per layer)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(3, 3) for _ in range(3)])
        self.layerdrop = 0.5

    def forward(self, x):
        for layer in self.layers:
            dropout_probability = random.uniform(0, 1)
            if self.training and dropout_probability < self.layerdrop:
                continue
            x = layer(x)
        return x


class TensorLayerDrop(LayerDropEncoder):
    def forward(self, x):
        for layer in self.layers:
            if self.training and rt.rand([1]) < self.layerdrop:
                continue
            x = layer(x)
        return x


def _refused(fn, *args, match):
    with pytest.raises(d2s.HiddenStateError, match=match) as info:
        fn(*args)
    return "\n".join(getattr(info.value, "__notes__", []))


def test_python_random_layerdrop_is_refused_at_the_user_line():
    notes = _refused(d2s.to_static(LayerDropEncoder()), _t(np.ones((2, 3))),
                     match=r"`random\.uniform\(\)` draws from random state .*`rt\.rand")
    assert "dropout_probability = random.uniform(0, 1)" in notes
    assert "test_hidden_state.py" in notes


def test_runtime_draws_give_eagers_numbers_and_change_per_call():
    m = TensorLayerDrop()
    static = d2s.to_static(m)
    x = _t(np.ones((2, 3)))
    rt.seed(3)
    eager = [m.forward(x).numpy() for _ in range(6)]
    rt.seed(3)
    converted = [static(x).numpy() for _ in range(6)]
    for a, b in zip(eager, converted, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert len({a.tobytes() for a in converted}) > 1  # layers dropped differently per call
    m.eval()  # no draw decides anything: every layer runs
    ref = x.numpy()
    for layer in m.layers:
        ref = ref @ layer.weight.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(static(x).numpy(), ref, rtol=1e-5)


def test_numpy_global_draws_aliases_and_clocks_are_refused():
    def noisy(x):
        noise = np.random.randn(*x.shape).astype("float32")
        return x + rt.to_tensor(noise)

    def aliased(x):
        return x * draw_uniform(0.5, 1.5)

    def timed(x):
        start = time.perf_counter()
        y = x * 2
        return y, time.perf_counter() - start

    def seeds(x):
        np.random.seed(0)
        return x + 1

    x = _t([1.0, 2.0])
    _refused(d2s.to_static(noisy), x, match=r"`np\.random\.randn\(\)`")
    _refused(d2s.to_static(aliased), x, match=r"`random\.uniform\(\)`")
    _refused(d2s.to_static(timed), x, match=r"`time\.perf_counter\(\)` reads the clock")
    _refused(d2s.to_static(seeds), x, match=r"`np\.random\.seed\(\)`")


class NoisyHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.rng = np.random.default_rng(0)  # lives across calls: draws differ per call

    def forward(self, x):
        return self.fc(x) + rt.to_tensor(self.rng.normal(size=2).astype("float32"))


def test_generators_living_across_calls_or_unseeded_are_refused():
    def unseeded(x):
        rng = np.random.default_rng()
        return x + float(rng.random())

    _refused(d2s.to_static(NoisyHead()), _t([[1.0, 2.0]]), match=r"`Generator\.normal\(\)`")
    _refused(d2s.to_static(unseeded), _t([1.0]), match="created without a seed")


def test_a_generator_seeded_in_the_call_converts():
    """Seeded inside the function, eager draws the same numbers on every call too."""
    def jitter(x, k):
        rng = np.random.default_rng(k)
        r = random.Random(7)
        scale = rng.uniform(0.5, 1.5, size=2).astype("float32")
        return x * rt.to_tensor(scale) + r.random()

    static = d2s.to_static(jitter)
    for k in (1, 2):
        x = _t([1.0, -2.0])
        ref = np.array([1.0, -2.0], "float32") * np.random.default_rng(k).uniform(
            0.5, 1.5, size=2).astype("float32") + random.Random(7).random()
        for _ in range(2):
            np.testing.assert_allclose(static(x, k).numpy(), jitter(x, k).numpy(), rtol=1e-6)
            np.testing.assert_allclose(static(x, k).numpy(), ref, rtol=1e-6)


def test_not_to_static_helpers_draw_when_the_program_is_built_as_documented():
    drawn = []

    @d2s.not_to_static
    def init_scale():
        drawn.append(random.random())
        return drawn[-1]

    @d2s.to_static
    def f(x):
        return x * init_scale()

    first = f(_t([2.0])).numpy()  # the helper ran once, when the program was built
    assert len(drawn) == 1
    np.testing.assert_allclose(first, [2.0 * drawn[0]], rtol=1e-6)


def _scaled_by(hook):
    def scale(x, use_hook):
        if use_hook:  # (a Python decision: with no hook the call below is never reached)
            return hook(x)
        return x * 2.0
    return scale


def test_a_callable_that_is_none_on_a_path_not_taken_converts():
    """The hidden-state check looks at every callable the code names; a closure variable
    holding None (a hook not given) is no `secrets` function (it raised AttributeError)."""
    plain = _scaled_by(None)
    static = d2s.to_static(plain)
    x = _t([1.0, -2.0])
    np.testing.assert_array_equal(static(x, False).numpy(), [2.0, -4.0])
    np.testing.assert_array_equal(plain(x, False).numpy(), [2.0, -4.0])
    hooked = d2s.to_static(_scaled_by(lambda v: v - 1.0))
    np.testing.assert_array_equal(hooked(x, True).numpy(), [0.0, -3.0])
