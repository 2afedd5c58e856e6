"""The mutation log: state found by object, not by name.

While a branch of a tensor `if` or the body of a graph loop is traced, Python code may change
objects the block does not name as state: a tensor written in place through an alias
(`view = y; view[0] = 0`), a container changed at any depth or through a helper
(`cache["l0"]["k"] = v`, `log.append(v)` in a closure), an attribute of an object
(`self.count += 1`, `o.t = h`), a closure cell (`nonlocal acc`) or a module global.

`Log` walks everything reachable from the block's functions (their closure cells, the globals
their code names, the state passed in) and takes a shallow snapshot of each mutable object:
lists, dicts, objects of user classes and Layers (their `__dict__`), closure cells, referenced
globals and graph values (a `Variable` written in place changes which program value the same
Python object refers to). After the block traced, `changed()` diffs against the snapshot; the
changed places ("slots") become extra outputs of the `cond` / `while` op, the snapshot is
restored (so the other branch, or the real loop trace, starts from the same objects), and
after the op each slot is set to the op's output (every alias sees it, as in Python).

User classes are walked too (their attributes: `Block.calls += 1`, not their methods). Never
walked: modules, library classes and functions, eager Tensors (leaves: the trace never writes
them), objects of library classes other than Layers and attribute bags (`_BAGS`).
"""
from __future__ import annotations

import collections
import copy
import sys
import types

import runtime as rt

from ..errors import ConversionError
from .block_functions import carried_cells
from .branch_mismatch import MISSING as _MISSING
from .branch_mismatch import advice as _advice
from .branch_mismatch import changed_deque
from .branch_mismatch import mismatch as _mismatch
from .branch_mismatch import not_one_array as _not_one_array
from .branch_sets import set_changed, set_values, sets_aside, undecided_aside, undecided_ids
from .variables import Undefined, is_return_value, is_variable, where

_LIBRARY_ROOTS = {"runtime", "d2s", "numpy", "gast", "ml_dtypes", "cupy", "pytest",
                  "_pytest", "pluggy", "hypothesis"} | set(sys.stdlib_module_names)
_LIMIT = 20000  # objects walked per block at most; beyond it, more are not tracked
MISSING = _MISSING  # a place that holds nothing (an attribute or key not set)
_BAGS = ("SimpleNamespace", "Namespace")  # (`types`', `argparse`'s: a trainer's state, a config)


class StateChangeError(ConversionError, ValueError):
    """A change to mutable state inside a tensor `if` or graph loop that one static program
    cannot represent (a dict key or attribute set in one branch only, a list whose length
    depends on a tensor condition, an object of another type in each branch)."""


_DESCRIPTORS = (property, classmethod, staticmethod, types.MemberDescriptorType,
                types.GetSetDescriptorType)


def _library(obj) -> bool:
    mod = getattr(obj, "__module__", None) or ""
    return mod.split(".", 1)[0] in _LIBRARY_ROOTS


def _ours(cls) -> bool:
    return (getattr(cls, "__module__", None) or "").split(".", 1)[0] in ("runtime", "d2s")


def _is_layer(obj) -> bool:
    from runtime import nn
    return isinstance(obj, nn.Layer)


def _code_names(code, out: set) -> set:
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)
    return out


