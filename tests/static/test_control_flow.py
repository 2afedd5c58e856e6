"""Control flow in one built program: every input takes its own path; gradients vs finite
differences (float64)."""
import numpy as np
import pytest
from finite_differences import numeric_grad

import runtime as rt
from runtime import static


def _run(main, feed, fetch):
    return static.Executor().run(main, feed=feed, fetch_list=fetch)


def _nested_cond_in_while():
    """acc = y; repeat n times: acc = tanh(acc @ W) if i < 2 else acc * x."""
    main = static.Program()
    W = rt.Parameter(np.random.RandomState(1).randn(3, 3), dtype="float64", name="W")
    with static.program_guard(main):
        x = static.data("x", [3], "float64")
        n = static.data("n", [], "int64")
        p = static.data("p", [], "bool")
        y = static.nn.cond(p, lambda: rt.tanh(x), lambda: x * 2.0)

        def body(i, acc):
            acc = static.nn.cond(i < 2,
                                 lambda: rt.tanh(rt.matmul(acc.reshape([1, 3]), W).reshape([3])),
                                 lambda: acc * x)
            return [i + 1, acc]

        _, acc = static.nn.while_loop(lambda i, acc: i < n, body, [0, y])
        loss = rt.sum(acc * acc)
        dx, dW = static.gradients([loss], [x, W])
    return main, W, (loss, dx, dW)


def _nested_ref(x, W, n, p):
    acc = np.tanh(x) if p else x * 2.0
    for i in range(n):
        acc = np.tanh(acc @ W) if i < 2 else acc * x
    return float(np.sum(acc * acc))


@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("p", [True, False])
def test_cond_in_while_values_and_grads(n, p):
    main, W, (loss, dx, dW) = _nested_cond_in_while()
    x = np.random.randn(3)
    feed = {"x": x, "n": np.int64(n), "p": np.bool_(p)}
    lv, gx, gW = _run(main, feed, [loss, dx, dW])
    assert lv == pytest.approx(_nested_ref(x, W.numpy(), n, p), rel=1e-12)
    np.testing.assert_allclose(
        gx, numeric_grad(lambda v: _nested_ref(v, W.numpy(), n, p), x), atol=1e-7)
    np.testing.assert_allclose(
        gW, numeric_grad(lambda w: _nested_ref(x, w, n, p), W.numpy()), atol=1e-7)


def _while_in_cond():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float64")
        n = static.data("n", [], "int64")

        def loop():
            _, r = static.nn.while_loop(lambda i, v: i < n, lambda i, v: [i + 1, rt.tanh(v) * x],
                                        [0, x])
            return r

        out = static.nn.cond(rt.sum(x) > 0.0, loop, lambda: x * x * 3.0)
        loss = rt.sum(out)
        (dx,) = static.gradients(loss, [x])
    return main, loss, dx


def _while_in_cond_ref(x, n):
    if x.sum() > 0:
        v = x
        for _ in range(n):
            v = np.tanh(v) * x
        return v.sum()
    return (x * x * 3.0).sum()


@pytest.mark.parametrize("x", [[0.5, 0.7], [-0.5, 0.2]])
@pytest.mark.parametrize("n", [0, 3])
def test_while_in_cond(x, n):
    main, loss, dx = _while_in_cond()
    x = np.array(x)
    lv, gx = _run(main, {"x": x, "n": np.int64(n)}, [loss, dx])
    assert lv == pytest.approx(_while_in_cond_ref(x, n), rel=1e-12)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: _while_in_cond_ref(v, n), x), atol=1e-7)


def test_while_carried_tensor_grows():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [1], "float64")
        n = static.data("n", [], "int64")
        _, v = static.nn.while_loop(lambda i, v: i < n,
                                    lambda i, v: [i + 1, rt.concat([v, v * 2.0])], [0, x])
        loss = rt.sum(v * v)
        (dx,) = static.gradients(loss, [x])
    assert v.shape == [-1]
    for k in (0, 1, 3):
        out, _, gx = _run(main, {"x": np.array([1.5]), "n": np.int64(k)}, [v, loss, dx])
        assert out.shape == (2 ** k,)
        ref = np.array([1.5])
        for _ in range(k):
            ref = np.concatenate([ref, ref * 2])
        np.testing.assert_allclose(out, ref)
        np.testing.assert_allclose(gx, [2 * np.sum(ref * ref) / 1.5], rtol=1e-12)


