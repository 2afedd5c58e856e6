"""Paddle's StaticFunction inspection API: `.inputs`, `.outputs`, `.concrete_program`,
`.concrete_program_specify_input_spec(...)`, `.program_cache.concrete_programs()` and
`.last()`, `.get_traced_count()`, returning this project's Program and InputSpec objects."""
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import InputSpec


class Gate(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 3)

    def forward(self, x, scale: float = 1.0):
        h = self.fc(x)
        if rt.mean(h) > 0:
            h = rt.tanh(h) * scale
        return h, rt.sum(h, axis=-1)


def reference(net, x, scale=1.0):
    h = x @ net.fc.weight.numpy() + net.fc.bias.numpy()
    if h.mean() > 0:
        h = np.tanh(h) * scale
    return h, h.sum(-1)


def batches():
    return [np.full([2, 4], 3.0, "float32"), np.full([5, 4], -3.0, "float32")]


def test_inputs_outputs_and_concrete_program_follow_the_latest_call():
    net = d2s.to_static(Gate())
    sf = net.forward
    with pytest.raises(RuntimeError, match="has not been called yet"):
        _ = sf.concrete_program
    with pytest.raises(RuntimeError, match="program cache is empty"):
        sf.program_cache.last()
    for x in batches():
        out = net(rt.to_tensor(x))
        expected = reference(net, x)
        assert len(out) == len(expected)
        for got, want in zip(out, expected):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
        [spec] = sf.inputs
        assert isinstance(spec, InputSpec)
        assert list(spec.shape) == list(x.shape) and spec.dtype == rt.float32
        assert [v.shape for v in sf.outputs] == [[x.shape[0], 3], [x.shape[0]]]
        assert sf.concrete_program.inputs[0].name == spec.name
    assert sf.get_traced_count() == 2 == len(sf.program_cache)
    programs = sf.program_cache.concrete_programs()
    assert len(programs) == 2
    assert [p.inputs[0].shape for p in programs] == [[2, 4], [5, 4]]
    key, last = sf.program_cache.last()
    assert last is programs[-1] is sf.concrete_program and key is not None
    assert isinstance(last.main_program, rt.static.Program)
    net(rt.to_tensor(batches()[0]))  # a cached signature: the latest program again
    assert sf.program_cache.last()[1] is programs[0] is sf.concrete_program
    assert sf.get_traced_count() == 2


def test_traced_count_counts_programs_evicted_from_the_cache():
    @d2s.to_static
    def shift(x):
        return x + 1.0

    shift.program_cache.max_size = 2
    for n in range(1, 5):
        np.testing.assert_allclose(shift(rt.ones([n])).numpy(), np.full([n], 2.0))
    assert shift.get_traced_count() == 4 and len(shift.program_cache) == 2
    assert [p.inputs[0].shape for p in shift.program_cache.concrete_programs()] == [[3], [4]]


def test_concrete_program_specify_input_spec():
    net = d2s.to_static(Gate())
    spec = [InputSpec([None, 4], "float32")]
    program = net.forward.concrete_program_specify_input_spec(spec)
    assert program.inputs[0].shape == [-1, 4] and program.outputs[1].shape == [-1]
    assert net.forward.get_traced_count() == 1
    with pytest.raises(RuntimeError, match="has not been called yet"):
        d2s.to_static(Gate()).forward.concrete_program_specify_input_spec()


def test_the_functions_own_spec_wins_and_a_conflicting_one_raises():
    own = [InputSpec([None, 4], "float32", name="x")]
    net = d2s.to_static(Gate(), input_spec=own)
    sf = net.forward
    assert sf.concrete_program_specify_input_spec().inputs[0].shape == [-1, 4]
    with pytest.warns(UserWarning, match="is ignored"):
        program = sf.concrete_program_specify_input_spec([InputSpec([8, 4], "float32")])
    assert program.inputs[0].shape == [-1, 4]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sf.concrete_program_specify_input_spec(own)  # the same spec: no warning
    with pytest.raises(ValueError, match="argument 0 had 4 in dim 1, now 3"):
        sf.concrete_program_specify_input_spec([InputSpec([None, 3], "float32")])


def test_with_hook_traces_the_forward_hooks_in():
    net = Gate()
    net.register_forward_post_hook(lambda layer, inputs, out: (out[0] * 10.0, out[1]))
    d2s.to_static(net)
    spec = [InputSpec([2, 4], "float32")]
    plain = net.forward.concrete_program_specify_input_spec(spec)
    hooked = net.forward.concrete_program_specify_input_spec(spec, with_hook=True)
    x = batches()[0]
    exe = rt.static.Executor()
    plain_h = exe.run(plain.main_program, feed={plain.inputs[0].name: x},
                      fetch_list=plain.outputs)[0]
    hooked_h = exe.run(hooked.main_program, feed={hooked.inputs[0].name: x},
                       fetch_list=hooked.outputs)[0]
    np.testing.assert_allclose(plain_h, reference(net, x)[0], rtol=1e-5)
    np.testing.assert_allclose(hooked_h, 10.0 * plain_h, rtol=1e-5)


def test_inputs_are_the_arguments_not_the_state_the_program_keeps():
    class Counter(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.steps = 0  # a Python number the program keeps as state (fed at each call)

        def forward(self, x):
            self.steps += 1
            return x * self.steps

    net = d2s.to_static(Counter())
    outs = [net(rt.ones([2])).numpy() for _ in range(2)]
    np.testing.assert_allclose(outs, [[1.0, 1.0], [2.0, 2.0]])
    assert [(list(s.shape), s.name) for s in net.forward.inputs] == [([2], "x")]
    assert len(net.forward.concrete_program.inputs) == 2  # x and the kept count
