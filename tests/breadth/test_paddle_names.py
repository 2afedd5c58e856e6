"""Names Paddle programs use (issue 22 item 2, issue 21 item 6, issue 15 items 4 and 6):
each in eager mode, converted, and compared with NumPy."""
import inspect
import pathlib
import re
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.ops.array_number_kinds import STRINGS
import runtime.nn.functional as F
from runtime import static

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_versions_match_the_distribution():
    text = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', text, re.M).group(1)
    assert rt.__version__ == d2s.__version__ == version


def test_item_takes_paddle_and_numpy_indices():
    x = rt.to_tensor(np.arange(6).reshape(2, 3))
    assert x.item(0, 1) == 1 and x.item(1, 2) == 5
    assert x.item(4) == 4  # one index into the flattened tensor
    assert rt.to_tensor([2.5]).item() == 2.5
    assert x.item(rt.to_tensor(1), 0) == 3
    with pytest.raises(IndexError):
        x.item(2, 0)
    with pytest.raises(ValueError, match="only one-element tensors"):
        x.item()


def test_tensor_array_functions_under_paddle_paths_are_the_static_ones():
    for name in ("create_array", "array_write", "array_read", "array_length"):
        assert getattr(rt.tensor, name) is getattr(static, name)


def test_tensor_arrays_with_one_element_int64_index_eager_and_converted():
    def f(x, n):
        arr = rt.tensor.create_array("float32")
        i = rt.zeros([1], "int64")
        arr = rt.tensor.array_write(x, i, arr)
        for _ in range(n):
            x = x * 2.0
            i = rt.increment(i)
            rt.tensor.array_write(x, i, arr)  # the array is written in place too
        last = rt.tensor.array_read(arr, i)
        first = rt.tensor.array_read(arr, rt.zeros([1], "int64"))
        return last - first, rt.tensor.array_length(arr), static.array_stack(arr)

    x0 = np.array([1.0, -2.0], "float32")
    want = [x0 * 2 ** k for k in range(4)]
    for fn in (f, d2s.to_static(f)):
        diff, length, stacked = fn(rt.to_tensor(x0), 3)
        np.testing.assert_allclose(diff.numpy(), want[-1] - want[0])
        assert int(length) == 4
        np.testing.assert_allclose(stacked.numpy(), np.stack(want))


def test_converted_int_float_bool_hold_python_numbers():
    # Paddle's converted code returns int32 / float32 tensors; here the call returns the
    # Python int, float and bool eager code gives (docs/paddle_compat.md, docs/d2s.md)
    @d2s.to_static
    def f(x):
        return int(x), float(x), bool(x)

    for value, dtype in ((2.7, "float64"), (3, "int64"), (1.5, "float16")):
        i, fl, b = f(rt.to_tensor(np.array([value], dtype)))
        assert (type(i), type(fl), type(b)) == (int, float, bool)
        assert (i, fl, b) == (int(value), float(value), True)
    x = rt.to_tensor([2.7])
    assert (int(x), float(x), bool(x)) == (2, pytest.approx(2.7), True)  # eager: Python values


def test_increment_counter_in_a_converted_loop():
    def f(x, limit):
        step = rt.zeros([1], "int64")
        while step < limit:
            x = x + rt.cast(step, "float32")
            step = rt.increment(step, 2)
        return x, step

    for limit in (0, 3, 6):  # no, two and three iterations of one program
        want_x, want_step = 1.0, 0
        while want_step < limit:
            want_x, want_step = want_x + want_step, want_step + 2
        for fn in (f, d2s.to_static(f)):
            x, step = fn(rt.ones([1]), rt.to_tensor([limit]))
            assert step.dtype == rt.int64 and step.tolist() == [want_step]
            np.testing.assert_allclose(x.numpy(), [want_x])


def test_add_n_and_softsign_in_a_converted_layer_with_gradients():
    class Mix(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.branches = rt.nn.LayerList([rt.nn.Linear(3, 2) for _ in range(3)])

        def forward(self, x):
            return F.softsign(rt.add_n([b(x) for b in self.branches])).sum()

    rt.seed(3)
    net = Mix()
    x0 = np.random.default_rng(0).standard_normal((4, 3)).astype("float32")
    w = sum(b.weight.numpy() for b in net.branches)
    bias = sum(b.bias.numpy() for b in net.branches)
    h = x0 @ w + bias
    want = (h / (1 + np.abs(h))).sum()
    grads = []
    for fn in (net, d2s.to_static(Mix())):
        if fn is not net:
            fn.set_state_dict(net.state_dict())
        x = rt.to_tensor(x0, stop_gradient=False)
        out = fn(x)
        out.backward()
        np.testing.assert_allclose(float(out), want, rtol=1e-5)
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)
    np.testing.assert_allclose(grads[0], (1 / (1 + np.abs(h)) ** 2) @ w.T, rtol=1e-5)


def test_global_var_counter_and_accuracy_in_converted_code():
    seen = static.create_global_var([1], 0.0, "float32", persistable=True, name="seen")

    @d2s.to_static
    def evaluate(scores, label):
        acc = rt.metric.accuracy(scores, label, k=1)
        rt.assign(seen + 1.0, seen)
        return acc, static.accuracy(scores, label, k=2)

    rng = np.random.default_rng(1)
    for step in range(3):
        scores = rng.permutation(12).reshape(4, 3).astype("float32")
        label = rng.integers(0, 3, (4, 1))
        top = np.argsort(-scores, axis=1)
        acc1, acc2 = evaluate(rt.to_tensor(scores), rt.to_tensor(label))
        np.testing.assert_allclose(float(acc1), np.mean(top[:, 0] == label[:, 0]))
        np.testing.assert_allclose(float(acc2), np.mean((top[:, :2] == label).any(1)))
        assert seen.tolist() == [step + 1.0]


