"""Which calls share a program: keys never confuse two calls (no repr), the conversion cache
is per function (not per code object), the program cache is bounded, and arguments are
checked at the door."""
from __future__ import annotations

import collections
import functools
import importlib.util

import numpy as np
import pytest

import d2s
import runtime as rt


def _load(folder, name, source):
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_numpy_array_arguments_are_tensor_inputs_not_constants():
    @d2s.to_static
    def f(x, table):
        if rt.sum(table) > 0:
            return x + table
        return x - table

    a = np.zeros(2000, "float32")
    a[1000] = 1.0
    x = rt.ones([2000])
    np.testing.assert_allclose(f(x, a).numpy(), 1 + a)
    b = a.copy()
    b[1000] = -1.0  # one element changed: repr(a) == repr(b), the answer must still differ
    assert repr(a) == repr(b)
    np.testing.assert_allclose(f(x, b).numpy(), 1 - b)
    assert len(f.program_cache) == 1  # one program: the array is fed, keyed by shape/dtype
    assert isinstance(f(x, a), rt.Tensor)


def test_a_numpy_condition_becomes_a_graph_op():
    @d2s.to_static
    def pick(x):
        if x.sum() > 0:
            return x * 2
        return x * -1

    for arr in (np.array([1.0, 2.0], "float32"), np.array([-1.0, -2.0], "float32")):
        expected = arr * 2 if arr.sum() > 0 else -arr
        got = pick(arr)
        assert isinstance(got, rt.Tensor)
        np.testing.assert_allclose(got.numpy(), expected)
    assert len(pick.program_cache) == 1


class _Config:
    """A config object whose repr hides its fields (as many do)."""

    def __init__(self, scale):
        self.scale = scale

    def __repr__(self):
        return "<Config>"


def test_objects_with_the_same_repr_never_share_a_program():
    @d2s.to_static
    def f(x, cfg):
        return x * cfg.scale

    x = rt.ones([2])
    np.testing.assert_allclose(f(x, _Config(2.0)).numpy(), [2, 2])
    np.testing.assert_allclose(f(x, _Config(5.0)).numpy(), [5, 5])


def test_value_typed_arguments_share_programs_by_value():
    Options = collections.namedtuple("Options", "depth act")

    @d2s.to_static
    def f(x, opts, flags):
        y = x
        for _ in range(opts.depth):
            y = y + 1
        if "neg" in flags:
            y = -y
        return y

    x = rt.zeros([2])
    np.testing.assert_allclose(f(x, Options(2, "relu"), {"neg"}).numpy(), [-2, -2])
    np.testing.assert_allclose(f(x, Options(2, "relu"), {"neg"}).numpy(), [-2, -2])
    assert len(f.program_cache) == 1
    np.testing.assert_allclose(f(x, Options(3, "relu"), set()).numpy(), [3, 3])
    assert len(f.program_cache) == 2


def test_keyword_calls_reuse_the_positional_program():
    @d2s.to_static
    def f(x, n, scale=1.0):
        return x * n * scale

    x = rt.ones([3])
    f(x, 2)
    f(x, n=2)
    f(n=2, x=x)
    f(x, 2, 1.0)  # the default, passed
    f(x, 2, scale=1.0)
    assert len(f.program_cache) == 1
    np.testing.assert_allclose(f(x, 2, scale=3.0).numpy(), [6, 6, 6])
    np.testing.assert_allclose(f(x, 2, 3.0).numpy(), [6, 6, 6])
    assert len(f.program_cache) == 2


def test_the_same_function_text_in_two_modules_converts_separately(tmp_path):
    source = "import runtime as rt\n\n\ndef count(x):\n    return x + len(x)\n"
    plain = _load(tmp_path, "mod_plain", source)
    own = _load(tmp_path, "mod_own_len", source + "\n\ndef len(x):\n    return 100\n")
    assert plain.count.__code__ == own.count.__code__  # CPython's code equality ignores files
    x = rt.zeros([3])
    np.testing.assert_allclose(d2s.to_static(plain.count)(x).numpy(), [3, 3, 3])
    np.testing.assert_allclose(d2s.to_static(own.count)(x).numpy(), [100, 100, 100])


@pytest.mark.filterwarnings("ignore:d2s.*traced:UserWarning")
def test_the_program_cache_is_bounded_least_recently_used_first_out():
    @d2s.to_static
    def f(x, k):
        return x + k

    f.program_cache.max_size = 3
    x = rt.zeros([1])
    for k in range(3):
        f(x, k)
    f(x, 0)  # 0 is now the most recently used
    f(x, 10)  # evicts 1
    assert len(f.program_cache) == 3
    traces = f.program_cache.traces
    f(x, 0)
    f(x, 2)
    assert f.program_cache.traces == traces  # still cached
    np.testing.assert_allclose(f(x, 1).numpy(), [1])
    assert f.program_cache.traces == traces + 1  # traced again
    assert len(f.program_cache) == 3
    assert d2s.program_cache.ProgramCache.DEFAULT_SIZE == 64