class Slot:
    """One changed place of `kind` 'list' (its contents), 'set' (its items, a tuple), 'dict'
    (one key), 'attr', 'cell', 'global' (a module global), 'var' (what a Variable refers to)."""

    __slots__ = ("obj", "kind", "key", "path", "grew", "sample")

    def __init__(self, obj, kind, key, path, grew=False, sample=None):
        self.obj, self.kind, self.key, self.path = obj, kind, key, path
        self.grew = grew  # a list whose length changed
        self.sample = sample  # (a list that grew: its last item then, showing the item type)

    def ident(self):
        return (id(self.obj), self.kind, self.key)

    def get(self):
        o, k = self.obj, self.kind
        if k == "list":
            return list(o)
        if k == "set":
            return tuple(o)
        if k in ("dict", "global"):
            return o.get(self.key, _MISSING)
        if k == "attr":
            return vars(o).get(self.key, _MISSING)
        if k == "cell":
            try:
                return o.cell_contents
            except ValueError:
                return _MISSING
        return o  # var

    def set(self, value) -> None:
        o, k = self.obj, self.kind
        if k == "list":
            o[:] = value
        elif k == "set":
            o.clear()
            o.update(value)
        elif k in ("dict", "global"):
            if value is _MISSING:
                o.pop(self.key, None)
            else:
                o[self.key] = value
        elif k == "attr":
            if value is _MISSING:
                if isinstance(o, type):
                    if self.key in vars(o):
                        delattr(o, self.key)
                else:
                    vars(o).pop(self.key, None)
            else:
                try:
                    setattr(o, self.key, value) if not _is_layer(o) else _set_layer_attr(
                        o, self.key, value)
                except AttributeError:  # a frozen dataclass: restore as its own code would
                    object.__setattr__(o, self.key, value)
        elif k == "cell":
            if value is not _MISSING:
                o.cell_contents = value
        elif is_variable(value):  # var: this Python object now refers to `value`'s value
            retarget(o, vars(value))
        else:
            raise StateChangeError(f"{self.path} is a tensor replaced by "
                                   f"{type(value).__name__}")


def retarget(var, fields: dict) -> None:
    """Make the Python object `var` refer to the program value described by `fields` (another
    Variable's attributes). The program's table of variables keeps one record per name whose
    name is that name: the record `var` was for its old name is replaced by a copy."""
    if vars(var) == fields:
        return
    table = getattr(getattr(var, "block", None), "vars", None)
    if table is not None and table.get(var.name) is var:
        table[var.name] = copy.copy(var)
    shares = vars(var).get("shares")  # (which handles share memory belongs to the handle)
    vars(var).clear()
    vars(var).update(fields)
    vars(var).pop("shares", None)
    if shares is not None:
        var.shares = shares


def _set_layer_attr(layer, key, value):
    """Layers keep parameters and sub-layers in their own dicts; a plain attribute (a tensor
    or number state such as `self.count`) is set as usual; a buffer in its registry too (a
    trace rebinds it to a graph value, as eager code to a new tensor)."""
    buffers = vars(layer).get("_buffers")
    if buffers is not None and key in buffers:
        buffers[key] = value  # (mirrored into `__dict__` by the registry)
    elif key in vars(layer):
        vars(layer)[key] = value
    else:
        setattr(layer, key, value)


def freeze(v):
    """The value now, detached from later in-place changes: containers are copied (nested),
    a Variable object is copied (its snapshot may be restored afterwards)."""
    if is_variable(v):
        return copy.copy(v)
    if type(v) is list:
        return [freeze(x) for x in v]
    if isinstance(v, list):  # d2s's empty-array marker
        return type(v)(freeze(x) for x in v)
    if type(v) is tuple:
        return tuple(freeze(x) for x in v)
    if type(v) is dict:
        return {k: freeze(x) for k, x in v.items()}
    if isinstance(v, dict):  # OrderedDict, an AttrDict config: the same type
        out = copy.copy(v)
        for k, x in v.items():
            out[k] = freeze(x)
        return out
    return v


