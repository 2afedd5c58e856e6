"""Random numbers from one seeded generator, shared by eager and static mode.

`rt.seed(n)` resets the process-wide generator. Numbers are drawn on the host with NumPy's
PCG64 and copied to the device, so one seed gives one stream on CPU and GPU, eagerly or in a
static program (whose random ops draw when the executor runs them, in program order).

The generator API, for ops and layers that need randomness (dropout, initializers):

    gen = default_generator()        # a `Generator`
    gen.random(shape, dtype='float32', xp=None)          uniform on [0, 1)
    gen.uniform(low, high, shape, dtype='float32', xp=None)
    gen.standard_normal(shape, dtype='float32', xp=None)
    gen.normal(mean, std, shape, dtype='float32', xp=None)
    gen.integers(low, high, shape, dtype='int64', xp=None)   on [low, high)
    gen.permutation(n, dtype='int64', xp=None)
    gen.manual_seed(n) / gen.initial_seed() / gen.get_state() / gen.set_state(state)
    gen.host                          the NumPy `np.random.Generator` itself (host arrays)

Each method returns an array of the array module `xp` (default: the current device's).
`host_generator()` is `default_generator().host` and `uniform_array(xp, shape)` is
`default_generator().random(shape, xp=xp)`.

Random ops are registered with `random_op`: nondiff, and flagged `OpDef.random`. Program passes
must not constant-fold, deduplicate (CSE) or hoist them, and removing an unused one shifts
the numbers later ops draw (eager mode draws them all).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..dtypes import convert_dtype, default_float, int64
from . import infer as I
from .creation import infer_shape, is_tensor, resolve_shape, shape_args
from .registry import OPS, Meta, OpError, OpTypeError, bind, register
from .shape import shape as shape_of


class Generator:
    """A seeded random stream (see the module docstring for the API).

    >>> import runtime as rt
    >>> g = rt.ops.random.Generator(7)
    >>> g.integers(0, 10, [3]).tolist()
    [9, 6, 6]
    """

    def __init__(self, seed: int | None = None):
        self.manual_seed(np.random.SeedSequence().entropy if seed is None else seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self.host = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        return self.host.bit_generator.state

    def set_state(self, state: dict) -> None:
        self.host.bit_generator.state = state

    @staticmethod
    def _out(a, dtype, xp):
        a = a.astype(convert_dtype(dtype).np, copy=False)
        xp = backend.XP if xp is None else xp
        return a if xp is np else xp.asarray(a)

    def random(self, shape, dtype="float32", xp=None):
        return self._out(self.host.random(tuple(shape)), dtype, xp)

    def uniform(self, low, high, shape, dtype="float32", xp=None):
        return self._out(self.host.uniform(low, high, tuple(shape)), dtype, xp)

    def standard_normal(self, shape, dtype="float32", xp=None):
        return self._out(self.host.standard_normal(tuple(shape)), dtype, xp)

    def normal(self, mean, std, shape, dtype="float32", xp=None):
        return self._out(self.host.normal(mean, std, tuple(shape)), dtype, xp)

    def integers(self, low, high, shape, dtype="int64", xp=None):
        return self._out(self.host.integers(low, high, tuple(shape)), dtype, xp)

    def permutation(self, n, dtype="int64", xp=None):
        return self._out(self.host.permutation(int(n)), dtype, xp)


_DEFAULT = Generator()


def default_generator() -> Generator:
    """The process-wide generator that `seed` resets and every random op draws from."""
    return _DEFAULT


def host_generator() -> np.random.Generator:
    """The default generator's NumPy side (host arrays), e.g. for initializers."""
    return _DEFAULT.host


def uniform_array(xp, shape, dtype="float32"):
    """Uniform [0, 1) numbers of array module `xp` from the default generator (dropout)."""
    return _DEFAULT.random(shape, dtype, xp)


def seed(n: int) -> Generator:
    """Reset the default generator: the same seed gives the same numbers afterwards.

    >>> import runtime as rt
    >>> _ = rt.seed(3); a = rt.rand([2]).tolist()
    >>> _ = rt.seed(3); a == rt.rand([2]).tolist()
    True
    """
    return _DEFAULT.manual_seed(n)


def get_rng_state() -> dict:
    """The default generator's state (plain data), for `set_rng_state`."""
    return _DEFAULT.get_state()


def set_rng_state(state: dict) -> None:
    _DEFAULT.set_state(state)


# ---- ops -------------------------------------------------------------------------------------

