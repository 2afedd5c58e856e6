"""d2s/tracing.py: tracing a StaticFunction's call into a program (feeds named after the
arguments, captured parameters, guards on the Python values read, errors at the user's lines,
the probes' scratch blocks gone, the user's objects as they were when a trace fails)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import errors, tracing, writeback
from runtime import pytree

SCALE = 2.0
HERE = os.path.abspath(__file__)


def _t(a, dtype=np.float32):
    return rt.to_tensor(np.asarray(a, dtype))


def _scaled_sum(x, pair, cfg):
    y = x * SCALE + pair[0]
    if y.sum() > 0:
        z = y + cfg["b"]
    else:
        z = -y
    return z, pair[1]


def _run(traced: tracing.Trace, inputs):
    """Run a traced program on NumPy inputs; the outputs as the function's result structure
    (without d2s's write-back wrapper)."""
    fetch = [v for v in traced.leaves if type(v).__name__ == "Variable"]
    exe = rt.static.Executor()
    got = exe.run(traced.program, feed=dict(zip((v.name for v in traced.feeds), inputs)),
                  fetch_list=fetch)
    assert len(got) == len(fetch)
    it = iter(got)
    filled = [next(it) if type(v).__name__ == "Variable" else v for v in traced.leaves]
    out = pytree.unflatten(traced.tree, filled)
    return out[0] if isinstance(out, writeback.WithState) else out


def test_feeds_are_named_after_the_arguments_and_containers_flattened():
    sf = d2s.to_static(_scaled_sum)
    x, p0, p1, b = (np.ones([2, 3], np.float32), np.ones([2, 3], np.float32),
                    np.arange(3, dtype=np.float32), np.full([2, 3], 0.5, np.float32))
    traced = tracing.trace(sf.trace_target(), (_t(x), (_t(p0), _t(p1)), {"b": _t(b)}), {})
    program, feeds = traced.program, traced.feeds
    assert [v.name for v in feeds] == ["x", "pair_0", "pair_1", "cfg_b"] == program.inputs
    assert [v.shape for v in feeds] == [[2, 3], [2, 3], [3], [2, 3]]
    program.verify()
    # one program, both branches: a positive and a negative input take different paths
    for sign in (1.0, -1.0):
        out = _run(traced, [sign * x, sign * p0, p1, b])
        z, second = out
        ref = sign * (x * SCALE + p0)
        np.testing.assert_allclose(z, ref + b if ref.sum() > 0 else -ref)
        np.testing.assert_allclose(second, p1)
    # the global read is guarded: a new SCALE must not reuse this program
    assert any(g[0][0] == "global" and g[0][2] == "SCALE" and g[1:] == ("eq", (float, SCALE))
               for g in traced.guards)
    assert not traced.effects.writes


def test_an_input_spec_name_and_shape_win_over_the_argument():
    sf = d2s.to_static(lambda x: x * 3.0,
                       input_spec=[rt.static.InputSpec([None, 4], "float32", name="image")])
    traced = tracing.trace(sf.trace_target(), (_t(np.ones([2, 4])),), {})
    feeds = traced.feeds
    assert [v.name for v in feeds] == ["image"] and feeds[0].shape == [-1, 4]
    a = np.arange(12, dtype=np.float32).reshape(3, 4)  # another batch size, same program
    np.testing.assert_allclose(_run(traced, [a]), a * 3.0)


class _Affine(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    def forward(self, x):
        return rt.tanh(self.fc(x))


def test_a_layers_parameters_are_captured_not_fed():
    rt.seed(1)
    layer = _Affine()
    d2s.to_static(layer)  # the Layer itself, its forward now a StaticFunction
    traced = tracing.trace(layer.forward.trace_target(), (_t(np.ones([4, 3])),), {})
    program, feeds = traced.program, traced.feeds
    assert [v.name for v in feeds] == ["x"]
    w, bias = layer.fc.weight, layer.fc.bias
    assert {id(w), id(bias)} <= set(program.captured)
    assert program.tensors[program.captured[id(w)]] is w  # the very Parameter, shared
    a = np.random.default_rng(0).standard_normal([4, 3]).astype(np.float32)
    np.testing.assert_allclose(_run(traced, [a]),
                               np.tanh(a @ w.numpy() + bias.numpy()), rtol=1e-5)


def _count_down(x, n):
    i = rt.zeros([1], "int64")
    s = x
    while i < n:  # a tensor test: the body is probed in scratch blocks before it is built
        s = s * 0.5 + x
        i += 1
    return s


def test_the_probes_leave_no_block_or_name_behind():
    sf = d2s.to_static(_count_down)
    traced = tracing.trace(sf.trace_target(), (_t([1.0, 2.0]), rt.to_tensor(np.array([3]))),
                           {})
    program = traced.program
    program.verify()
    used_blocks = {i for op in program.ops() for i in op.blocks}
    assert used_blocks == set(range(1, len(program.blocks)))  # every block belongs to an op
    declared = {v.name for b in program.blocks for v in b.vars.values()}
    assert program.names == declared  # no name a discarded probe made
    for n in (0, 1, 3):
        x = np.array([1.0, 2.0], np.float32)
        ref = x.copy()
        for _ in range(n):
            ref = ref * 0.5 + x
        out = _run(traced, [x, np.array([n])])
        np.testing.assert_allclose(out, ref, rtol=1e-6)


def _bad_matmul(x, w, log):
    log.append("called")
    h = x * 2.0
    return rt.matmul(h, w)  # the failing line


def test_a_failing_trace_names_the_user_line_and_restores_the_users_objects():
    sf = d2s.to_static(_bad_matmul)
    log = []
    with pytest.raises(ValueError) as info:
        tracing.trace(sf.trace_target(), (rt.ones([2, 3]), rt.ones([4, 5]), log), {})
    assert "inner dimensions 3 and 4 differ" in str(info.value)
    assert log == []  # the trace's own change to the user's list is undone
    frames = errors.frames_of_traceback(info.value.__traceback__)
    line = _bad_matmul.__code__.co_firstlineno + 3
    assert (frames[-1].filename, frames[-1].lineno) == (HERE, line)
    assert frames[-1].function == "_bad_matmul" and "rt.matmul(h, w)" in frames[-1].source
    # what a user calling the StaticFunction sees: the same error, noted at that line
    with pytest.raises(ValueError) as info:
        sf(rt.ones([2, 3]), rt.ones([4, 5]), [])
    assert f'File "{HERE}", line {line}, in _bad_matmul' in "\n".join(info.value.__notes__)


def test_ops_carry_the_user_origin():
    sf = d2s.to_static(_scaled_sum)
    program = tracing.trace(sf.trace_target(), (_t(np.ones([2])), (_t(np.ones([2])), _t([0.0])),
                                                {"b": _t(np.ones([2]))}), {}).program
    first = _scaled_sum.__code__.co_firstlineno
    origins = {program.origin_of(op)[:2] for op in program.ops()
               if program.origin_of(op) is not None}
    assert (HERE, first + 1) in origins  # y = x * SCALE + pair[0]
    assert (HERE, first + 2) in origins  # if y.sum() > 0
    assert {f for f, _ in origins} == {HERE}


def _recurse(x, n):
    if n.sum() > 0:  # a tensor condition: both branches are traced, the recursive one too
        return _recurse(x * 2.0, n - 1)
    return x


def test_a_recursion_whose_depth_is_a_tensor_is_refused_with_the_line():
    sf = d2s.to_static(_recurse)
    with pytest.raises(d2s.ConversionError) as info:
        tracing.trace(sf.trace_target(), (_t([1.0]), _t([3.0])), {})
    msg = str(info.value)
    assert "calls itself in a branch of a tensor condition" in msg
    assert f"line {_recurse.__code__.co_firstlineno + 1}: if n.sum() > 0:" in msg
