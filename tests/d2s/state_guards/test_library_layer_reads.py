"""A library Layer's Python settings are guarded where its `forward` can read them
(`d2s/pyct/self_reads.py`): `Flatten.start_axis` or `MaxPool2D.stride` changed between calls
trace a new program; `Linear.in_features`, read only by `extra_repr`, is not checked on every
call. A subclass whose helper, reached from the library `forward`, reads a new setting has
that setting guarded; a class whose methods use `self` as a whole has every setting guarded."""
import functools

import numpy as np

import d2s
import runtime as rt
from d2s.guards import _forward_reads
from d2s.pyct.self_reads import attribute_reads


class Base:
    def forward(self, x):
        return self.helper(x) * self.scale

    def helper(self, x):
        return x + self.shift

    def extra_repr(self):
        return f"{self.size}"


class Child(Base):
    def helper(self, x):
        return super().helper(x) - self.offset

    @property
    def twice(self):
        return self.scale * 2


class Whole(Base):
    def helper(self, x):
        return describe(self, x)  # `self` as a whole: anything may be read


class Aliased:
    def forward(self, x):
        return self.run(x)

    def helper(self, x):
        return x + self.shift

    run = helper  # the same function under another name


class Borrowed:
    forward = Base.helper  # a function defined elsewhere: its reads are not in this body


class Patched:
    def forward(self, x):
        return x


def _patched_forward(self, x):
    return x * self.anything


Patched.forward = _patched_forward


def describe(obj, x):
    return x


def only_when_training(method):
    @functools.wraps(method)
    def wrapper(self, x):
        return method(self, x) if self.training else x
    return wrapper


class Decorated:
    @only_when_training  # reads `training` in a wrapper defined elsewhere
    def forward(self, x):
        return x * self.scale


class PropertyReader:
    def forward(self, x):
        return x * self.factor

    @property
    def factor(self):
        return self.scale * 2

    @factor.setter
    def factor(self, value):
        self.scale = value / 2


def test_decorated_methods_and_properties():
    assert attribute_reads((Decorated,)) is None
    assert attribute_reads((PropertyReader,)) == {"forward", "factor", "scale"}


def test_reads_follow_the_methods_forward_reaches():
    assert attribute_reads((Base,)) == {"forward", "helper", "scale", "shift"}
    # a subclass's helper calls its base's through super(): both count, `size` does not
    assert attribute_reads((Child, Base)) == {"forward", "helper", "scale", "shift",
                                              "offset"}
    assert attribute_reads((Whole, Base)) is None
    assert attribute_reads((Aliased,)) == {"forward", "run", "helper", "shift"}
    assert attribute_reads((Borrowed,)) is None
    assert attribute_reads((Patched,)) is None


def test_library_layers():
    linear = _forward_reads(rt.nn.Linear)
    assert {"weight", "bias"} <= linear and not {"in_features", "training"} & linear
    assert {"p", "training", "mode", "axis"} <= _forward_reads(rt.nn.Dropout)
    assert {"start_axis", "stop_axis"} <= _forward_reads(rt.nn.Flatten)


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.pool = rt.nn.MaxPool2D(kernel_size=2, stride=2)
        self.flat = rt.nn.Flatten()
        self.fc = rt.nn.Linear(4, 3)

    def forward(self, x):
        return self.flat(self.pool(x))


def _numpy_pool(x, stride):
    n, c, h, w = x.shape
    rows = range(0, h - 1, stride)
    cols = range(0, w - 1, stride)
    return np.array([[[[x[i, j, r:r + 2, s:s + 2].max() for s in cols] for r in rows]
                      for j in range(c)] for i in range(n)], dtype=x.dtype)


def test_settings_forward_reads_are_guarded_and_others_are_not():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype("float32")
    eager, static = Net(), d2s.to_static(Net())
    for stride, start, in_features in [(2, 1, 4), (1, 1, 4), (1, 0, 4), (2, 1, 9), (2, 1, 4)]:
        want = _numpy_pool(x, stride)
        want = want.reshape(want.shape[0], -1) if start == 1 else want.reshape(-1)
        for m in (eager, static):
            m.pool.stride = stride
            m.flat.start_axis = start
            m.fc.in_features = in_features  # not read by Linear.forward (nor called here)
            np.testing.assert_array_equal(m(rt.to_tensor(x)).numpy(), want)
    # one program per (stride, start_axis): in_features changes nothing
    assert len(static.forward.program_cache) == 3


class ScaledLinear(rt.nn.Linear):
    """A user subclass that keeps the library forward but changes a helper it reaches."""

    def __init__(self):
        super().__init__(2, 2)
        self.gain = 1.0

    def _gained(self, y):
        return y * self.gain


class UsesGain(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = ScaledLinear()

    def forward(self, x):
        return self.lin._gained(self.lin(x))


def test_a_user_subclass_setting_is_guarded():
    static = d2s.to_static(UsesGain())
    x = rt.to_tensor(np.ones((1, 2), "float32"))
    base = static(x).numpy()
    for gain in (2.0, 3.0):
        static.lin.gain = gain
        np.testing.assert_allclose(static(x).numpy(), base * gain, rtol=1e-6)


def test_a_layer_made_by_a_factory_has_every_setting_guarded():
    # `ReLU` is built by a factory (no class source): nothing is known, everything is guarded
    assert _forward_reads(rt.nn.ReLU) is None