def random_op(name: str, *, kernel, infer, doc: str):
    """Register an op that draws from the generator at run time (`OpDef.random`)."""
    return register(name, kernel=kernel, infer=infer, nondiff=True, amp="keep", doc=doc,
                    random=True)


def is_random(op) -> bool:
    """True for ops whose kernels draw random numbers (`op` is an OpDef or a name)."""
    opdef = OPS.get(op) if isinstance(op, str) else op
    return opdef is not None and opdef.random


def _gen(seed):
    """A per-op seed (Paddle's `seed=` argument) gives a fixed stream; 0 the default one."""
    return Generator(seed) if seed else _DEFAULT


def _shaped_infer(op: str, *, floating: bool):
    def rule(*dims, shape, dtype, **_):
        out = infer_shape(op, shape, dims)
        if shape is not None and any(d is not None and d < 0 for d in shape):
            raise OpError(f"{op}: shape {list(shape)} has a negative dim")
        dt = convert_dtype(dtype)
        if floating and not dt.is_floating:
            raise OpTypeError(f"{op}: dtype must be a floating type, got {dt.name}")
        if not floating and not dt.is_integer:
            raise OpTypeError(f"{op}: dtype must be an integer type, got {dt.name}")
        return Meta(out, dt)
    return rule


UNIFORM = random_op(
    "uniform_random", infer=_shaped_infer("uniform_random", floating=True),
    kernel=lambda xp, *dims, shape, dtype, min=-1.0, max=1.0, seed=0: _gen(seed).uniform(
        min, max, resolve_shape(shape, dims), dtype, xp),
    doc="Uniform numbers on [min, max).")
GAUSSIAN = random_op(
    "gaussian_random", infer=_shaped_infer("gaussian_random", floating=True),
    kernel=lambda xp, *dims, shape, dtype, mean=0.0, std=1.0, seed=0: _gen(seed).normal(
        mean, std, resolve_shape(shape, dims), dtype, xp),
    doc="Normal numbers with the given mean and std.")
_RANDINT_SHAPE = _shaped_infer("randint", floating=False)


def _randint_infer(*ins, tensor_bounds=False, **attrs):
    """With `tensor_bounds`, the last two inputs are low and high (one int each)."""
    if tensor_bounds:
        *ins, low, high = ins
        for arg, bound in (("low", low), ("high", high)):
            if I.is_meta(bound) and (not bound.dtype.is_integer or
                                     bound.shape not in ((), (1,)) and -1 not in bound.shape):
                raise OpTypeError(f"randint: {arg} must be an int or a one-value int tensor, "
                                  f"got {bound.dtype.name}{I.fmt(bound.shape)}")
    return _RANDINT_SHAPE(*ins, **attrs)


def _randint_kernel(xp, *ins, shape, dtype, low=0, high=1, seed=0, tensor_bounds=False):
    if tensor_bounds:
        *ins, low, high = ins
        low, high = int(low), int(high)
        if high <= low:
            raise OpError(f"randint: high ({high}) must be greater than low ({low})")
    return _gen(seed).integers(low, high, resolve_shape(shape, ins), dtype, xp)


RANDINT = random_op("randint", infer=_randint_infer, kernel=_randint_kernel,
                    doc="Integers on [low, high) (bounds as attrs, or as the last two inputs "
                        "with `tensor_bounds`).")


def _randperm_infer(n, dtype):
    if not isinstance(n, int) or n < 0:
        raise OpError(f"randperm: n must be a non-negative int, got {n!r}")
    return Meta((n,), convert_dtype(dtype))


RANDPERM = random_op("randperm", infer=_randperm_infer,
                     kernel=lambda xp, n, dtype: _DEFAULT.permutation(n, dtype, xp),
                     doc="A random permutation of 0 .. n-1.")


def _bernoulli_infer(x):
    I.check_tensor("bernoulli", "x", x)
    if not x.dtype.is_floating:
        raise OpTypeError(f"bernoulli: x (probabilities) must be floating, got {x.dtype.name}")
    return Meta(x.shape, x.dtype)


def _probabilities(x):
    if x.dtype.kind != "f":
        raise OpTypeError(f"bernoulli: x (probabilities) must be floating, got {x.dtype}")
    return x


BERNOULLI = random_op(
    "bernoulli", infer=_bernoulli_infer,
    kernel=lambda xp, x: (_DEFAULT.random(x.shape, "float64", xp) < _probabilities(x)).astype(
        x.dtype),
    doc="1 with probability x, else 0 (elementwise).")


def _float_dtype(op: str, dtype) -> str:
    dt = default_float() if dtype is None else convert_dtype(dtype)
    if not dt.is_floating:
        raise OpTypeError(f"{op}: dtype must be a floating type, got {dt.name}")
    return dt.name


