"""Declaring program inputs: `data` and `InputSpec`."""
from __future__ import annotations

import numpy as np

from ..dtypes import DType, convert_dtype
from ..program.builder import default_main_program
from ..program.variable import Variable


def _norm_shape(shape) -> tuple:
    if isinstance(shape, int):
        shape = [shape]
    out = []
    for d in shape:
        if d is None or d == -1:
            out.append(-1)
        elif isinstance(d, (int, np.integer)) and d >= 0:
            out.append(int(d))
        else:
            raise ValueError(f"shape entries must be non-negative ints, None or -1, got {d!r}")
    return tuple(out)


def data(name: str, shape, dtype="float32", lod_level: int = 0) -> Variable:
    """Declare an input of the current program (fed by name to `Executor.run`). `None` or -1
    marks a dimension whose size is known only when the program runs.

    >>> import runtime as rt
    >>> with rt.static.program_guard(rt.static.Program()):
    ...     x = rt.static.data('x', [None, 784], 'float32')
    >>> x.shape
    [-1, 784]
    """
    program = default_main_program()
    block = program.global_block()
    if name in program._names:
        raise ValueError(f"data: a variable named {name!r} already exists in this program")
    v = block.new_var(name, _norm_shape(shape), convert_dtype(dtype), stop_gradient=True)
    program.inputs.append(name)
    program.touch()
    return v


class InputSpec:
    """The shape and dtype of an input (`None` / -1 dims are dynamic).

    >>> import runtime as rt
    >>> rt.static.InputSpec([None, 784], 'float32', name='x')
    InputSpec(shape=(-1, 784), dtype=float32, name=x, stop_gradient=True)
    """

    def __init__(self, shape, dtype="float32", name: str | None = None,
                 stop_gradient: bool = True):
        self.shape = _norm_shape(shape)
        self.dtype: DType = convert_dtype(dtype)
        self.name = name
        self.stop_gradient = stop_gradient

    @classmethod
    def from_tensor(cls, tensor, name: str | None = None) -> InputSpec:
        return cls(tensor.shape, tensor.dtype, name or getattr(tensor, "name", None))

    @classmethod
    def from_numpy(cls, ndarray, name: str | None = None) -> InputSpec:
        return cls(ndarray.shape, ndarray.dtype, name)

    def batch(self, batch_size) -> InputSpec:
        return InputSpec((batch_size,) + self.shape, self.dtype, self.name, self.stop_gradient)

    def unbatch(self) -> InputSpec:
        if not self.shape:
            raise ValueError("unbatch: the spec has no batch dimension")
        return InputSpec(self.shape[1:], self.dtype, self.name, self.stop_gradient)

    def _key(self):
        return (self.shape, self.dtype.name, self.name, self.stop_gradient)

    def __eq__(self, other):
        return isinstance(other, InputSpec) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"InputSpec(shape={self.shape}, dtype={self.dtype.name}, name={self.name}, "
                f"stop_gradient={self.stop_gradient})")
