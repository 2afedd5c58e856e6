"""split_program: a forward+gradient program cut into a forward part (run once, saving what
the gradients read) and a backward part gives the same values and gradients as the whole
program, and no forward op runs in the backward part."""
import numpy as np
import pytest
from finite_differences import numeric_grad

import runtime as rt
from runtime import static
from runtime.program.ir import Op
from runtime.program.split import SplitError, split_program

W0 = np.random.RandomState(1).randn(3, 3)


def _build(forward, feeds):
    """Program: forward ops, then `<loss>@GRAD`-seeded gradients w.r.t. the float feeds.
    Returns (program, n forward ops, loss, seed name, grads)."""
    main = static.Program()
    with static.program_guard(main):
        vs = {name: static.data(name, shape, dtype) for name, (shape, dtype) in feeds.items()}
        loss = forward(**vs)
        n = len(main.global_block().ops)
        seed = static.data("loss@GRAD", [], "float64")
        wrt = [v for v in vs.values() if v.dtype.is_floating]
        grads = static.gradients([loss], wrt, target_gradients=[seed])
    return main, n, loss, seed.name, grads


def _run_split(main, n, loss, seed, grads, feed):
    s = split_program(main, n)
    exe = static.Executor()
    fwd = exe.compiled(s.forward, (loss.name,) + tuple(s.fetch))
    out = fwd.fn(dict(feed))
    for slot, a in zip(s.slots, out[1:]):
        slot._data = a
    bfeed = dict(feed)
    bfeed[seed] = np.float64(1.0)
    g = exe.compiled(s.backward, tuple(v.name for v in grads)).fn(bfeed)
    return s, [out[0], *g]


def _check(forward, feeds, feed):
    main, n, loss, seed, grads = _build(forward, feeds)
    whole = static.Executor().run(main, {**feed, seed: np.float64(1.0)}, [loss, *grads])
    s, parts = _run_split(main, n, loss, seed, grads, feed)
    for a, b in zip(whole, parts, strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-13, atol=1e-13)
    assert len(s.forward.global_block().ops) == n
    assert ([op.type for op in s.backward.global_block().ops]
            == [op.type for op in main.global_block().ops[n:]])
    return s, whole


def _cond_in_while(x, n, p):
    W = rt.Parameter(W0.copy(), dtype="float64", name="W")
    y = static.nn.cond(p, lambda: rt.tanh(x), lambda: x * 2.0)

    def body(i, acc):
        acc = static.nn.cond(i < 2, lambda: rt.tanh(rt.matmul(acc.reshape([1, 3]), W)
                                                     .reshape([3])), lambda: acc * x)
        return [i + 1, acc]

    _, acc = static.nn.while_loop(lambda i, acc: i < n, body, [0, y])
    return rt.sum(acc * acc)


def _cond_in_while_ref(x, n, p):
    acc = np.tanh(x) if p else x * 2.0
    for i in range(n):
        acc = np.tanh(acc @ W0) if i < 2 else acc * x
    return float(np.sum(acc * acc))


@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("p", [True, False])
def test_cond_and_while_split_gives_the_whole_programs_grads(n, p):
    x = np.random.RandomState(n).randn(3)
    feeds = {"x": ([3], "float64"), "n": ([], "int64"), "p": ([], "bool")}
    s, (lv, gx) = _check(_cond_in_while, feeds, {"x": x, "n": np.int64(n), "p": np.bool_(p)})
    assert lv == pytest.approx(_cond_in_while_ref(x, n, p), rel=1e-12)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: _cond_in_while_ref(v, n, p), x), atol=1e-7)
    # tanh(x) is computed in a branch of the top-level cond: the forward exports it
    assert any(name.startswith("saved") for name in s.fetch)


def _nested_branches(x, k):
    def outer():
        inner = static.nn.cond(rt.sum(x) > 1.0, lambda: rt.exp(x) * x, lambda: rt.sin(x))
        return rt.tanh(inner) * 2.0

    y = static.nn.cond(rt.sum(x) > 0.0, outer, lambda: x * x)
    z = static.nn.switch_case(k, {0: lambda: rt.tanh(y), 1: lambda: y * rt.exp(y)},
                              default=lambda: -y)
    return rt.sum(z * z)