def test_accuracy_fills_correct_and_total():
    scores = rt.to_tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    correct, total = rt.zeros([1], "int32"), rt.zeros([1], "int32")
    acc = rt.metric.accuracy(scores, rt.to_tensor([1, 1, 1]), correct=correct, total=total)
    assert (int(correct), int(total)) == (2, 3)
    np.testing.assert_allclose(float(acc), 2 / 3, rtol=1e-6)


# ---- every public function of rt.static works eagerly ----------------------------------------

def _warned():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        static.py_warn("eager", RuntimeWarning, "m.py", 3, "m")
    return [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def _guarded():
    with static.program_guard(static.Program()):
        v = static.data("d2", [3])
    return f"{v.name}: {v.type_str()}"


def _static_calls(tmp_path):
    x = rt.to_tensor([1.0, 2.0], stop_gradient=False)
    w = rt.Parameter(np.array([3.0, -1.0], "float32"))
    main = static.Program()
    with static.program_guard(main):
        d = static.data("d", [None, 2], "float32")
        out = d * 2.0
    prefix = str(tmp_path / "model")
    return {
        "Assert": (lambda: static.Assert(rt.to_tensor(True)), None),
        "Print": (lambda: static.Print(x, message="eager"), lambda r: r.tolist() == [1.0, 2.0]),
        "accuracy": (lambda: static.accuracy(rt.to_tensor([[0.2, 0.8]]), rt.to_tensor([[1]])),
                     lambda r: float(r) == 1.0),
        "append_backward": (lambda: static.append_backward(rt.sum(x * w)),
                            lambda r: [p for p, _ in r] == [w] and r[0][1].tolist() == [1, 2]),
        "array_concat": (lambda: static.array_concat([x, x]), lambda r: r.shape == [4]),
        "array_length": (lambda: static.array_length([x, x]), lambda r: int(r) == 2),
        "array_read": (lambda: static.array_read([x, x * 2], rt.to_tensor([1])),
                       lambda r: r.tolist() == [2.0, 4.0]),
        "array_stack": (lambda: static.array_stack([x]), lambda r: r.shape == [1, 2]),
        "array_write": (lambda: static.array_write(x, rt.to_tensor([0])),
                        lambda r: len(r) == 1 and r[0] is x),
        "create_array": (lambda: static.create_array("float32", [x]), lambda r: r == [x]),
        "create_global_var": (lambda: static.create_global_var([2], 4.0, "int64"),
                              lambda r: r.tolist() == [4, 4] and r.dtype == rt.int64),
        "data": (lambda: static.data("eager_d", [None, 3]), lambda r: r.shape == [-1, 3]),
        "default_main_program": (static.default_main_program,
                                 lambda r: isinstance(r, static.Program)),
        "default_startup_program": (static.default_startup_program,
                                    lambda r: isinstance(r, static.Program)),
        "disable_static": (static.disable_static, lambda r: static.in_dynamic_mode()),
        "enable_static": (lambda: (static.enable_static(), static.disable_static()), None),
        "gradients": (lambda: static.gradients([rt.sum(x * x)], [x]),
                      lambda r: r[0].tolist() == [2.0, 4.0]),
        "in_dynamic_mode": (static.in_dynamic_mode, lambda r: r is True),
        "program_guard": (_guarded, lambda r: r == "d2: f32[3]"),
        "py_print": (lambda: static.py_print("eager"), None),
        "py_format": (lambda: STRINGS[int(static.py_format(["n=", rt.to_tensor(3), "!"]))],
                      lambda r: r == f"n={rt.to_tensor(3)}!"),  # (eager's f-string)
        "py_warn": (_warned, lambda r: r == [("eager", RuntimeWarning, "m.py", 3)]),
        "py_log": (lambda: static.py_log("d2s.eager", 10, ["%s", 1]), None),
        "save_inference_model": (lambda: static.save_inference_model(
            prefix, [d], [out], program=main), None),
        "load_inference_model": (lambda: (static.save_inference_model(
            prefix, [d], [out], program=main), static.load_inference_model(prefix))[1],
            lambda r: r[1] == ["d"]),
    }


def test_every_public_function_of_rt_static_works_eagerly(tmp_path, capsys):
    names = set(vars(static)) | set(static._LAZY)  # (some load on first access)
    public = {n for n in names
              if not n.startswith("_") and inspect.isfunction(getattr(static, n))}
    calls = _static_calls(tmp_path)
    assert public == set(calls), f"untested: {sorted(public - set(calls))}"
    for name, (call, check) in calls.items():
        result = call()
        assert check is None or check(result), name
    with pytest.raises(AssertionError, match="condition is False"):
        static.Assert(rt.to_tensor(False))
    for name in ("cond", "switch_case", "while_loop"):
        assert inspect.isfunction(getattr(static.nn, name))
    x = rt.to_tensor([1.0, 2.0])
    assert static.nn.cond(x.sum() > 0, lambda: x + 1, lambda: x - 1).tolist() == [2.0, 3.0]
    assert static.nn.switch_case(rt.to_tensor(1), {0: lambda: x, 1: lambda: x * 2}
                                 ).tolist() == [2.0, 4.0]
    (i,) = static.nn.while_loop(lambda i: i < 3, lambda i: [i + 1], [rt.zeros([1])])
    assert i.tolist() == [3.0]
