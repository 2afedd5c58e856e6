"""`hasattr()` of values converted code computes answers as eager code's: a tensor has
`set_value`, `grad`, `is_leaf`, `numpy` and no `append` (the program's Variable had `append`,
`pop`, `program` and lacked `set_value`, `grad`: duck-typed code took another path); a list a
tensor condition sizes (a tensor array) has `append` and no `numpy`. Eager vs static through one
program on inputs whose list holds different numbers of items."""
import numpy as np

import d2s
import runtime as rt

NAMES = ("append", "pop", "set_value", "grad", "is_leaf", "numpy", "program", "is_array",
         "stop_gradient", "shape", "remove", "clear_grad", "item")


def answers(x):
    out = x * 2.0
    kept = []
    for v in (x, -x, x * 3.0):
        if v.sum() > 0:
            kept.append(v)
    return [hasattr(out, n) for n in NAMES], [hasattr(kept, n) for n in NAMES]


def as_sequence(x):
    """A helper that treats lists and tensors alike by duck typing (common in data code)."""
    out = x * 2.0
    if hasattr(out, "append"):
        return len(out)
    return out.sum()


def test_hasattr_answers_as_eager():
    static = d2s.to_static(answers)
    for row in ([1.0, 2.0], [-1.0, -2.0]):
        x = rt.to_tensor(np.asarray(row, "float32"))
        want = answers(x)
        assert static(x) == want
        assert want[0][NAMES.index("append")] is False and want[1][NAMES.index("append")]
    assert len(static.program_cache) == 1


def test_duck_typing_takes_eagers_path():
    x = rt.to_tensor(np.asarray([1.0, 2.0], "float32"))
    want, got = as_sequence(x), d2s.to_static(as_sequence)(x)
    assert isinstance(got, rt.Tensor) and float(got) == float(want) == 6.0


def append_to_a_tensor(x):
    y = x * 2.0
    y.append(1)  # (eager: AttributeError, a Tensor is no list)
    return y


def test_list_methods_of_a_tensor_raise_eagers_attribute_error():
    x = rt.to_tensor(np.asarray([1.0, 2.0], "float32"))
    for fn in (append_to_a_tensor, d2s.to_static(append_to_a_tensor)):
        try:
            fn(x)
        except AttributeError as e:
            assert str(e).startswith("'Tensor' object has no attribute 'append'"), str(e)
        else:
            raise AssertionError("no AttributeError")