def _nested_ref(x, k):
    if x.sum() > 0:
        inner = np.exp(x) * x if x.sum() > 1 else np.sin(x)
        y = np.tanh(inner) * 2.0
    else:
        y = x * x
    z = [np.tanh(y), y * np.exp(y)][k] if k in (0, 1) else -y
    return float(np.sum(z * z))


@pytest.mark.parametrize("x", [[0.9, 0.6], [0.3, 0.2], [-0.5, 0.1]])
@pytest.mark.parametrize("k", [0, 1, 5])
def test_values_of_nested_branches_are_exported_through_each_level(x, k):
    x = np.array(x)
    feeds = {"x": ([2], "float64"), "k": ([], "int64")}
    _, (lv, gx) = _check(_nested_branches, feeds, {"x": x, "k": np.int64(k)})
    assert lv == pytest.approx(_nested_ref(x, k), rel=1e-12)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: _nested_ref(v, k), x), atol=1e-6)


def _while_in_cond(x, n):
    def loop():
        _, r = static.nn.while_loop(lambda i, v: i < n, lambda i, v: [i + 1, rt.tanh(v) * x],
                                    [0, x])
        return r

    return rt.sum(static.nn.cond(rt.sum(x) > 0.0, loop, lambda: x * x * 3.0))


@pytest.mark.parametrize("x", [[0.5, 0.7], [-0.5, 0.2]])
def test_loop_saves_made_inside_a_branch_are_exported(x):
    feeds = {"x": ([2], "float64"), "n": ([], "int64")}
    s, _ = _check(_while_in_cond, feeds, {"x": np.array(x), "n": np.int64(3)})
    kinds = {s.forward.find_var(f).kind for f in s.fetch}
    assert "array" in kinds  # the loop's saved iterations (a list) cross the cut


def test_random_ops_and_statistics_run_only_in_the_forward_part(capsys):
    stat = rt.to_tensor(np.zeros(3))

    def forward(x, n):
        def body(i, v):
            static.py_print("body")
            stat.set_value(rt.tanh(v))  # a running statistic: one write per iteration
            return [i + 1, rt.tanh(v) * 1.5]

        d = rt.nn.functional.dropout(x, p=0.5)
        _, v = static.nn.while_loop(lambda i, v: i < n, body, [0, d])
        return rt.sum(v * v)

    feeds = {"x": ([3], "float64"), "n": ([], "int64")}
    main, n, loss, seed, grads = _build(forward, feeds)
    s = split_program(main, n)
    fwd_types = {op.type for op in s.forward.ops()}
    assert {"dropout", "write_persistable", "py_print"} <= fwd_types
    # the backward loop recomputes the body, but without its side effects
    assert {"recompute"} <= {op.type for op in s.backward.ops()}
    live = [op.type for b in s.backward.blocks for op in b.ops]
    assert not {"dropout", "write_persistable", "py_print"} & set(live)
    x = np.array([0.3, -0.8, 1.1])
    rt.seed(3)
    version = stat._version
    _, (lv, gx) = _run_split(main, n, loss, seed, grads, {"x": x, "n": np.int64(2)})
    assert stat._version == version + 2
    assert capsys.readouterr().out == "body\nbody\n"
    # the mask the forward drew is the one the gradient uses
    mask = (gx != 0).astype("float64")

    def ref(v):
        d = v * mask * 2.0
        for _ in range(2):
            d = np.tanh(d) * 1.5
        return float(np.sum(d * d))

    assert mask.sum() not in (0, 3) and lv == pytest.approx(ref(x), rel=1e-12)
    np.testing.assert_allclose(gx, numeric_grad(ref, x), atol=1e-7)
    np.testing.assert_allclose(stat.numpy(), np.tanh(np.tanh(x * mask * 2.0) * 1.5))


def test_a_value_of_a_loop_body_read_across_the_cut_is_an_error():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float64")
        k = static.data("k", [], "int64")
        _, v = static.nn.while_loop(lambda i, v: i < k, lambda i, v: [i + 1, rt.tanh(v)], [0, x])
        n = len(main.global_block().ops)
        loop = next(op for op in main.global_block().ops if op.type == "while")
        body = main.blocks[loop.blocks[1]]
        inner = body.ops[-1].outputs[0]  # defined in the loop body only
        main.global_block().ops.append(Op("tanh", [inner], [v.name + "_bad"], {}))
    with pytest.raises(SplitError, match="on each trip of a loop whose condition is a tensor"):
        split_program(main, n)