def _array_program(read_back):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float32")
        n = static.data("n", [], "int64")
        arr = static.create_array("float32")

        def body(i, a):
            static.array_write(x * rt.cast(i, "float32"), i, a)
            return [i + 1, a]

        _, arr = static.nn.while_loop(lambda i, a: i < n, body, [0, arr])
        length = static.array_length(arr)
        if not read_back:
            return main, length
        last = static.array_read(arr, length - 1)
        stacked = static.array_stack(arr)
    return main, (length, last, stacked)


def test_tensor_array_of_varying_length():
    main, fetch = _array_program(True)
    x = np.array([1.0, 2.0], "float32")
    for k in (1, 2, 5):
        ln, lv, st = _run(main, {"x": x, "n": np.int64(k)}, fetch)
        assert ln == k
        np.testing.assert_allclose(lv, x * (k - 1))
        np.testing.assert_allclose(st, np.stack([x * i for i in range(k)]))
    main, length = _array_program(False)
    ln, = _run(main, {"x": x, "n": np.int64(0)}, [length])
    assert ln == 0


def test_switch_case_paths():
    main = static.Program()
    with static.program_guard(main):
        i = static.data("i", [], "int64")
        x = static.data("x", [2], "float32")
        y = static.nn.switch_case(i, {1: lambda: x + 1.0, 3: lambda: x * 3.0},
                                  default=lambda: -x)
    x = np.array([1.0, 2.0], "float32")
    for k, ref in [(1, x + 1), (3, x * 3), (0, -x), (7, -x)]:
        np.testing.assert_allclose(_run(main, {"i": np.int64(k), "x": x}, [y])[0], ref)


def test_cond_python_predicate_calls_one_branch():
    called = []
    with static.program_guard(static.Program()):
        x = static.data("x", [2], "float32")
        y = static.nn.cond(True, lambda: called.append("t") or x + 1.0,
                           lambda: called.append("f") or x)
    assert called == ["t"] and y.shape == [2]
    assert static.nn.cond(rt.to_tensor(False), lambda: 1, lambda: 2) == 2


def test_cond_shapes_that_differ_become_unknown():
    with static.program_guard(static.Program()):
        x = static.data("x", [4], "float32")
        p = static.data("p", [], "bool")
        y = static.nn.cond(p, lambda: x, lambda: rt.concat([x, x]))
    assert y.shape == [-1]


def test_cond_mismatch_names_both_branches():
    with static.program_guard(static.Program()):
        x = static.data("x", [4], "float32")
        p = static.data("p", [], "bool")
        with pytest.raises(TypeError, match=r"true_fn returned Variable f32\[4\] but false_fn "
                                            r"returned Variable i64\[4\]"):
            static.nn.cond(p, lambda: x, lambda: rt.cast(x, "int64"))
        with pytest.raises(ValueError, match="different structures"):
            static.nn.cond(p, lambda: (x, x), lambda: x)


def test_cond_and_while_keep_namedtuples_and_none_as_structure():
    import collections
    pair = collections.namedtuple("pair", "value note")
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float32")
        out = static.nn.cond(x.sum() > 0, lambda: pair(x * 2.0, None),
                             lambda: pair(x - 1.0, None))
        assert isinstance(out, pair) and out.note is None
        i = rt.zeros([1], "int64")
        i, acc = static.nn.while_loop(lambda i, acc: i < 3,
                                      lambda i, acc: [i + 1, pair(acc.value + x, None)],
                                      [i, pair(x, None)])
        assert isinstance(acc, pair) and acc.note is None
        with pytest.raises(ValueError, match="different structures"):
            static.nn.cond(x.sum() > 0, lambda: pair(x, None), lambda: pair(x, x))
    for a in ([1.0, 2.0], [-1.0, -2.0]):
        a = np.array(a, np.float32)
        got, total = _run(main, {"x": a}, [out.value, acc.value])
        np.testing.assert_allclose(got, a * 2.0 if a.sum() > 0 else a - 1.0)
        np.testing.assert_allclose(total, a * 4.0)


