"""A Layer's property (`self.factor`) runs unconverted while tracing: the values its getter
reads (an enum attribute, a config field, a module global) are guarded, so changing one
between calls traces a new program instead of silently reusing the old one."""
import enum

import numpy as np

import d2s
import runtime as rt


class Mode(enum.Enum):
    TRAIN = 1
    SHARPEN = 2


BOOST = {"on": False}


class Scaled(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.mode = Mode.TRAIN

    @property
    def factor(self):
        f = self.scale * (3.0 if self.mode is Mode.SHARPEN else 1.0)
        return f + 10.0 if BOOST["on"] else f

    def forward(self, x):
        y = x * self.factor
        if y.sum() > 0:  # a tensor condition too: one program per guarded setting
            return y
        return -y


def test_values_read_by_a_property_getter_are_guarded():
    eager, static = Scaled(), d2s.to_static(Scaled())
    x = np.array([1.0, -0.5, 2.0], "float32")
    settings = [(2.0, Mode.TRAIN, False), (2.0, Mode.SHARPEN, False), (5.0, Mode.SHARPEN, False),
                (5.0, Mode.SHARPEN, True), (2.0, Mode.TRAIN, False)]
    try:
        for scale, mode, boost in settings:
            for m in (eager, static):
                m.scale, m.mode = scale, mode
            BOOST["on"] = boost
            factor = scale * (3.0 if mode is Mode.SHARPEN else 1.0) + (10.0 if boost else 0.0)
            for sign in (1.0, -1.0):  # both branches of the tensor if
                y = sign * x * factor
                want = y if y.sum() > 0 else -y
                for m in (eager, static):
                    np.testing.assert_allclose(m(rt.to_tensor(sign * x)).numpy(), want,
                                               rtol=1e-6)
    finally:
        BOOST["on"] = False
    assert len(static.forward.program_cache) == 4  # the last setting reuses the first


class Shifted(rt.nn.Layer):
    SCALE = 2.0          # class attributes, as model code keeps constants
    MODE = "plain"

    def forward(self, x):
        if self.MODE == "shift":
            x = x + 100.0
        return x * self.SCALE


def test_class_attributes_are_guarded_and_so_is_an_instance_shadowing_one():
    static = d2s.to_static(Shifted())
    x = np.array([1.0, 2.0], "float32")
    try:
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), x * 2.0)
        Shifted.SCALE = 3.0                       # the class changed
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), x * 3.0)
        static.MODE = "shift"                     # the instance shadows the class
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), (x + 100.0) * 3.0)
        del static.MODE
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), x * 3.0)
    finally:
        Shifted.SCALE = 2.0


def _double(v):
    return v * 2.0


ACT = rt.tanh
POST = _double


class Swappable(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)
        self.act = rt.tanh

    def forward(self, x):
        return POST(ACT(self.fc(x))) + self.act(x)


def test_swapped_functions_and_layers_are_guarded_by_identity():
    global ACT, POST
    rt.seed(0)
    static = d2s.to_static(Swappable())
    other = rt.nn.Linear(2, 2)
    x = rt.to_tensor(np.array([[0.5, -1.0]], "float32"))
    try:
        for act, post, own, fc in [(rt.tanh, _double, rt.tanh, static.fc),
                                   (rt.nn.functional.sigmoid, _double, rt.tanh, static.fc),
                                   (rt.nn.functional.sigmoid, lambda v: v * 3.0, rt.tanh,
                                    static.fc),
                                   (rt.nn.functional.sigmoid, _double,
                                    rt.nn.functional.relu, static.fc),
                                   (rt.tanh, _double, rt.tanh, other)]:
            ACT, POST = act, post
            static.act, first = own, static.fc
            static.fc = fc
            want = post(act(fc(x))) + own(x)
            np.testing.assert_allclose(static(x).numpy(), want.numpy(), rtol=1e-6)
            static.fc = first
    finally:
        ACT, POST = rt.tanh, _double


OFFSETS = [1.0, 2.0]
THRESHOLDS = [0.5, 100.0]


class Offsets(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.scales = [1.0]

    def forward(self, x):
        for s in OFFSETS:            # a Python loop over a global list: unrolled
            x = x + s
        for s in self.scales:
            x = x * s
        if x.sum() > THRESHOLDS[1]:  # an item at a constant index
            x = -x
        return x


def test_lists_read_by_converted_code_are_guarded_by_their_items():
    static = d2s.to_static(Offsets())
    x = np.array([1.0, 2.0], "float32")

    def ref():
        y = x + sum(OFFSETS)
        for s in static.scales:
            y = y * s
        return -y if y.sum() > THRESHOLDS[1] else y

    try:
        for change in (lambda: None, lambda: OFFSETS.append(10.0),
                       lambda: static.scales.append(2.0),
                       lambda: THRESHOLDS.__setitem__(1, 10.0)):
            change()
            np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), ref())
    finally:
        OFFSETS[:] = [1.0, 2.0]
        THRESHOLDS[:] = [0.5, 100.0]
