"""The first run of a big program, interpreted (`runtime/program/interpreter.py`): the same
values, errors and state as the compiled program, which the run after compiles."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import static
from runtime.program import codegen, interpreter
from runtime.program.executor import FeedError
from runtime.program.interpreter import FirstRun, Liveness
from tests.finite_differences import numeric_grad

STEPS = 200  # about 1,400 ops: over interpreter.MIN_OPS


def unrolled(x, w, limit):
    h = x
    for i in range(STEPS):
        h = rt.tanh(rt.matmul(h, w) + 0.01 * (i % 7))
        if h.mean() > limit:
            h = h * 0.5
        else:
            h = h + 0.25
    return h, h.sum()


def unrolled_numpy(x, w, limit):
    h = x
    for i in range(STEPS):
        h = np.tanh(h @ w + 0.01 * (i % 7))
        h = h * 0.5 if h.mean() > limit else h + 0.25
    return h, h.sum()


def _inputs(limit):
    rng = np.random.default_rng(0)
    xa = rng.standard_normal([3, 4])
    wa = rng.standard_normal([4, 4]) * 0.5
    return xa, wa, np.array(limit)


def _entry(sf):
    return sf.program_cache.last_entry


@pytest.mark.parametrize("limit", [-1.0, 0.3, 2.0])  # always halved, mixed, never halved
def test_a_big_program_runs_interpreted_first_and_compiled_after(limit):
    arrays = _inputs(limit)
    args = [rt.to_tensor(a) for a in arrays]
    eager = unrolled(*args)
    sf = d2s.to_static(unrolled)
    first = sf(*args)
    entry = _entry(sf)
    assert entry.compiled.__class__ is FirstRun and entry.compiled.compiled is None
    assert sum(len(b.ops) for b in entry.concrete.main_program.blocks) >= interpreter.MIN_OPS
    expected = unrolled_numpy(*arrays)
    assert len(first) == len(eager) == len(expected) == 2
    for got, e, ref in zip(first, eager, expected):
        assert got.shape == e.shape and got.dtype == e.dtype
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
        np.testing.assert_allclose(got.numpy(), e.numpy(), rtol=1e-12)
    second = sf(*args)
    assert entry.compiled.compiled is not None  # compiled by the second run
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.numpy(), b.numpy())  # bit for bit
    for _ in range(3):  # the steady calls: the fast caller runs the compiled body
        third = sf(*args)
    np.testing.assert_array_equal(third[0].numpy(), first[0].numpy())


def test_paths_the_first_run_did_not_take_run_compiled():
    sf = d2s.to_static(unrolled)
    for limit in (2.0, -1.0, 0.3):  # one program: the tensor `if`s decide at run time
        arrays = _inputs(limit)
        got = sf(*[rt.to_tensor(a) for a in arrays])
        np.testing.assert_allclose(got[0].numpy(), unrolled_numpy(*arrays)[0], rtol=1e-12)
    assert len(sf.program_cache) == 1


@pytest.mark.slow  # (the backward of 1,400 ops: about 5 s on a loaded machine)
def test_a_training_call_after_an_interpreted_first_call_has_its_gradient():
    arrays = _inputs(0.3)
    sf = d2s.to_static(unrolled)
    with rt.no_grad():
        sf(*[rt.to_tensor(a) for a in arrays])
    x = rt.to_tensor(arrays[0], stop_gradient=False)
    sf(x, rt.to_tensor(arrays[1]), rt.to_tensor(arrays[2]))[1].backward()
    expected = numeric_grad(lambda a: unrolled_numpy(a, *arrays[1:])[1], arrays[0])
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-8)


def pick(x, i):
    return x[i] * 2.0


def test_a_failing_op_names_the_users_line_as_in_the_compiled_program(monkeypatch):
    monkeypatch.setattr(interpreter, "MIN_OPS", 0)
    x = rt.to_tensor(np.arange(4.0))
    messages = []
    for warm in (False, True):
        sf = d2s.to_static(pick)
        if warm:  # a first call that works, then a compiled run that fails
            np.testing.assert_allclose(sf(x, rt.to_tensor(3)).numpy(), 6.0)
        with pytest.raises(IndexError) as info:
            sf(x, rt.to_tensor(9))
        assert _entry(sf).compiled.__class__ is FirstRun
        assert (_entry(sf).compiled.compiled is None) == (not warm)
        messages.append("\n".join([str(info.value)] + getattr(info.value, "__notes__", [])))
    assert "return x[i] * 2.0" in messages[0] and "While running op" in messages[0]
    assert messages[0] == messages[1]


def _program():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2, 2], "float32")  # (no unknown size: nothing to fuse)
        i = static.data("i", [], "int64")
        y = static.nn.switch_case(i, {1: lambda: x + 1.0, 3: lambda: x * 3.0},
                                  default=lambda: rt.tanh(x))
        z = static.nn.cond(y.sum() > 0.0, lambda: y - 1.0, lambda: y * y)
    return main, (y.name, z.name)


def _first_run(program, fetch):
    program._compiled.clear()
    run = static.Executor().compiled(program, fetch, interpret_first=True)
    assert run.__class__ is FirstRun
    return run


@pytest.mark.parametrize("index", [1, 3, 7])
def test_switch_case_and_cond_run_the_branch_of_their_index(monkeypatch, index):
    monkeypatch.setattr(interpreter, "MIN_OPS", 0)
    program, fetch = _program()
    xa = np.array([[0.5, -2.0], [1.0, 0.25]], "float32")
    feed = {"x": xa, "i": np.array(index)}
    y, z = _first_run(program, fetch).fn(feed)
    ref = {1: xa + 1.0, 3: xa * 3.0}.get(index, np.tanh(xa))
    np.testing.assert_allclose(y, ref, rtol=1e-6)
    np.testing.assert_allclose(z, ref - 1.0 if ref.sum() > 0 else ref * ref, rtol=1e-6)
    compiled = static.Executor().run(program, feed=feed, fetch_list=list(fetch))
    assert len(compiled) == 2
    np.testing.assert_array_equal(compiled[1], z)


def test_feeds_are_checked_as_the_compiled_program_checks_them(monkeypatch):
    monkeypatch.setattr(interpreter, "MIN_OPS", 0)
    program, fetch = _program()
    executor = static.Executor()
    good = np.ones([2, 2], "float32")
    cases = [{"x": good}, {"x": good.astype("float64"), "i": np.array(1)},
             {"x": good[:1], "i": np.array(1)}, {"x": good, "i": np.array(1), "j": good}]
    for feed in cases:
        run = _first_run(program, fetch)
        with pytest.raises(FeedError) as interpreted:
            executor.run(program, feed=feed, fetch_list=list(fetch))
        assert run.compiled is None
        program._compiled.clear()
        with pytest.raises(FeedError) as compiled:
            executor.run(program, feed=feed, fetch_list=list(fetch))
        assert str(interpreted.value) == str(compiled.value)


class Normed(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.bn = rt.nn.BatchNorm1D(3)

    def forward(self, x):
        return self.bn(x) * 2.0


def test_persistable_writes_of_an_interpreted_run(monkeypatch):
    monkeypatch.setattr(interpreter, "MIN_OPS", 0)
    xa = np.random.default_rng(1).standard_normal([5, 3])
    nets = []
    for convert in (False, True):
        rt.seed(0)
        net = Normed()
        net.to(dtype="float64")
        if convert:
            d2s.to_static(net)
        with rt.no_grad():
            out = net(rt.to_tensor(xa))
        nets.append((net, out))
    entry = nets[1][0].forward.program_cache.last_entry
    assert entry.compiled.__class__ is FirstRun and entry.compiled.compiled is None
    np.testing.assert_allclose(nets[1][1].numpy(), nets[0][1].numpy(), rtol=1e-12)
    mean = xa.mean(0) * 0.1  # (momentum 0.9 from a zero running mean)
    for net, _ in nets:
        np.testing.assert_allclose(net.bn._mean.numpy(), mean, rtol=1e-12)


def branchy(x, w):
    h = rt.matmul(x, w)
    if h.sum() > 0.0:
        h = rt.tanh(h) * h
    else:
        h = rt.exp(h)
    return (h * h).sum()


def _gradient_program():
    """A program whose backward branch reads its forward branch's values (`rt.grad` of a
    tensor `if`, built into one program)."""
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2, 2], "float32")
        x.stop_gradient = False
        y = static.nn.cond(x.sum() > 0.0, lambda: rt.tanh(x) * x, lambda: rt.exp(x))
        g, = static.gradients([y.sum()], [x])
    return main, (y.name, g.name)


def test_values_are_freed_where_the_compiled_program_deletes_them():
    xa, wa, _ = _inputs(0.0)
    sf = d2s.to_static(branchy)
    x = rt.to_tensor(xa, stop_gradient=False)
    sf(x, rt.to_tensor(wa)).backward()  # (the training split: forward and backward parts)
    entry = _entry(sf)
    split = entry._training.split
    programs = [(entry.concrete.main_program, entry.compiled.fetch),
                (split.forward, entry._training.forward.fetch),
                (split.backward, entry._training.backward.backward.fetch), _gradient_program()]
    for program, fetch in programs:
        liveness, gen = Liveness(program, fetch), codegen._Gen(program, fetch)
        for block in program.blocks:
            ours, theirs = liveness.deletions(block), gen.deletions(block)
            assert {j: sorted(n) for j, n in ours.items()} == \
                {j: sorted(n) for j, n in theirs.items()}, block.idx
    assert liveness.shared  # (kept: read by the backward branch)


def test_a_backward_branch_reads_the_forward_branchs_values(monkeypatch):
    monkeypatch.setattr(interpreter, "MIN_OPS", 0)
    program, fetch = _gradient_program()
    for xa in (np.array([[0.5, -0.25], [1.0, 0.5]], "float32"), -np.ones([2, 2], "float32")):
        y, g = _first_run(program, fetch).fn({"x": xa})
        if xa.sum() > 0:
            ref_y, ref_g = np.tanh(xa) * xa, np.tanh(xa) + xa * (1 - np.tanh(xa) ** 2)
        else:
            ref_y, ref_g = np.exp(xa), np.exp(xa)
        np.testing.assert_allclose(y, ref_y, rtol=1e-6)
        np.testing.assert_allclose(g, ref_g, rtol=1e-6)