class Log:
    """Snapshot of the objects reachable from a block (see the module docstring)."""

    def __init__(self, fns, args, names, src, track_variables=True, sets=False):
        self.src, self.read_after = src, ()  # (sets read after an `if`: `branch_sets`)
        self.track_variables = track_variables
        self.sets = sets  # (sets are put back between the traces of a graph block's code)
        self.set_items: dict = {}  # a set's slot ident -> its items after each branch traced
        # (sets an `if` left undecided before this block / inside it: `branch_sets`)
        self.undecided_before, self.doubts = undecided_ids() if sets else frozenset(), {}
        self.names = names
        self.seen: dict = {}      # id -> (obj, kind, path, snapshot)
        self.slots: list = []     # changed slots, in the order found
        self.kept: list = []      # each traced branch's state outputs before freezing
        self.probed = False       # a loop body was traced (in a scratch block) and diffed
        self._ids: set = set()
        self.quiet: set = set()  # ids of objects restored after a block but not carried
        self._skip = carried_cells(fns, names)  # (the block carries them by name)
        self.arg_ids = {id(a) for a in args}  # the state passed in (carried by name)
        self._stack = []
        for fn in fns:
            self._visit(fn, getattr(fn, "__name__", "function"))
        for name, a in zip(names, args):
            self._visit(a, name)
        self._run()

    # ---- the walk ----
    def _visit(self, obj, path):
        if obj is None or isinstance(obj, (int, float, str, bytes, bool, complex, Undefined)):
            return
        if id(obj) in self.seen or len(self.seen) >= _LIMIT:
            return
        self._stack.append((obj, path))

    def _add(self, obj, kind, path, snap):
        self.seen[id(obj)] = (obj, kind, path, snap)

    def _run(self):
        while self._stack:
            obj, path = self._stack.pop()
            if id(obj) in self.seen:
                continue
            if is_variable(obj):
                if self.track_variables:
                    self._add(obj, "var", path, dict(vars(obj)))
                else:
                    self.seen[id(obj)] = (obj, None, path, None)
                for other in obj.shares:  # `y = x.detach()`: a write into y also changes x
                    self._visit(other, path)
            elif isinstance(obj, type) and not _library(obj) and not _ours(obj):
                self._walk_class(obj, path)
            elif isinstance(obj, rt.Tensor) or isinstance(obj, (type, types.ModuleType)):
                self.seen[id(obj)] = (obj, None, path, None)
            elif isinstance(obj, list):  # also d2s's empty-array marker (a list subclass)
                self._add(obj, "list", path, tuple(obj))
                for i, x in enumerate(obj):
                    self._visit(x, f"{path}[{i}]")
            elif type(obj) is dict or isinstance(obj, dict) and not _ours(type(obj)):
                # (also OrderedDict, defaultdict, AttrDict configs; a Layer's registries
                # mirror into its __dict__, which is walked instead)
                self._add(obj, "dict", path, dict(obj))
                for k, x in obj.items():
                    self._visit(x, f"{path}[{k!r}]")
            elif isinstance(obj, collections.deque):  # (not followed: refused if changed)
                self._add(obj, "deque", path, tuple(obj))
            elif isinstance(obj, set) and self.sets:  # (also a made set: `made_sets`)
                self._add(obj, "set", path, tuple(obj))
            elif type(obj) is tuple:
                self.seen[id(obj)] = (obj, None, path, None)
                for i, x in enumerate(obj):
                    self._visit(x, f"{path}[{i}]")
            elif isinstance(obj, types.CellType):
                self._walk_cell(obj, path)
            elif isinstance(obj, types.FunctionType):
                self.seen[id(obj)] = (obj, None, path, None)
                self._walk_function(obj)
            elif isinstance(obj, types.MethodType):
                self.seen[id(obj)] = (obj, None, path, None)
                self._visit(obj.__func__, path)
                self._visit(obj.__self__, path.rsplit(".", 1)[0] if "." in path else "self")
            elif hasattr(obj, "__dict__") and (_is_layer(obj) or not _library(type(obj))
                                               or type(obj).__name__ in _BAGS):
                self._walk_object(obj, path)
            else:
                self.seen[id(obj)] = (obj, None, path, None)

    def _walk_class(self, cls, path) -> None:
        """A user class: its attributes are state (`Model.calls += 1`, a class-level
        registry); methods and descriptors are not walked."""
        d = vars(cls)
        self._add(cls, "cls", path, dict(d))
        for k, x in d.items():
            if not (callable(x) or isinstance(x, _DESCRIPTORS) or k.startswith("__")):
                self._visit(x, f"{path}.{k}")
            elif isinstance(x, (types.FunctionType, staticmethod, classmethod)):
                # its closure and globals: a method can append to a list it closes over
                # (`trace.append(h)` in a Layer defined inside a function)
                self._visit(getattr(x, "__func__", x), f"{path}.{k}")

    def _walk_cell(self, cell, path) -> None:
        if id(cell) in self._skip:
            self.seen[id(cell)] = (cell, None, path, None)
            return
        try:
            v = cell.cell_contents
        except ValueError:
            v = _MISSING
        self._add(cell, "cell", path, v)
        self._visit(v, path)

    def _walk_function(self, fn) -> None:
        """A user function's closure cells and the globals its code names; d2s's wrappers of
        a user block: the functions they close over."""
        ours = (fn.__module__ or "").startswith("d2s.operators")
        if _library(fn) and not ours:
            return
        code = fn.__code__
        if ours:
            for c in fn.__closure__ or ():
                try:
                    v = c.cell_contents
                except ValueError:
                    continue
                if isinstance(v, (types.FunctionType, types.MethodType)):
                    self._visit(v, getattr(v, "__name__", "function"))
            return
        for n, c in zip(code.co_freevars, fn.__closure__ or ()):
            self._visit(c, n)
        g = fn.__globals__
        names = [n for n in _code_names(code, set()) if n in g]
        gid = id(g)
        entry = self.seen.get(("globals", gid))
        if entry is None:
            entry = self.seen[("globals", gid)] = (g, "globals", "", {})
        for n in names:
            if n not in entry[3]:
                entry[3][n] = g[n]
                self._visit(g[n], n)

    def _walk_object(self, obj, path) -> None:
        d = vars(obj)
        self._add(obj, "obj", path, dict(d))
        for k, x in d.items():
            self._visit(x, f"{path}.{k}")
        for cls in type(obj).__mro__:  # its user classes: their methods' state
            if not (_library(cls) or _ours(cls)) and cls is not object:
                self._visit(cls, f"type({path})")

    # ---- after a block traced ----
    def changed(self) -> list:
        """Slots changed since the snapshot that were not found before (also remembered)."""
        new = []
        for key, (obj, kind, path, snap) in list(self.seen.items()):
            if kind is None or kind == "private" or key in self.quiet:
                continue
            if kind == "deque" and self.src is not None and changed_deque(obj, snap):
                raise StateChangeError(changed_deque(obj, snap, path, self.src), self.src)
            for slot in _diff(obj, kind, path, snap):
                if slot.ident() not in self._ids:
                    self._ids.add(slot.ident())
                    self.slots.append(slot)
                    new.append(slot)
        return new

    def changed_now(self) -> list:
        """Slots changed since the snapshot, found anew (`changed` without remembering)."""
        return [s for k, (o, kind, p, snap) in list(self.seen.items()) if kind not in (
            None, "private") and k not in self.quiet for s in _diff(o, kind, p, snap)]

    def scratch_end(self, probed: bool = False) -> None:
        """A scratch trace of a loop body ended: remember what it changed, put it back."""
        self.changed()
        self.restore()
        self.probed = self.probed or probed

    def carry_by_name(self, obj) -> None:
        """`obj` (a list becoming a tensor array under its state name) is carried by name:
        still put back after each block, never an extra output."""
        self.quiet.add(id(obj))
        self.slots = [s for s in self.slots if s.obj is not obj]
        self._ids = {i for i in self._ids if i[0] != id(obj)}

    def places(self) -> list:
        """Every place the walk found (a slot per list, dict key, attribute, cell and
        referenced global)."""
        out = []
        for obj, kind, path, snap in self.seen.values():
            if kind == "list":
                out.append(Slot(obj, "list", None, path))
            elif kind == "dict":
                out += [Slot(obj, "dict", k, f"{path}[{k!r}]") for k in obj]
            elif kind == "obj":
                out += [Slot(obj, "attr", k, f"{path}.{k}") for k in vars(obj)]
            elif kind == "cls":
                out += [Slot(obj, "attr", k, f"{path}.{k}") for k in snap
                        if not k.startswith("__")]
            elif kind == "globals":
                out += [Slot(obj, "global", k, k) for k in snap]
            elif kind == "cell":
                out.append(Slot(obj, "cell", None, path))
        return out

    def values(self) -> list:
        return [freeze(s.get()) for s in self.slots]

    def restore(self) -> None:
        for obj, kind, _, snap in self.seen.values():
            if kind == "list":
                if len(obj) != len(snap) or any(a is not b for a, b in zip(obj, snap)):
                    obj[:] = snap
            elif kind == "set":
                if set_changed(obj, snap):
                    obj.clear()
                    obj.update(snap)
            elif kind == "dict":
                _restore_dict(obj, snap)
            elif kind == "obj":
                _restore_dict(vars(obj), snap)
            elif kind == "cls":
                _restore_class(obj, snap)
            elif kind == "globals":
                obj.update([(n, v) for n, v in snap.items() if obj.get(n, _MISSING) is not v])
            elif kind == "cell":
                if snap is not _MISSING and obj.cell_contents is not snap:
                    obj.cell_contents = snap
            elif kind in ("var", "private"):
                retarget(obj, snap)

    def write(self, values) -> None:
        for slot, v in zip(self.slots, values):
            slot.set(v)

    def original(self, value):
        """`value` if it is an object known before the block (a list, dict or Variable
        object whose identity must be kept), else None."""
        entry = self.seen.get(id(value))
        return value if entry is not None and entry[0] is value and entry[1] else None

    def _shown(self, path: str) -> str:
        """`path` as the user knows it: a place under the function's return value (a name the
        converter made, `variables.ReturnValue`) is "the returned value"."""
        for name in self.names or ():
            if is_return_value(name) and (path == name or path.startswith((f"{name}[",
                                                                             f"{name}."))):
                return "the returned value" + path[len(name):]
        return path

    def explain(self, first: list, second: list, branch_labels=("if", "else")) -> None:
        """Raise StateChangeError for the first slot whose values from the two branches
        cannot be one op output."""
        for slot, a, b in zip(self.slots, first, second):
            msg = _mismatch(a, b)
            if msg:
                raise StateChangeError(
                    f"{self._shown(slot.path)} {msg} of an if whose condition is a tensor "
                    f"({where(self.src)}); one static program cannot hold both"
                    f"{_not_one_array(a, b)}. "
                    f"{_advice(slot)}", self.src)