def test_py_print_matches_eager_print(capsys):
    x = rt.to_tensor([1.5, -2.0])
    print("x:", x, 3, sep="|", end=";\n")
    eager = capsys.readouterr().out
    main = static.Program()
    with static.program_guard(main):
        xv = static.data("x", [2], "float32")
        static.py_print("x:", xv, 3, sep="|", end=";\n")
    assert capsys.readouterr().out == ""
    static.Executor().run(main, {"x": x.numpy()})
    assert capsys.readouterr().out == eager


def test_print_and_assert_act_at_run_time(capsys):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float32")
        static.Print(x, message="seen")
        static.Assert(rt.all(x > 0.0), data=[x], message="x must be positive")
    assert capsys.readouterr().out == ""
    static.Executor().run(main, {"x": np.array([1.0, 2.0], "float32")})
    assert "seen Variable: x" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="x must be positive") as info:
        static.Executor().run(main, {"x": np.array([1.0, -2.0], "float32")})
    assert "test_control_flow.py" in str(info.value)


def _array_grad_ref(x, n):
    v, vals = x, []
    for _ in range(n):
        v = np.tanh(v) * x
        vals.append(v)
    st = np.stack(vals)
    return (st * st).sum() + vals[0].sum()


@pytest.mark.parametrize("n", [1, 2, 4])
def test_gradients_through_tensor_array_built_in_loop(n):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float64")
        k = static.data("n", [], "int64")

        def body(i, v, a):
            v = rt.tanh(v) * x
            static.array_write(v, i, a)
            return [i + 1, v, a]

        _, _, arr = static.nn.while_loop(lambda i, v, a: i < k, body,
                                         [0, x, static.create_array("float64")])
        loss = rt.sum(static.array_stack(arr) ** 2) + rt.sum(static.array_read(arr, 0))
        (dx,) = static.gradients(loss, [x])
    xv = np.array([0.3, -0.7])
    lv, gx = _run(main, {"x": xv, "n": np.int64(n)}, [loss, dx])
    assert lv == pytest.approx(_array_grad_ref(xv, n), rel=1e-12)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: _array_grad_ref(v, n), xv), atol=1e-7)


def test_gradients_through_array_concat_and_switch_case():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [3], "float64")
        i = static.data("i", [], "int64")
        arr = static.create_array("float64", [x, rt.tanh(x)])
        cat = static.array_concat(arr)
        y = static.nn.switch_case(i, [lambda: cat * cat, lambda: rt.tanh(cat)])
        (dx,) = static.gradients(rt.sum(y), [x])

    def ref(v, k):
        c = np.concatenate([v, np.tanh(v)])
        return (c * c).sum() if k == 0 else np.tanh(c).sum()

    xv = np.array([0.1, -0.4, 0.8])
    for k in (0, 1):
        gx, = _run(main, {"x": xv, "i": np.int64(k)}, [dx])
        np.testing.assert_allclose(gx, numeric_grad(lambda v, k=k: ref(v, k), xv), atol=1e-7)


def test_tensor_array_indexing_slicing_append_and_grad():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float64")
        arr = static.create_array("float64")
        for k in range(4):
            arr.append(x * float(k + 1))
        tail = arr[-2:]
        last = arr[-1]
        y = rt.sum(static.array_stack(tail)) + rt.sum(last * last)
        (dx,) = static.gradients(y, [x])
    xv = np.array([0.5, -1.0])
    lv, yv, gx = _run(main, {"x": xv}, [last, y, dx])
    np.testing.assert_allclose(lv, xv * 4)
    assert yv == pytest.approx(np.sum(xv * 3 + xv * 4) + np.sum((xv * 4) ** 2))
    np.testing.assert_allclose(gx, 7.0 + 32.0 * xv)


def test_detach_stop_gradient_and_no_grad_set_block_gradients():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float64")
        a = x * 3.0
        b = x * 5.0
        b.stop_gradient = True
        loss = rt.sum(a * x) + rt.sum(b * x) + rt.sum(a.detach() * 7.0)
        (dx,) = static.gradients(loss, [x])
        (dx_nograd_a,) = static.gradients(loss, [x], no_grad_set=[a])
    xv = np.array([1.0, -2.0])
    g, g2 = _run(main, {"x": xv}, [dx, dx_nograd_a])
    np.testing.assert_allclose(g, 6 * xv + 5 * xv)  # b and a.detach() are constants
    np.testing.assert_allclose(g2, 3 * xv + 5 * xv)