def test_an_input_spec_dtype_is_enforced():
    spec = [rt.static.InputSpec([None, 2], "float32", name="x")]

    @d2s.to_static(input_spec=spec)
    def f(x):
        return x * 2

    with pytest.raises(TypeError, match=r"int64 tensor does not match its InputSpec dtype "
                                        r"float32"):
        f(rt.to_tensor(np.ones((3, 2), "int64")))
    got = f(np.ones((3, 2)))  # a float64 NumPy array is fed as the declared float32
    assert got.dtype == rt.float32
    np.testing.assert_allclose(got.numpy(), np.full((3, 2), 2.0))
    assert f.concrete_program.inputs[0].name == "x"


class _CallableThing:
    def __call__(self, x):
        return x


@pytest.mark.parametrize("target, what", [
    (len, "a built-in function"),
    (functools.partial(np.add, 1), "a functools.partial"),
    (_CallableThing(), "a callable _CallableThing object"),
    (_CallableThing, "a class"),
])
def test_to_static_refuses_what_has_no_source_at_decoration(target, what):
    with pytest.raises(TypeError, match=f"cannot convert {what}"):
        d2s.to_static(target)


class _Slotted:
    __slots__ = ("w",)

    def __init__(self):
        self.w = 2.0

    @d2s.to_static
    def apply(self, x):
        return x * self.w


class _Unhashable:
    def __init__(self):
        self.w = 3.0

    def __eq__(self, other):  # defines __eq__ without __hash__: instances are unhashable
        return isinstance(other, _Unhashable) and other.w == self.w

    @d2s.to_static
    def apply(self, x):
        return x * self.w


def test_methods_of_unhashable_objects_work_and_slotted_ones_get_a_clear_error():
    np.testing.assert_allclose(_Unhashable().apply(rt.ones([2])).numpy(), [3, 3])
    with pytest.raises(TypeError, match=r"d2s: .*no __dict__.*Add '__dict__' to __slots__"):
        _Slotted().apply(rt.ones([2]))


def test_a_copied_layer_runs_its_own_parameters():
    import copy

    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = rt.nn.Linear(2, 2)

        @d2s.to_static
        def forward(self, x):
            return self.fc(x)

    net = Net()
    x = rt.ones([1, 2])
    net(x)
    for clone in (copy.deepcopy(net), copy.copy(net)):
        if clone.fc is net.fc:  # a shallow copy shares its sublayers: give it its own
            clone.fc = rt.nn.Linear(2, 2)
        clone.fc.weight.set_value(np.zeros((2, 2), "float32"))
        np.testing.assert_allclose(clone(x).numpy(), clone.fc.bias.numpy()[None])
        assert not np.allclose(net(x).numpy(), clone(x).numpy()) or np.allclose(
            net.fc.weight.numpy(), 0)


def test_allocation_failures_are_memory_errors_naming_the_op():
    with pytest.raises(MemoryError, match=r"^full: .*10000000"):
        rt.zeros([10**7, 10**7])

    @d2s.to_static
    def grow(x, n):
        return rt.expand(x, [n, n]) * 2

    with pytest.raises(MemoryError, match="multiply|expand"):
        grow(rt.ones([1]), 10**7)


def test_structured_arguments_are_rebuilt_with_their_own_types():
    import dataclasses

    Pair = collections.namedtuple("Pair", "a b")

    @dataclasses.dataclass(frozen=True)
    class Batch:
        tokens: object
        scale: float = 1.0
        extra: dict = dataclasses.field(default_factory=dict)

    @d2s.to_static
    def f(batch, pair):
        # the traced code sees the user's own types
        assert (type(batch).__name__, type(pair).__name__) == ("Batch", "Pair")
        y = batch.tokens * batch.scale + pair.a * batch.extra["w"]
        if rt.mean(y) > 0:
            y = y - pair.b
        return Pair(y, batch)

    for sign in (1.0, -1.0):
        x = rt.full([3], sign)
        out = f(Batch(x, 2.0, {"w": rt.ones([3])}), Pair(rt.ones([3]), rt.full([3], 0.5)))
        assert isinstance(out, Pair) and isinstance(out.b, Batch)
        want = sign * 2.0 + 1.0
        want = want - 0.5 if want > 0 else want
        np.testing.assert_allclose(out.a.numpy(), [want] * 3)
        assert out.b.scale == 2.0
    assert len(f.program_cache) == 1  # the tensors inside were fed, not baked in
