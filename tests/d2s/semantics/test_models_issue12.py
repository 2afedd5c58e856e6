"""Issue 12, realistic models (Paddle / PyTorch idioms) run eager vs static over inputs that
take different paths through one program: a `try` around a forward whose sub-Layers (inside
a `Sequential`) assert, a buffer a failing sub-Layer would have updated, a LayerList with an
early tuple return, attention with shape arithmetic on unknown (`None`) dims, a frozen
teacher under `no_grad`, and `stop_gradient` set under a tensor condition (a clear error)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import InputSpec
from d2s.errors import ConversionError

F = rt.nn.functional


def _close(a, b):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(np.asarray(y.numpy() if hasattr(y, "numpy") else y),
                                   np.asarray(x.numpy() if hasattr(x, "numpy") else x),
                                   rtol=1e-5, atol=1e-6)


class Guard(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)

    def forward(self, x):
        h = self.fc(x)
        assert h.abs().max() < 5, "activations too large"
        return h


class Guarded(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = rt.nn.Sequential(Guard(), rt.nn.ReLU(), Guard())

    def forward(self, x):
        try:
            y = self.body(x)
        except AssertionError:
            y = -rt.ones([x.shape[0], 2])
        return y


def test_try_around_a_sequential_of_asserting_layers():
    rt.seed(0)
    net = Guarded()
    static = d2s.to_static(net)
    for scale in (1.0, 30.0, 0.5):
        x = rt.ones([1, 2]) * scale
        _close(net.forward(x), static(x))
    assert len(static.forward.program_cache) == 1


class Counter(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", rt.zeros([1]))

    def forward(self, x):
        assert x.sum() < 10, "too large"
        self.count = self.count + 1  # eager: not reached when the assert fails
        return x


class UsesCounter(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.counter = Counter()

    def forward(self, x):
        try:
            y = self.counter(x)
        except AssertionError:
            y = x * 0
        return y, self.counter.count


def test_a_failing_sub_layer_leaves_its_buffer_as_eager():
    eager, converted = UsesCounter(), UsesCounter()
    static = d2s.to_static(converted)
    for scale in (1.0, 20.0, 1.0):
        x = rt.ones([2]) * scale
        _close(eager(x), static(x))
    np.testing.assert_allclose(converted.counter.count.numpy(), [2.0])


class Blocks(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = rt.nn.LayerList([rt.nn.Linear(2, 2) for _ in range(3)])

    def forward(self, x):
        h = x
        for i, layer in enumerate(self.layers):
            h = layer(h)
            if h.sum() > 1.0:
                return h, i
        return h, -1


def test_layer_list_early_tuple_return():
    rt.seed(4)
    net = Blocks()
    static = d2s.to_static(net)
    for scale in (1.0, -3.0, 5.0):
        x = rt.ones([1, 2]) * scale
        _close(net.forward(x), static(x))


class Attention(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.q, self.k = rt.nn.Linear(4, 4), rt.nn.Linear(4, 4)

    def forward(self, x):
        b, t, d = x.shape
        s = rt.matmul(self.q(x), self.k(x).transpose([0, 2, 1])) / (d ** 0.5)
        w = F.softmax(s / t * x.shape[1], axis=-1)
        return rt.matmul(w, x).reshape([b * t, d]), x.size // d


def test_shape_arithmetic_with_unknown_dims():
    rt.seed(0)
    net = Attention()
    static = d2s.to_static(net, input_spec=[InputSpec([None, None, 4], "float32")])
    for shape in ([2, 3, 4], [1, 5, 4]):
        x = rt.randn(shape)
        _close(net.forward(x), static(x))
    assert len(static.forward.program_cache) == 1


class Distill(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.teacher, self.student = rt.nn.Linear(3, 3), rt.nn.Linear(3, 3)

    def forward(self, x):
        with rt.no_grad():
            target = F.softmax(self.teacher(x), axis=-1)
        log_p = F.log_softmax(self.student(x), axis=-1)
        if x.mean() > 0:
            return -(target * log_p).sum(-1).mean()
        return (log_p * log_p).mean()


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_frozen_teacher_gets_no_gradient(sign):
    rt.seed(1)
    eager = Distill()
    rt.seed(1)
    converted = Distill()
    static = d2s.to_static(converted)
    x = rt.randn([4, 3]) * sign + sign
    eager(x).backward()
    static(x).backward()
    assert eager.teacher.weight.grad is None and converted.teacher.weight.grad is None
    np.testing.assert_allclose(converted.student.weight.grad.numpy(),
                               eager.student.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_stop_gradient_under_a_tensor_condition_is_a_clear_error():
    def f(x):
        h = x * 2
        if x.sum() > 0:
            h.stop_gradient = True
        return (h * 3).sum()
    with pytest.raises(ConversionError, match=r"h = h.detach\(\)") as info:
        d2s.to_static(f)(rt.ones([2]))
    assert "test_models_issue12.py" in str(info.value)
