"""Dict keys that exist on some paths only, set in nested blocks (issue 35): a tensor `if`
inside another, a graph loop inside a tensor `if`, an `if` inside an `if` inside a graph
loop, a loop inside a loop, and a key a tensor `if` set before a graph loop that the loop
may set again. Each block passes the key's presence flag out (a `cond` output, a loop
variable), so `in`, `.get`, `len()`, reads (eager's `KeyError` where the key is absent) and
the returned dict follow eager code: eager vs static vs a NumPy reference over inputs that
take every path through one program, and the gradient of a parameter the values flow from."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line


def nested_ifs(x):
    d = {"a": x}
    if x.sum() > 0:
        if x.mean() > 1:
            d["b"] = x * 2
        else:
            d["c"] = x * 3
    else:
        d["b"] = x - 1
    return d.get("b", x * 0.0), d.get("c", x * 0.0), "b" in d, "c" in d, len(d)


def nested_ifs_ref(x):
    d = {"a": x}
    if x.sum() > 0:
        if x.mean() > 1:
            d["b"] = x * 2
        else:
            d["c"] = x * 3
    else:
        d["b"] = x - 1
    return d.get("b", x * 0.0), d.get("c", x * 0.0), "b" in d, "c" in d, len(d)


def loop_inside_if(x, n):
    d = {}
    if x.sum() > 0:
        for i in range(n):
            d["k"] = x * i
    return "k" in d, d.get("k", x * 0.0), len(d)


def loop_inside_if_ref(x, n):
    d = {}
    if x.sum() > 0:
        for i in range(n):
            d["k"] = x * i
    return "k" in d, d.get("k", x * 0.0), len(d)


def ifs_inside_a_loop(x, n):
    d = {}
    for i in range(n):
        if x[0] > i:  # noqa: SIM102  (nested on purpose)
            if x[1] > i:
                d["k"] = x + i
    return "k" in d, d.get("k", x * 0.0), len(d)


def ifs_inside_a_loop_ref(x, n):
    d = {}
    for i in range(n):
        if x[0] > i:  # noqa: SIM102  (nested on purpose)
            if x[1] > i:
                d["k"] = x + i
    return "k" in d, d.get("k", x * 0.0), len(d)


def flagged_then_loop(x, n):
    d = {}
    if x[0] > 0:
        d["k"] = x
    for i in range(n):
        if x[1] > i:
            d["k"] = x * i
    return "k" in d, d.get("k", x * 0.0), len(d)


def flagged_then_loop_ref(x, n):
    d = {}
    if x[0] > 0:
        d["k"] = x
    for i in range(n):
        if x[1] > i:
            d["k"] = x * i
    return "k" in d, d.get("k", x * 0.0), len(d)


def loop_in_loop(x, n):
    d = {}
    for i in range(n):
        for j in range(n - i):
            d["k"] = x * j + i
    return "k" in d, d.get("k", x * 0.0), len(d)


def loop_in_loop_ref(x, n):
    d = {}
    for i in range(n):
        for j in range(n - i):
            d["k"] = x * j + i
    return "k" in d, d.get("k", x * 0.0), len(d)


XS = [[1.0, 2.0], [-1.0, 2.0], [1.0, -2.0], [0.5, 0.25], [3.0, 0.5], [-1.0, -1.0],
      [2.5, 2.5]]
CASES = [(nested_ifs, nested_ifs_ref, (None,)), (loop_inside_if, loop_inside_if_ref, (0, 1, 3)),
         (ifs_inside_a_loop, ifs_inside_a_loop_ref, (0, 1, 3)),
         (flagged_then_loop, flagged_then_loop_ref, (0, 1, 3)),
         (loop_in_loop, loop_in_loop_ref, (0, 1, 3))]


def observed(out):
    """What a user sees: values, and the Python type of each leaf."""
    return [(type(v).__name__, np.asarray(v.numpy() if rt.is_tensor(v) else v).tolist())
            for v in out]


def reference(ref, xv, n):
    """The NumPy reference: the same function over float64 arrays and Python ints, with
    eager's types (a tensor for each array)."""
    out = ref(xv.astype("float64"), n) if n is not None else ref(xv.astype("float64"))
    return [("Tensor", v.tolist()) if isinstance(v, np.ndarray) else (type(v).__name__, v)
            for v in out]


