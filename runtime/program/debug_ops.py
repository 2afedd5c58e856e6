"""`Print` and `Assert`: ops that act when the program runs (eagerly: right away)."""
from __future__ import annotations

import numpy as np

from .. import backend
from ..ops import registry
from ..ops.registry import STATE, Meta, bind

# Ops whose effect is not their outputs: passes must never remove or reorder them.
SIDE_EFFECTS = {"print", "py_print", "assert", "write_persistable"}


def _print_kernel(xp, x, message="", name="", summarize=20):
    a = backend.to_numpy(x)
    flat = a.reshape(-1)
    shown = flat if summarize < 0 else flat[:summarize]
    print(f"{message}{' ' if message else ''}Variable: {name}\n"
          f"  - shape: {list(a.shape)}\n  - dtype: {a.dtype}\n"
          f"  - data: {np.array2string(shown, separator=' ')}", flush=True)
    return x


def _assert_kernel(xp, cond, data, message="", summarize=20):
    if not bool(xp.all(cond)):
        shown = "".join(f"\n  {np.array2string(backend.to_numpy(d).reshape(-1)[:summarize])}"
                        for d in data)
        raise AssertionError((message or "Assert failed: the condition is False") + shown)


def _py_print_kernel(xp, values, parts=(), sep=" ", end="\n", stop_gradient=()):
    wrap = registry._hooks["wrap"]
    it = iter(zip(values, stop_gradient))
    shown = []
    for p in parts:
        if p is None:
            a, stop = next(it)
            t = wrap(a)
            t.stop_gradient = stop
            shown.append(str(t))
        else:
            shown.append(p)
    print(*shown, sep=sep, end=end, flush=True)
    return ()


PY_PRINT = registry.register(
    "py_print", kernel=_py_print_kernel, infer=lambda values, **a: (), nondiff=True,
    amp="keep", doc="Python's print(*objects, sep, end) when the op runs, tensors shown as "
                    "eager mode shows them.")
PRINT = registry.register(
    "print", kernel=_print_kernel, infer=lambda x, **a: Meta(x.shape, x.dtype),
    grad=lambda ins, outs, gs, a: [gs[0]], amp="keep",
    doc="Print a tensor's name, shape, dtype and values when the op runs; returns it.")
ASSERT = registry.register(
    "assert", kernel=_assert_kernel, infer=lambda cond, data, **a: (), nondiff=True, amp="keep",
    doc="Raise AssertionError with `message` when the op runs and `cond` is not all true.")


def Print(input, first_n=-1, message=None, summarize=20, print_tensor_name=True,
          print_tensor_type=True, print_tensor_shape=True, print_tensor_lod=True,
          print_phase="both"):
    """Print `input` (name, shape, dtype, the first `summarize` values) when it is computed;
    returns `input`.

    >>> import runtime as rt
    >>> _ = rt.static.Print(rt.ones([2]), message='ones')  # doctest: +ELLIPSIS
    ones Variable: ...
    """
    name = getattr(input, "name", None) or ""
    return bind(PRINT, (input,), {"message": message or "", "name": name,
                                  "summarize": summarize})


def py_print(*objects, sep: str = " ", end: str = "\n") -> None:
    """`print(*objects, sep=sep, end=end)` with the same output as eager mode; in a static
    program tensors are printed when the program runs (Python values are formatted now).

    >>> import runtime as rt
    >>> rt.static.py_print('n =', 3, sep=' ', end='!\\n')
    n = 3!
    """
    if STATE.builder is None:
        print(*objects, sep=sep, end=end)
        return
    from .variable import Variable
    parts = [None if isinstance(o, (Variable, registry._hooks["Tensor"])) else str(o)
             for o in objects]
    tensors = [o for o in objects if isinstance(o, (Variable, registry._hooks["Tensor"]))]
    bind(PY_PRINT, (tensors,), {"parts": parts, "sep": sep, "end": end,
                                "stop_gradient": [bool(t.stop_gradient) for t in tensors]})


def Assert(cond, data=None, summarize=20, name=None, message=None):
    """Raise `AssertionError(message)` when `cond` is not all true (at run time in a static
    program), showing the values of the tensors in `data`."""
    if STATE.builder is None:
        _assert_kernel(backend.XP, cond._data if hasattr(cond, "_data") else cond,
                       [d._data for d in data or []], message or "", summarize)
        return
    bind(ASSERT, (cond, list(data or [])), {"message": message or "", "summarize": summarize})
    return
