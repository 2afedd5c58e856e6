"""Python's `ZeroDivisionError` for `/`, `//`, `%` (and `**` of a negative power) of values
standing for Python numbers.

`int(t)`, `float(t)` and `t.item()` of a traced tensor stand for Python numbers
(`Variable.python_scalar`); arithmetic on them follows Python's rules. Dividing such a number
by one that is zero raises `ZeroDivisionError` in eager code, where the array division of the
program would give `inf`, `nan` or `0` silently. `Builder.bind` asks `check` about every op
whose operands all stand for Python numbers: a divisor that is a value of the program gets a
run-time check raising eager's exception (class and message) where it is zero. A divisor that
is a Python number is Python's own (`n / 0` raises while tracing, as eagerly), and an operand
from `numpy()` follows NumPy (inf and a warning, no exception), as eager code does.

`CHECK[0](divisor, error)` builds the check and returns the divisor to use (by default
`control_flow.raise_where_zero`, installed where it is defined); the layer above (d2s) installs one that hands the
error to an open `try` whose `except` clause catches it.
"""
from __future__ import annotations

from .variable import Variable

OPS = frozenset({"divide", "floor_divide", "remainder", "pow"})

# (op, an operand is a float) -> Python's message
_MESSAGES = {
    ("divide", False): "division by zero", ("divide", True): "float division by zero",
    ("floor_divide", False): "integer division or modulo by zero",
    ("floor_divide", True): "float floor division by zero",
    ("remainder", False): "integer modulo by zero", ("remainder", True): "float modulo",
}


def error_of(op_name: str, operands) -> ZeroDivisionError:
    """The exception Python raises for `op_name` of `operands` with a zero divisor."""
    is_float = any(isinstance(x, float) or isinstance(x, Variable) and x.dtype.kind == "f"
                   for x in operands)
    return ZeroDivisionError(_MESSAGES[op_name, is_float])


def check(op_name: str, operands):
    """Called by `Builder.bind` before it builds a division (`OPS`): where every operand
    stands for a Python number and the divisor is a value of the program, the check. Returns
    the operands to divide (the divisor `CHECK` gives)."""
    if CHECK[0] is None or len(operands) != 2 or not all(
            isinstance(x, (int, float)) or isinstance(x, Variable) and x.python_scalar and
            not x.numpy_array and not x.shape for x in operands):
        return operands  # (a tensor operand: array division, as eagerly)
    if op_name == "pow":
        return _power(operands)
    divisor = operands[1]
    if not isinstance(divisor, Variable):
        return operands
    return type(operands)((operands[0], CHECK[0](divisor, error_of(op_name, operands))))


def _power(operands):
    """`base ** e` with a Python number `e < 0`: Python's result is a float (`2 ** -1` is
    0.5, where an int array's power refuses a negative exponent), and a zero base raises
    `ZeroDivisionError` (NumPy: inf)."""
    from ..ops.math import cast

    base, exponent = operands
    if not isinstance(base, Variable) or isinstance(exponent, Variable) or exponent >= 0:
        return operands
    if base.dtype.kind != "f":
        base = cast(base, "float64")
        base.python_scalar = True
    error = ZeroDivisionError("0.0 cannot be raised to a negative power")
    return type(operands)((CHECK[0](base, error), exponent))


def nonzero(divisor, zero):
    """`divisor`, 1 where the bool value `zero` is true: a division whose error an `except`
    clause takes instead divides by 1 there (its result is never seen), without NumPy's
    divide-by-zero warning, which eager code does not show."""
    from ..ops.logic import where

    return where(zero, 1, divisor)


CHECK: list = [None]  # (control_flow.raise_where_zero; None: no check)