@pytest.mark.parametrize("fn, ref, trips", CASES, ids=[c[0].__name__ for c in CASES])
def test_eager_static_and_numpy_agree_on_every_path(fn, ref, trips):
    static = d2s.to_static(fn)
    paths = set()
    for xv in XS:
        xv = np.asarray(xv, "float32")
        for n in trips:
            args = (rt.to_tensor(xv),) + (() if n is None else (rt.to_tensor(n),))
            want = reference(ref, xv, n)
            paths.add(str([w[1] for w in want if w[0] == "bool"]))
            for f in (fn, static):
                got = observed(f(*args))
                assert [g[0] for g in got] == [w[0] for w in want], (f, xv, n)
                for g, w in zip(got, want):
                    np.testing.assert_allclose(g[1], w[1], rtol=1e-6, err_msg=str((f, xv, n)))
    assert len(paths) > 1  # (inputs that take different paths)
    assert len(static.program_cache) == 1


def read_after_nested(x):
    d = {}
    if x[0] > 0:  # noqa: SIM102  (nested on purpose)
        if x[1] > 0:
            d["k"] = x * 2.0
    return d["k"] + 1.0


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_a_read_where_no_nested_branch_set_the_key_is_eagers_key_error():
    static = d2s.to_static(read_after_nested)
    np.testing.assert_allclose(static(rt.to_tensor([1.0, 2.0])).numpy(), [3.0, 5.0])
    for xv in ([-1.0, 2.0], [1.0, -2.0]):
        with pytest.raises(KeyError):
            read_after_nested(rt.to_tensor(xv))
        with pytest.raises(KeyError) as info:
            static(rt.to_tensor(xv))
        assert info.value.args == ("k",)
        assert_at_user_line(info.value, __file__, line_of(read_after_nested, 'return d["k"]'))
    assert len(static.program_cache) == 1


class Gate(rt.nn.Layer):
    """A gated residual whose branch outputs are collected in a dict under keys set in
    nested tensor ifs and a graph loop."""

    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([2], default_initializer=rt.nn.initializer.Constant(0.5))

    def forward(self, x, n):
        outs = {}
        if x.sum() > 0:
            if (x * self.w).mean() > 0.5:
                outs["big"] = x * self.w * 2.0
            for i in range(n):
                outs["step"] = x * self.w + i
        y = x * self.w
        for v in outs.values():
            y = y + v
        return y, "big" in outs, "step" in outs


def gate_ref(xv, w, n):
    y = xv * w
    if xv.sum() > 0:
        if (xv * w).mean() > 0.5:
            y = y + xv * w * 2.0
        if n:
            y = y + xv * w + (n - 1)
    return y


def test_values_under_flagged_keys_flow_into_a_loss_and_its_gradient():
    for xv, n in (([1.0, 2.0], 2), ([0.25, 0.5], 0), ([-1.0, 0.5], 3), ([0.25, 0.5], 1)):
        xv = np.asarray(xv, "float32")
        grads = []
        for m in (Gate(), d2s.to_static(Gate())):
            y, big, step = m(rt.to_tensor(xv), rt.to_tensor(n))
            np.testing.assert_allclose(y.numpy(), gate_ref(xv.astype("float64"), 0.5, n),
                                       rtol=1e-6)
            assert (big, step) == (xv.sum() > 0 and (xv * 0.5).mean() > 0.5,
                                   bool(xv.sum() > 0 and n > 0))
            (y * y).sum().backward()
            grads.append(m.w.grad.numpy())

        def f(w, xv=xv, n=n):
            return float((gate_ref(xv.astype("float64"), w, n) ** 2).sum())
        want = numeric_grad(f, np.full(2, 0.5))
        for g in grads:
            np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def ordered(x):
    d = {}
    if x.sum() > 0:
        d["b"] = x
        d["c"] = x * 2.0
    else:
        d["c"] = x * 3.0
    out = x * 0.0
    for v in d.values():                # the order of the keys shows in the result
        out = out * 10.0 + v
    return out, len(d)


