"""Snapshots of what a call leaves behind, for the corpus harness: the state of a case's Layer
(parameters, buffers, sublayers, Python attributes) and of the objects its arguments reach
(tensors changed in place, attributes of plain objects, dict and list contents).

`snapshot(value)` copies that state right after a call (later calls change the same objects);
`assert_same_state(expected, got, ...)` compares an eager run's snapshot with a converted run's.
Each run starts from its own copy of the case's initial objects (test_corpus.py), so the two
snapshots come from the same starting state.
"""
from __future__ import annotations

import collections
import dataclasses
import types

import numpy as np

import runtime as rt

# Layer attributes that differ between two equal layers or that `to_static` sets: a unique
# name, the converted forward, hook tables (callables)
_LAYER_INTERNALS = frozenset({"_full_name", "forward", "_forward_pre_hooks",
                              "_forward_post_hooks"})
_REGISTRIES = ("_parameters", "_buffers", "_sub_layers")
_OPAQUE = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType,
           type, staticmethod, classmethod, property)


@dataclasses.dataclass
class Array:
    """A tensor's (or an ndarray's) observable state, copied."""
    kind: str  # "Tensor", "Parameter" or "ndarray"
    dtype: str
    shape: tuple
    data: np.ndarray
    stop_gradient: bool | None = None
    has_grad: bool | None = None


@dataclasses.dataclass
class Seq:
    """A list, tuple, deque or set (sets as the sorted reprs of their items)."""
    type: str
    items: list


@dataclasses.dataclass
class Map:
    """A dict: its (key, snapshot) items in order."""
    type: str
    items: list


@dataclasses.dataclass
class Obj:
    """A plain object (or a Layer): its class name and its attributes' snapshots."""
    type: str
    attrs: dict


def snapshot(value, _seen=None):
    seen = {} if _seen is None else _seen
    if isinstance(value, (type(None), bool, int, float, complex, str, bytes, np.generic)):
        return value
    if id(value) in seen:  # shared or cyclic: the position of its first visit
        return ("<seen>", seen[id(value)])
    seen[id(value)] = len(seen)
    if isinstance(value, rt.Tensor):
        grad = value.grad if not value.stop_gradient else None
        return Array(type(value).__name__, str(value.dtype), tuple(value.shape),
                     np.array(value.numpy(), copy=True), value.stop_gradient, grad is not None)
    if isinstance(value, np.ndarray):
        return Array("ndarray", value.dtype.str, value.shape, value.copy())
    if isinstance(value, (list, tuple, collections.deque)):
        return Seq(type(value).__name__, [snapshot(v, seen) for v in value])
    if isinstance(value, dict):
        return Map(type(value).__name__, [(k, snapshot(v, seen)) for k, v in value.items()])
    if isinstance(value, (set, frozenset)):
        return Seq(type(value).__name__, sorted(map(repr, value)))
    if isinstance(value, rt.nn.Layer):
        d = value.__dict__
        registered = set().union(*(d[r] for r in _REGISTRIES))
        attrs = {k: snapshot(v, seen) for k, v in d.items()
                 if k not in _LAYER_INTERNALS and k not in registered}
        return Obj(type(value).__name__, attrs)
    if isinstance(value, _OPAQUE) or callable(value) and not hasattr(value, "__dict__"):
        return ("<callable>", getattr(value, "__qualname__", type(value).__name__))
    if hasattr(value, "__dict__"):
        return Obj(type(value).__name__, {k: snapshot(v, seen) for k, v in vars(value).items()})
    return ("<other>", type(value).__qualname__)  # (a static Variable left behind shows here)


def assert_same_state(expected, got, rtol, atol, where="state"):
    if isinstance(expected, Array):
        assert isinstance(got, Array), f"{where}: expected a {expected.kind}, got {got!r}"
        for field in ("kind", "dtype", "shape", "stop_gradient", "has_grad"):
            e, g = getattr(expected, field), getattr(got, field)
            assert e == g, f"{where}: {field} {g!r} != expected {e!r}"
        if expected.data.dtype.kind in "biuUSO":
            np.testing.assert_array_equal(got.data, expected.data, err_msg=where)
        else:
            np.testing.assert_allclose(got.data, expected.data, rtol=rtol, atol=atol,
                                       err_msg=where)
    elif isinstance(expected, Obj):
        assert isinstance(got, Obj) and got.type == expected.type, (
            f"{where}: expected a {expected.type} object, got {got!r}")
        assert set(got.attrs) == set(expected.attrs), (
            f"{where}: attributes {sorted(got.attrs)} != {sorted(expected.attrs)}")
        for k in expected.attrs:
            assert_same_state(expected.attrs[k], got.attrs[k], rtol, atol, f"{where}.{k}")
    elif isinstance(expected, Map):
        assert isinstance(got, Map) and got.type == expected.type, (
            f"{where}: expected a {expected.type}, got {_brief(got)}")
        e_keys, g_keys = [k for k, _ in expected.items], [k for k, _ in got.items]
        assert g_keys == e_keys, f"{where}: keys {g_keys} != expected {e_keys}"
        for (k, e), (_, g) in zip(expected.items, got.items):
            assert_same_state(e, g, rtol, atol, f"{where}[{k!r}]")
    elif isinstance(expected, Seq):
        assert isinstance(got, Seq) and got.type == expected.type, (
            f"{where}: expected a {expected.type}, got {_brief(got)}")
        assert len(got.items) == len(expected.items), (
            f"{where}: {len(got.items)} items != expected {len(expected.items)}")
        for i, (e, g) in enumerate(zip(expected.items, got.items)):
            assert_same_state(e, g, rtol, atol, f"{where}[{i}]")
    elif isinstance(expected, (float, np.floating)) and not isinstance(expected, bool):
        assert type(got) is type(expected), (
            f"{where}: expected {type(expected).__name__}, got {type(got).__name__} {got!r}")
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=where)
    else:
        assert type(got) is type(expected) and got == expected, (
            f"{where}: {_brief(got)} != expected {_brief(expected)}")


def _brief(value) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "..."


def python_state(snap):
    """A snapshot without tensor values (dtype and shape kept): what a trace may guard on. Two
    equal results mean that a call changed no Python state a converted program may read."""
    if isinstance(snap, Array):
        return (snap.kind, snap.dtype, snap.shape, snap.stop_gradient)
    if isinstance(snap, Obj):
        return (snap.type, tuple((k, python_state(v)) for k, v in snap.attrs.items()))
    if isinstance(snap, Map):
        return (snap.type, tuple((repr(k), python_state(v)) for k, v in snap.items))
    if isinstance(snap, Seq):
        return (snap.type, tuple(python_state(v) for v in snap.items))
    return repr(snap)
