"""`layers[i](...)` with a tensor index `i`: one `switch_case` op over the layers.

`self.blocks[i](x)` in converted code calls `_d2s.call_item(self.blocks, i)(x)`. With a
Python index it is `call(self.blocks[i])(x)`, as written. With a graph index into a
`LayerList`, `Sequential` or a list/tuple of callables, every layer is traced (its own
branch) and the program runs the one `i` selects, so only that layer's parameters get
gradients. An index out of range raises `IndexError` when the program runs (as
`LayerList[i]` does eagerly); negative indices count from the end."""
from __future__ import annotations

import runtime as rt
from runtime.program.debug_ops import raise_error

from .calls import call
from .exceptions import short_name
from .try_calls import after_failure
from .try_except import open_trys
from .variables import is_variable, user_origin


def _layers(obj):
    if isinstance(obj, (rt.nn.LayerList, rt.nn.Sequential)):
        return list(obj._sub_layers.values()) if isinstance(obj, rt.nn.Sequential) else \
            list(obj)
    if isinstance(obj, (list, tuple)) and obj and all(callable(f) for f in obj):
        return list(obj)
    return None


def call_item(obj, index):
    """The callable `obj[index]` (see the module)."""
    if is_variable(index):
        layers = _layers(obj)
        if layers is not None:
            switch = _Switch(type(obj).__name__, layers, index)
            # in a `try` body: not run (nor its range check) where an earlier call of the
            # statement failed (`try_calls.after_failure`)
            return after_failure(switch) if open_trys() else switch
    return call(obj[index])


class _Switch:
    __slots__ = ("what", "layers", "index")

    def __init__(self, what: str, layers: list, index):
        self.what, self.layers, self.index = what, layers, index

    def __call__(self, *args, **kwargs):

        n = len(self.layers)
        i = self.index
        if i.dtype.kind not in "iu":
            raise TypeError(f"{self.what} indices must be integers, got a {i.dtype.name} "
                            "tensor")
        if i.ndim and not all(d == 1 for d in i.shape):
            raise TypeError(f"{self.what} index must be a tensor with one element, got "
                            f"shape {list(i.shape)}")
        i = rt.reshape(i, [])
        src = user_origin()
        at = f"{short_name(src.filename)}:{src.lineno}" if src is not None else ""
        bad = rt.logical_or(i < -n, i >= n)
        error = IndexError(f"{self.what} index is out of range for length {n}")

        def out_of_range():
            raise_error(error, at=at)

        rt.static.nn.cond(bad, out_of_range, lambda: None)
        i = rt.where(i < 0, i + n, i)
        branches = {k: (lambda layer=layer: call(layer)(*args, **kwargs))
                    for k, layer in enumerate(self.layers)}
        return rt.static.nn.switch_case(i, branches)