def test_a_loop_over_the_dict_sees_the_keys_in_eagers_order():
    static = d2s.to_static(ordered)
    for xv, keys in (([1.0, 2.0], ["b", "c"]), ([-1.0, -2.0], ["c"])):
        want = np.float32(xv) * (12.0 if keys == ["b", "c"] else 3.0)
        for fn in (ordered, static):
            out, n = fn(rt.to_tensor(xv))
            np.testing.assert_allclose(out.numpy(), want)
            assert n == len(keys)
    assert len(static.program_cache) == 1


def orders_differ(x):
    d = {}
    if x.sum() > 0:
        d["x"] = x
        d["y"] = x * 2.0
    else:
        d["y"] = x * 3.0
        d["x"] = x - 1.0
    return d


def orders_differ_on_a_flagged_path(x):
    d = {}
    if x.sum() > 0:
        d["b"] = x
        d["c"] = x * 2.0
    else:
        d["c"] = x * 3.0
        if x.mean() < -5.0:
            d["b"] = x
    return d["c"]


@pytest.mark.parametrize("fn", [orders_differ, orders_differ_on_a_flagged_path])
def test_keys_set_in_another_order_per_branch_follow_the_run(fn):
    """The returned dict has the order of the branch taken, a value read by name the run's
    (refused at the `if` before; `test_dict_key_orders_per_branch` reads the order)."""
    static = d2s.to_static(fn)
    for v in ([1.0, 2.0], [-1.0, -2.0], [1.0, 2.0]):
        want, got = fn(rt.to_tensor(v)), static(rt.to_tensor(v))
        if isinstance(want, dict):
            assert list(got) == list(want)
            want, got = list(want.values()), list(got.values())
        for g, w in zip(want if isinstance(want, list) else [want],
                        got if isinstance(got, list) else [got], strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy())


def keys_listed(x):
    d = {"a": x}
    if x.sum() > 0:
        d["b"] = x
    return list(d)


def test_list_of_such_a_dict_follows_the_run():
    """`list(d)` of a dict with a key on some paths: the keys present on this run (converted
    code once returned every key, 'b' too where eager has none; then it was refused; session
    23: a list the run sizes, `flagged_key_lists`)."""
    static = d2s.to_static(keys_listed)
    for v, want in (([-1.0], ["a"]), ([1.0], ["a", "b"])):
        assert keys_listed(rt.to_tensor(v)) == want
        assert static(rt.to_tensor(v)) == want
    assert len(static.program_cache) == 1


def set_again(x):
    d = {}
    if x.sum() > 0:
        d["c"] = x * 2.0                # 'c' on one path ...
    d["b"] = x
    d["c"] = x * 3.0                    # ... then on every path: at the end where it was not
    out = x * 0.0
    for v in d.values():
        out = out * 10.0 + v
    return out


def test_a_loop_over_a_dict_whose_order_the_run_decides_follows_the_run():
    """Refused until issue 35 (`key_ranks`: the moment each key was first stored)."""
    static = d2s.to_static(set_again)
    for xv, want in (([1.0], 3.0 * 10 + 1.0), ([-1.0], -1.0 * 10 - 3.0)):
        eager = set_again(rt.to_tensor(xv))     # eager: [c, b] or [b, c]
        assert float(eager) == want
        assert float(static(rt.to_tensor(xv))) == want
    assert len(static.program_cache) == 1


ORDER_SCRIPT = """
import runtime as rt, d2s
def f(x):
    d = {}
    if x[0] > 0.0:
        d["b"] = x * 3.0
        d["a"] = x * 1.0
    else:
        d["b"] = x * 1.0
        d["a"] = x * 3.0
    return list(d)
print(d2s.to_static(f)(rt.to_tensor([-1.0, 2.0])))
"""


def test_keys_set_in_both_branches_keep_their_order_whatever_the_hash_seed(tmp_path):
    """The if's outputs are written back key by key in the dict's order (it was the order
    of a set of the keys: another order, and other values in a loop over the dict, for some
    PYTHONHASHSEED values)."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    script = tmp_path / "order.py"
    script.write_text(ORDER_SCRIPT)
    for seed in ("0", "1", "2", "3"):
        out = subprocess.run([sys.executable, str(script)], capture_output=True,
                             text=True, cwd=root, env={**os.environ, "PYTHONHASHSEED": seed,
                                                       "PYTHONPATH": root}, check=True)
        assert out.stdout.strip().splitlines()[-1] == "['b', 'a']", (seed, out.stdout)
