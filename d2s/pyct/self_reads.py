"""Which attributes of an instance a method can read: every `self.name` used by the method
and by the methods (and properties) of its classes that it reaches through `self.name`,
where `self` is each method's first parameter.

`attribute_reads(classes, root)` returns None (could read anything) when the source of one
class is missing, or when a reached method uses its `self` other than as `self.name`: passes
it to a function (`helper(self)`, `getattr(self, name)`, `vars(self)`, `type(self)`),
returns it or stores it. Used for the library's own Layers, whose `forward` runs
unconverted: a Python setting that `forward` cannot reach (`Linear.in_features`, read only
by `extra_repr`) cannot change what the call computes.
"""
from __future__ import annotations

import ast
import inspect
import os
import textwrap
import threading

_CACHE: dict = {}
_LOCK = threading.Lock()


def _unlock_in_child() -> None:  # a fork while another thread held it: the child gets a free one
    global _LOCK
    _LOCK = threading.Lock()


os.register_at_fork(after_in_child=_unlock_in_child)
_ANY = object()  # a method that uses `self` as a whole


def attribute_reads(classes: tuple, root: str = "forward") -> frozenset | None:
    """The attribute names `root` (a method of the first of `classes`, which are a class
    and the bases whose methods can run on it) reads through `self`, or None."""
    key = (classes, root)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    result = _reads(classes, root)
    with _LOCK:
        if len(_CACHE) > 1024:  # (classes made at run time, one per call, would pile up)
            _CACHE.clear()
        _CACHE[key] = result
    return result


def _reads(classes: tuple, root: str) -> frozenset | None:
    methods: dict = {}  # name -> the reads of its definitions in all the classes (a
    for cls in classes:  # subclass's method may call its base's through `super()`)
        found = _class_methods(cls)
        if found is None:
            return None
        for name, reads in found.items():
            old = methods.get(name, frozenset())
            methods[name] = _ANY if _ANY in (reads, old) else old | reads
    if root not in methods:
        return None
    names, todo = set(), [root]
    while todo:
        name = todo.pop()
        reads = methods[name]
        if reads is _ANY:
            return None
        for read in reads - names:
            names.add(read)
            if read in methods:
                todo.append(read)
    names.add(root)
    return frozenset(names)


def _class_methods(cls) -> dict | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return None
    body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef)), None)
    if body is None or not _defined_in_body(cls):
        return None
    methods: dict = {}
    for fn in body:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = fn.args.posonlyargs + fn.args.args
            static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                         for d in fn.decorator_list)
            if not all(_known_decorator(d) for d in fn.decorator_list):
                methods[fn.name] = _ANY  # a wrapper may read anything before calling it
            elif static or not params:
                methods.setdefault(fn.name, frozenset())
            else:  # (a property's getter and setter share a name: both count)
                reads = _reads_of(fn, params[0].arg)
                old = methods.get(fn.name, frozenset())
                methods[fn.name] = _ANY if _ANY in (reads, old) else old | reads
        elif isinstance(fn, ast.Assign) and isinstance(fn.value, ast.Name):
            for t in fn.targets:  # `run = helper`: a method of the body under another name
                if isinstance(t, ast.Name):
                    methods[t.id] = frozenset({fn.value.id})
    return methods


def _known_decorator(node) -> bool:
    """`staticmethod`, `classmethod`, `property` and a property's `.setter` / `.deleter`."""
    if isinstance(node, ast.Name):
        return node.id in ("staticmethod", "classmethod", "property")
    return isinstance(node, ast.Attribute) and node.attr in ("setter", "getter", "deleter")


def _defined_in_body(cls) -> bool:
    """Every function in the class's namespace is one its source defines (not one assigned
    from elsewhere, `forward = shared_forward`, nor patched in later); no other callables."""
    prefix = cls.__qualname__ + "."
    for value in vars(cls).values():
        if isinstance(value, (staticmethod, classmethod)):
            fns = [value.__func__]
        elif isinstance(value, property):
            fns = [f for f in (value.fget, value.fset, value.fdel) if f is not None]
        elif isinstance(value, type) or not callable(value):
            continue
        else:
            fns = [value]
        for f in fns:
            if not (inspect.isfunction(f) and f.__qualname__.startswith(prefix) and
                    "<locals>" not in f.__qualname__[len(prefix):]) or \
                    hasattr(f, "__wrapped__"):  # (a wrapper made elsewhere: functools.wraps)
                return False
    return True


def _reads_of(fn, me: str):
    """The names of `me.name` in `fn`, or `_ANY` where `me` is used otherwise."""
    names, attribute_of_me = set(), set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == me:
            attribute_of_me.add(id(node.value))
            names.add(node.attr)  # (a store too: `self.n += 1` reads it)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id == me and id(node) not in attribute_of_me:
            return _ANY
    return frozenset(names)