def _shaped(op_def, shape, attrs):
    attr, dims = shape_args(op_def.name, shape)
    return bind(op_def, dims, {"shape": attr, **attrs})


def uniform(shape, dtype=None, min: float = -1.0, max: float = 1.0, seed: int = 0,
            name=None):
    """Uniform numbers on [min, max) (float32 by default). A non-zero `seed` makes this call
    draw from its own fixed stream.

    >>> import runtime as rt
    >>> x = rt.uniform([2, 3], min=0.0, max=2.0)
    >>> bool((x >= 0).all() and (x < 2).all())
    True
    """
    attrs = {"dtype": _float_dtype("uniform_random", dtype), "min": float(min), "max": float(max)}
    if seed:
        attrs["seed"] = int(seed)
    return _shaped(UNIFORM, shape, attrs)


def rand(shape, dtype=None, name=None):
    """Uniform numbers on [0, 1).

    >>> import runtime as rt
    >>> rt.rand([2, 2]).shape
    [2, 2]
    """
    return uniform(shape, dtype, 0.0, 1.0)


def standard_normal(shape, dtype=None, name=None):
    """Normal numbers with mean 0 and std 1.

    >>> import runtime as rt
    >>> rt.standard_normal([3]).dtype == 'float32'
    True
    """
    return _shaped(GAUSSIAN, shape, {"dtype": _float_dtype("gaussian_random", dtype)})


randn = standard_normal


def normal(mean=0.0, std=1.0, shape=None, name=None):
    """Normal numbers. `mean` and `std` are floats (then `shape` is required) or tensors
    (the result takes their broadcast shape).

    >>> import runtime as rt
    >>> rt.normal(2.0, 0.5, [4]).shape
    [4]
    """
    numbers = [getattr(v, "python_scalar", False) for v in (mean, std)]
    if any(numbers) and not any(is_tensor(v) and not n for v, n in zip((mean, std), numbers)):
        if shape is None:  # (`float(t)` of converted code: a number, the run's value)
            raise OpError("normal: shape is required when mean and std are numbers")
        return standard_normal(shape, default_float()) * std + mean
    if is_tensor(mean) or is_tensor(std):
        ref = mean + std if is_tensor(mean) and is_tensor(std) else (
            mean if is_tensor(mean) else std)
        base = standard_normal(shape_of(ref), ref.dtype)
        return base * std + mean
    if shape is None:
        raise OpError("normal: shape is required when mean and std are numbers")
    return _shaped(GAUSSIAN, shape, {"dtype": default_float().name, "mean": float(mean),
                                     "std": float(std)})


def randint(low: int = 0, high: int | None = None, shape=(1,), dtype=None, name=None):
    """Integers on [low, high) (int64 by default); with only `low`, on [0, low). The bounds
    may be one-value int tensors (checked when the op runs).

    >>> import runtime as rt
    >>> x = rt.randint(0, 3, [10])
    >>> bool((x >= 0).all() and (x < 3).all())
    True
    """
    if high is None:
        low, high = 0, low
    dtype = (int64 if dtype is None else convert_dtype(dtype)).name
    if is_tensor(low) or is_tensor(high):  # e.g. the counter of a graph loop
        attr, dims = shape_args("randint", shape)
        return bind(RANDINT, (*dims, low, high), {"shape": attr, "dtype": dtype,
                                                  "tensor_bounds": True})
    if not isinstance(low, numbers.Integral) or not isinstance(high, numbers.Integral):
        raise OpTypeError(f"randint: low and high must be ints, got {low!r} and {high!r}")
    if high <= low:
        raise OpError(f"randint: high ({high}) must be greater than low ({low})")
    return _shaped(RANDINT, shape, {"dtype": dtype, "low": int(low), "high": int(high)})


def randperm(n: int, dtype="int64", name=None):
    """A random permutation of 0 .. n-1.

    >>> import runtime as rt
    >>> sorted(rt.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    return bind(RANDPERM, (), {"n": int(n), "dtype": convert_dtype(dtype).name})


def bernoulli(x, name=None):
    """1 with probability x[i], else 0, with x's dtype.

    >>> import runtime as rt
    >>> rt.bernoulli(rt.to_tensor([0.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    return bind(BERNOULLI, (x,), {})


METHODS: dict = {}

__all__ = ["bernoulli", "get_rng_state", "normal", "rand", "randint", "randn", "randperm",
           "seed", "set_rng_state", "standard_normal", "uniform"]