def _restore_dict(d: dict, snap: dict) -> None:
    if d.keys() == snap.keys() and all(d[k] is v for k, v in snap.items()):
        return
    d.clear()
    d.update(snap)


def _restore_class(cls: type, snap: dict) -> None:
    d = vars(cls)
    for k in [k for k in d if k not in snap]:
        delattr(cls, k)
    for k, v in snap.items():
        if d.get(k, _MISSING) is not v:
            setattr(cls, k, v)


def _diff(obj, kind, path, snap):
    if kind == "list":
        if len(obj) != len(snap) or any(a is not b for a, b in zip(obj, snap)):
            yield Slot(obj, "list", None, path, len(obj) != len(snap),
                       obj[-1] if len(obj) > len(snap) else None)
    elif kind == "set":
        if set_changed(obj, snap):
            yield Slot(obj, "set", None, path)
    elif kind in ("dict", "obj", "cls", "globals"):
        d = vars(obj) if kind in ("obj", "cls") else obj
        sk = {"dict": "dict", "obj": "attr", "cls": "attr", "globals": "global"}[kind]
        keys = snap.keys() if kind == "globals" else [*snap, *(k for k in d if k not in snap)]
        for k in keys:  # (in order: written back key by key, a dict's order is eager's)
            if d.get(k, _MISSING) is not snap.get(k, _MISSING) and k != "__slotnames__":
                p = (k if kind == "globals" else f"{path}.{k}" if kind in ("obj", "cls")
                     else f"{path}[{k!r}]")
                yield Slot(obj, sk, k, p)
    elif kind == "cell":
        try:
            v = obj.cell_contents
        except ValueError:
            v = _MISSING
        if v is not snap:
            yield Slot(obj, "cell", None, path)
    elif kind == "var":
        if vars(obj).get("name") != snap.get("name") or vars(obj).get("block") is not \
                snap.get("block"):
            yield Slot(obj, "var", None, path)


