"""User-style converted functions with tensor control flow, exported to ONNX: `if` on a tensor
(If), `while` on a tensor (Loop), lists grown in a loop (sequences), switch_case (nested
Ifs); one exported model per function, inputs that take different paths, each result
checked against the executor and a NumPy reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx_harness import check_parity, op_types

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.static import InputSpec


def _t(a, dtype="float32"):
    return rt.to_tensor(np.asarray(a, dtype=dtype))


class Gate(rt.nn.Layer):
    """`self.` state, a helper method, a tensor `if` whose branches use parameters."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        self.scale = 2.0

    def _mix(self, x):
        return F.relu(self.fc(x)) * self.scale

    def forward(self, x):
        if x.mean() > 0:
            out = self._mix(x)
        else:
            out = x - self.scale
        return out


def test_tensor_if_becomes_if():
    rt.seed(0)
    layer = Gate()
    pos, neg = _t(np.ones((2, 3))), _t(-np.ones((4, 3)))
    proto, (a, b) = check_parity(d2s.to_static(layer), [InputSpec([None, 3])], (pos,), (neg,))
    assert "If" in op_types(proto)
    w, bias = layer.fc.weight.numpy(), layer.fc.bias.numpy()
    np.testing.assert_allclose(a[0], np.maximum(np.ones((2, 3)) @ w + bias, 0) * 2, rtol=1e-6)
    np.testing.assert_allclose(b[0], -np.ones((4, 3)) - 2)


@d2s.to_static
def collatz_steps(x):
    """A tensor while loop with a tensor if inside: how many steps each run needs."""
    steps = rt.zeros([1], "int64")
    while x > 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    return steps


def _collatz(n):
    k = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return k


def test_tensor_while_with_if_inside_becomes_loop():
    inputs = [(_t([n], "int64"),) for n in (1, 6, 27)]
    proto, outs = check_parity(collatz_steps, [InputSpec([1], "int64")], *inputs)
    assert {"Loop", "If"} <= op_types(proto)
    assert [int(o[0][0]) for o in outs] == [_collatz(1), _collatz(6), _collatz(27)]


@d2s.to_static
def running_sums(x, n):
    """A list grown in a tensor loop (a tensor array -> an ONNX sequence), then stacked."""
    sums = []
    total = rt.zeros_like(x[0])
    i = rt.zeros([], "int64")
    while i < n:
        total = total + x[i]
        sums.append(total)
        i += 1
    return rt.stack(sums)


def test_list_in_loop_becomes_sequence():
    x = np.arange(12, dtype="float32").reshape(4, 3)
    a = (_t(x), _t([2], "int64"))
    b = (_t(x), _t([4], "int64"))
    proto, outs = check_parity(running_sums, [InputSpec([4, 3]), InputSpec([1], "int64")],
                               a, b)
    assert {"Loop", "SequenceInsert", "ConcatFromSequence"} <= op_types(proto)
    np.testing.assert_allclose(outs[0][0], np.cumsum(x, 0)[:2])
    np.testing.assert_allclose(outs[1][0], np.cumsum(x, 0))


def test_array_overwrite_by_index():
    """array_write at an existing index replaces the element (If: erase + insert)."""
    def build(x):
        arr = rt.static.create_array("float32")
        zero, one = rt.zeros([], "int64"), rt.ones([], "int64")
        arr = rt.static.array_write(x, zero, arr)
        arr = rt.static.array_write(x * 2, one, arr)
        arr = rt.static.array_write(x * 10, zero, arr)  # overwrite element 0
        return rt.static.array_read(arr, zero) + rt.static.array_read(arr, one)

    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [-1], "float32")
        y = build(x)
    from d2s.onnx.exporter import program_to_onnx
    from onnx_harness import session
    proto = program_to_onnx(main, ["x"], [y.name])
    xs = np.array([1.0, -2.0], "float32")
    got = session(proto).run(None, {"x": xs})[0]
    want = rt.static.Executor().run(main, feed={"x": xs}, fetch_list=[y])[0]
    np.testing.assert_allclose(got, np.asarray(want))
    np.testing.assert_allclose(got, xs * 12)


def test_switch_case_becomes_nested_if():
    main = rt.static.Program()
    with rt.static.program_guard(main):
        i = rt.static.data("i", [1], "int64")
        x = rt.static.data("x", [-1], "float32")
        y = rt.static.nn.switch_case(i, {1: lambda: x + 1, 3: lambda: x * 3},
                                     default=lambda: x - 5)
    from d2s.onnx.exporter import program_to_onnx
    from onnx_harness import session
    sess = session(program_to_onnx(main, ["i", "x"], [y.name]))
    xs = np.array([1.0, 2.0], "float32")
    for k, want in ((1, xs + 1), (3, xs * 3), (7, xs - 5)):
        got = sess.run(None, {"i": np.array([k]), "x": xs})[0]
        np.testing.assert_allclose(got, want)


def test_indexing_and_shape_arithmetic():
    @d2s.to_static
    def f(x):
        n = x.shape[0]
        head = x[:, 1:]
        return head[::-1] * n, x[-1], x[None, 0, ::2]

    a = np.arange(12, dtype="float32").reshape(3, 4)
    b = np.arange(20, dtype="float32").reshape(5, 4)
    _, outs = check_parity(f, [InputSpec([None, 4])], (_t(a),), (_t(b),))
    for x, got in ((a, outs[0]), (b, outs[1])):
        np.testing.assert_allclose(got[0], x[:, 1:][::-1] * len(x))
        np.testing.assert_allclose(got[1], x[-1])
        np.testing.assert_allclose(got[2], x[None, 0, ::2])


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_python_style_floor_divide_and_remainder(dtype):
    @d2s.to_static
    def f(x, y):
        return x // y, x % y, x // 3, x % -4

    xs = np.array([7, -7, 6, -1, 0], dtype)
    ys = np.array([2, 2, -4, 3, -5], dtype)
    _, (outs,) = check_parity(f, [InputSpec([5], dtype), InputSpec([5], dtype)],
                              (_t(xs, dtype), _t(ys, dtype)))
    for got, want in zip(outs, (xs // ys, xs % ys, xs // 3, xs % -4), strict=True):
        np.testing.assert_allclose(got, want)


def test_unmapped_op_names_the_op_and_the_user_line():
    import d2s.onnx

    @d2s.to_static
    def positives(x):
        y = x * 2
        return rt.masked_select(y, y > 0)   # the line the error must name

    with pytest.raises(d2s.onnx.OnnxExportError) as info:
        d2s.onnx.export(positives, "unused", input_spec=[InputSpec([None])])
    text = str(info.value)
    assert "op `masked_select`" in text and "test_control_flow.py" in text
    assert "return rt.masked_select(y, y > 0)   # the line the error must name" in text


def test_training_dropout_is_refused_with_a_reason():
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [3], "float32")
        y = rt.nn.functional.dropout(x, 0.5, training=True)  # a random op
    from d2s.onnx import OnnxExportError
    from d2s.onnx.exporter import program_to_onnx
    with pytest.raises(OnnxExportError, match="op `dropout`: .*eval mode"):
        program_to_onnx(main, ["x"], [y.name])
