"""runtime/core.py (the bottom layer: tensor bases and eager hooks) and the public accessors
other packages read instead of private names."""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt
from runtime import core


def test_tensor_bases_answer_is_this_a_tensor_in_both_modes():
    t = rt.to_tensor([1.0, 2.0])
    p = rt.Parameter(np.ones(2, np.float32))
    assert core.is_tensor(t) and core.is_eager_tensor(p) and not core.is_variable(t)
    assert not core.is_tensor(np.ones(2)) and not core.is_tensor([1.0])
    with rt.static.program_guard(rt.static.Program()):
        x = rt.static.data("x", [2], "float32")
        assert core.is_tensor(x) and core.is_variable(x) and not core.is_eager_tensor(x)


def test_hooks_are_the_tensor_layer_functions():
    from runtime import autograd, tensor
    assert core.wrap is tensor.wrap and core.record is autograd.record
    assert core.to_tensor is tensor.to_tensor and core.constant is tensor.constant
    a = np.arange(3.0, dtype=np.float32)
    t = core.wrap(a)
    assert isinstance(t, rt.Tensor) and core.array_of(t) is a


def test_ops_on_lists_and_arrays_use_the_hooks():
    # math.assign and index setitem turn a list / NumPy value into a Tensor through core
    out = rt.assign([1.0, 2.0])
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])
    x = rt.zeros([3])
    x[1:] = np.array([4.0, 5.0])
    np.testing.assert_array_equal(x.numpy(), [0.0, 4.0, 5.0])


def test_program_and_variable_accessors():
    w = rt.to_tensor([1.0, 2.0])
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [None, 2], "float32")
        y = x * w
        y.stop_gradient = True
    assert "x" in main.names and y.name in main.names
    assert main.captured[id(w)] in main.names
    assert y.user_stop and not x.user_stop
    assert x.static_shape == (-1, 2) and x.shape == [-1, 2]
    clone = main.clone()
    assert clone.global_block().var(y.name).user_stop  # a structural copy keeps it


def test_hooks_refuse_before_install():
    with pytest.raises(RuntimeError, match="before runtime.tensor"):
        core._missing("wrap")(1)