def begin(fns, args, names, src):
    """A Log for a block about to be traced as graph control flow."""
    return Log(fns, args, names, src, sets=True)


# ---- the hooks control_flow.ifelse calls -------------------------------------------------------

def branch_end(log: Log, out: list) -> list:
    """A branch traced: its state outputs (frozen) plus the value of every changed object;
    then the objects are put back as they were before the branch."""
    log.changed()
    log.kept.append(list(out))
    doubted = undecided_aside(log)
    if not log.slots:
        if log.quiet:
            log.restore()
        return out
    result = [freeze(v) for v in out] + sets_aside(log, log.values(), doubted)
    log.restore()
    return result


def grew(outs: list) -> bool:
    """The second branch changed objects the first did not: both must be traced again."""
    return len(outs) == 2 and len(outs[1]) > len(outs[0])


def explain(log: Log, names, outs) -> None:
    if len(outs) == 2 and log.slots:
        n = len(names)
        log.explain(outs[0][n:], outs[1][n:])


def finish(log: Log, result: list, n: int, outs: list):
    """After the op: changed objects take the op's outputs; a state name whose value was the
    same known object in every branch stays that object (its contents were just updated)."""
    log.write(set_values(log, result[n:]))
    state = result[:n]
    kept = log.kept[-2:]
    for i in range(n):
        if len({id(o[i]) for o in kept}) == 1 and log.original(kept[0][i]) is not None:
            state[i] = kept[0][i]
    return state


