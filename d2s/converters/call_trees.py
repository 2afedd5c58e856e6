"""Calls to functions that may need converting go through `_d2s.call`.

    y = helper(x)          ->   y = _d2s.call(helper)(x)
    h = self.block(h)      ->   h = _d2s.call(self.block)(h)
    z = rt.matmul(x, w)    ->   z = rt.matmul(x, w)          (unchanged)

`_d2s.call(f)` converts user functions, methods, lambdas and Layers at trace time (see
`d2s/operators/calls.py`). To keep the generated code readable and the trace cheap, a call is left
alone when the callee can be resolved now (through the function's globals, closure and
built-ins) to something that is never converted (the runtime, NumPy, the standard library,
classes, built-ins), or when it is a Tensor method on a local variable (`x.sum()`).
`layers[i](x)` becomes `_d2s.call_item(layers, i)(x)` (a tensor `i`: a `switch_case` over the
layers, see `d2s.operators.switch`). Zero-argument `super()` becomes `super(__class__, self)`: generated helper functions have no
implicit class cell of their own.
"""
from __future__ import annotations

import builtins
import logging
import operator
import types
import warnings

import gast

from .. import hidden_state
from ..call_policy import TENSOR_METHODS, ignored_module, never_converted
from ..pyct import templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base

HANDLES = (gast.Call,)  # the pass is skipped when none of these is present
CREATES = ()
NEEDS_ANALYSIS = False
_UNKNOWN = object()
# calls that become ops acting when the program runs, as eager code's do each time
_MESSAGES = (warnings.warn, *(getattr(logging, name) for name in (
    "debug", "info", "warning", "error", "critical", "fatal", "log") if hasattr(logging, name)))
# `operator.ior(tags, seen)` & co.: in place on a caller's set beside a set converted code
# made, as `tags |= seen` (`operators.made_sets.in_place_function`)
_IN_PLACE_SETS = (operator.iand, operator.ior, operator.isub, operator.ixor)


class CallTrees(Base):
    def visit_FunctionDef(self, node):
        return self.visit_in_scope(node)  # its local names are its `LOCALS`

    def visit_Lambda(self, node):
        return self.visit_in_scope(node)

    def visit_Call(self, node):
        return self.route(self.generic_visit(node))

    def route(self, node):
        """`node` (a call whose parts are converted) as the converted code makes it."""
        f = node.func
        if isinstance(f, gast.Name) and f.id == "super" and not node.args:
            if "__class__" in self.ctx.namespace and self.ctx.owner:
                node.args = [templates.name("__class__"), templates.name(self.ctx.owner)]
            return node
        if isinstance(f, gast.Subscript) and not isinstance(f.slice, gast.Slice):
            # `layers[i](x)`: a tensor `i` selects the layer when the program runs
            node.func = templates.replace_as_expression(f"{RESERVED}.call_item(obj, index)",
                                                        obj=f.value, index=f.slice)
            return node
        if self._leave_alone(f):
            return node
        node.func = templates.replace_as_expression(f"{RESERVED}.call(f)", f=f)
        return node

    def _leave_alone(self, f) -> bool:
        root = f
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name):
            return False
        if root.id == RESERVED or root.id in self.ctx.namer.generated:
            return True
        if self.is_local(root.id):
            # `x.sum()` on a local tensor; `self.fc(x)`, `helper(x)` and `meter.add(v)` (a
            # local that may hold a user object: `receivers`) may be user code
            return (isinstance(f, gast.Attribute) and f.value is root
                    and root.id != self.ctx.owner and f.attr in TENSOR_METHODS
                    and self.ctx.receivers.library(root.id))
        obj = self._resolve(f)
        if obj is _UNKNOWN or hidden_state.describe(obj) is not None:
            return False  # a random draw or a clock: `_d2s.call` refuses it when tracing
        if obj in _MESSAGES:
            return False  # an op warning / logging when the program runs
            # (`operators.warning_calls`, `operators.logging_calls`)
        if any(obj is fn for fn in _IN_PLACE_SETS):
            return False
        try:
            if obj in hidden_state.SEEDED_CONSTRUCTORS:
                return False  # `_d2s.call` remembers the generators made in the call
        except TypeError:
            pass
        if isinstance(obj, type) and not ignored_module(obj.__module__):
            return False  # a user class: `_d2s.call` remembers the objects made while tracing
        if _reads_containers(obj):
            return False  # `deque(d)`, `json.dumps(d)`: refused where `d`'s keys differ per
            # path (`operators.key_flags.checked_call`)
        return never_converted(obj)

    def _resolve(self, f):
        if isinstance(f, gast.Name):
            if f.id in self.ctx.namespace:
                return self.ctx.namespace[f.id]
            return getattr(builtins, f.id, _UNKNOWN)
        if isinstance(f, gast.Attribute):
            base = self._resolve(f.value)
            if isinstance(base, types.ModuleType):  # attributes of modules are safe to read
                return getattr(base, f.attr, _UNKNOWN)
        return _UNKNOWN


# standard-library modules whose functions and classes read the keys of a dict given to them
_KEY_READERS = frozenset(("collections", "_collections", "itertools", "json", "heapq",
                          "_heapq", "functools", "_functools", "statistics", "pprint",
                          "pickle", "_pickle", "csv", "_csv"))


def _reads_containers(obj) -> bool:
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        return False
    return module.split(".")[0] in _KEY_READERS


def transform(node, ctx):
    return CallTrees(ctx).visit(node)