def map_tree(fn, v):
    """`fn` on each leaf of nested lists / tuples / dicts."""
    if type(v) in (list, tuple):
        return type(v)(map_tree(fn, x) for x in v)
    if type(v) is dict:
        return {k: map_tree(fn, x) for k, x in v.items()}
    return fn(v)


def tensor_tree(v) -> bool:
    """A non-empty structure of lists / tuples / dicts whose leaves are tensors or numbers."""
    if type(v) in (list, tuple, dict):
        items = list(v.values()) if type(v) is dict else list(v)
        return bool(items) and all(tensor_tree(x) for x in items)
    return is_variable(v) or isinstance(v, (rt.Tensor, int, float)) and not isinstance(v, bool)


def graph_tree(v) -> bool:
    """A tensor, or a non-empty structure of lists / tuples / dicts whose leaves are all
    tensors (no Python numbers)."""
    if type(v) in (list, tuple, dict):
        items = list(v.values()) if type(v) is dict else list(v)
        return bool(items) and all(graph_tree(x) for x in items)
    return is_variable(v) or isinstance(v, rt.Tensor)


class python_effects_refused:
    """A context for Python code that runs at trace time but, in eager code, only when a
    tensor decides so (the right operand of `and`/`or` whose left operand is a tensor): a
    Python value it changes in a reachable object cannot be replayed conditionally, so it is
    a StateChangeError naming the place (tensors it changes are graph values)."""

    def __init__(self, fns, what: str, src):
        self.fns, self.what, self.src = fns, what, src

    def __enter__(self):
        self.log = Log(self.fns, (), (), self.src, track_variables=False)
        return self

    def __exit__(self, kind, *exc):
        if kind is not None:
            return False
        for slot in self.log.changed():
            value = slot.get()
            if graph_tree(value):
                continue
            self.log.restore()
            raise StateChangeError(
                f"{slot.path} is changed by Python code in {self.what} ({where(self.src)}). "
                "Eager code changes it only when the tensor decides so; a converted program "
                "cannot repeat a Python change conditionally. Move the change out of the "
                "condition, or keep the value in a tensor.", self.src)
        return False
