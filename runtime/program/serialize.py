"""Programs <-> versioned JSON; persistable values <-> `.npz` (never pickle).

The JSON is readable: one object per block, one per op, inputs as `{"v": name}` references or
literals, and an origin table (file, line, source) the ops point into. Loading only builds data
structures from that text and checks it; it never executes anything from the file.
"""
from __future__ import annotations

import json
import math

import numpy as np

from .. import backend
from ..dtypes import ALL, convert_dtype
from ..ops import registry
from ..parameter import Parameter
from ..tensor import Tensor
from . import origin as _origin
from .ir import Literal, Op, Program

FORMAT = "d2s-program"
VERSION = 1
# Bounds on what a file may declare (a damaged or hostile file cannot make loading allocate
# more than the checked sizes need): ints in values fit 64 bits, a rank fits NumPy's.
MAX_INT = 2 ** 64
MAX_RANK = 64
MAX_DIM = 2 ** 48
_DTYPE_NAMES = frozenset(d.name for d in ALL)


class ModelFormatError(ValueError):
    """A saved model or program file is truncated, damaged, tampered with, of another format
    version, missing, or does not belong with the other file of its model. The message names
    the file and what is wrong with it (`path`: that file, when known)."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


FormatError = ModelFormatError  # the name this module used before


# ---- values ---------------------------------------------------------------------------------

def _enc(x):
    """Op inputs and attrs -> JSON (tuples, non-finite floats and references kept distinct)."""
    if x.__class__ is str:
        return {"v": x}
    return _enc_lit(x)


def _enc_lit(x):
    if isinstance(x, float) and not math.isfinite(x):
        return {"float": repr(x)}
    if isinstance(x, Literal):
        return {"lit": _enc_lit(x.value)}
    if isinstance(x, tuple):
        return {"tuple": [_enc_lit(t) for t in x]}
    if isinstance(x, list):
        return [_enc(t) for t in x]
    if isinstance(x, str):
        return {"str": x}
    if x is None or isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, dict):
        return {"dict": {k: _enc_lit(v) for k, v in x.items()}}
    raise FormatError(f"cannot serialize {type(x).__name__} {x!r}: attrs must be plain data")


def _dec(x):
    """An op input or block result: {"v": name} references, literals, lists of those."""
    if isinstance(x, list):
        return [_dec(t) for t in x]
    if isinstance(x, dict):
        k, v = _single(x)
        if k == "v":
            return _str(v)
        if k == "float":
            if v not in ("inf", "-inf", "nan"):
                raise FormatError(f"malformed float {v!r}")
            return float(v)
        if k == "lit":
            return Literal(_dec_lit(v))
        return _dec_lit(x)
    return _scalar(x)


def _dec_lit(x):
    """An attribute value or literal: plain data only (no references)."""
    if isinstance(x, dict):
        k, v = _single(x)
        if k == "tuple":
            return tuple(_dec_lit(t) for t in _list(v))
        if k == "str":
            return _str(v)
        if k == "dict":
            if not isinstance(v, dict):
                raise FormatError(f"malformed dict value {v!r}")
            return {kk: _dec_lit(vv) for kk, vv in v.items()}
        return _dec(x)
    if isinstance(x, list):
        return [_dec_lit(t) for t in x]
    return _scalar(x)


def _single(x: dict):
    if len(x) != 1:
        raise FormatError(f"malformed value {x!r}")
    (k, v), = x.items()
    return k, v


def _scalar(x):
    if x is None or x.__class__ is bool or x.__class__ is str:
        return x
    if x.__class__ is int:
        if not -MAX_INT < x < MAX_INT:
            raise FormatError(f"integer {x} is out of range")
        return x
    if x.__class__ is float:
        if not math.isfinite(x):  # the writer spells these {"float": ...}
            raise FormatError(f"malformed float {x!r}")
        return x
    raise FormatError(f"malformed value {x!r}")


def _str(v) -> str:
    if not isinstance(v, str):
        raise FormatError(f"expected a string, got {v!r}")
    return v


def _list(v) -> list:
    if not isinstance(v, list):
        raise FormatError(f"expected a list, got {_short(v)}")
    return v


def _int(v, what: str) -> int:
    if v.__class__ is not int:
        raise FormatError(f"{what} must be an integer, got {_short(v)}")
    return v


def _bool(v, what: str) -> bool:
    if v.__class__ is not bool:
        raise FormatError(f"{what} must be true or false, got {_short(v)}")
    return v


def _shape(v, name: str):
    if v is None:
        return None
    if not isinstance(v, list) or len(v) > MAX_RANK or any(
            d.__class__ is not int or not -1 <= d <= MAX_DIM for d in v):
        raise FormatError(f"variable {name!r} has a malformed shape {_short(v)}")
    return v


def _dtype(v, name: str):
    if v not in _DTYPE_NAMES:
        raise FormatError(f"variable {name!r} has an unknown dtype {_short(v)}")
    return convert_dtype(v)


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


# ---- programs -------------------------------------------------------------------------------

def program_to_dict(program: Program, with_source: bool = True) -> dict:
    blocks = []
    for b in program.blocks:
        blocks.append({
            "idx": b.idx, "parent": b.parent, "params": list(b.params),
            "results": [_enc(r) for r in b.results],
            "vars": [{"name": v.name, "shape": None if v._static_shape is None
                      else list(v._static_shape), "dtype": v.dtype.name, "kind": v.kind,
                      "persistable": v.persistable, "stop_gradient": v.stop_gradient}
                     for v in b.vars.values()],
            "ops": [{"type": op.type, "inputs": [_enc(x) for x in op.inputs],
                     "outputs": list(op.outputs),
                     "attrs": {k: _enc_lit(v) for k, v in op.attrs.items()},
                     "blocks": list(op.blocks), "origin": op.origin} for op in b.ops]})
    origins = [[f, ln, _origin.source_of((f, ln, s)) if with_source else s]
               for f, ln, s in program.origins]
    return {"format": FORMAT, "version": VERSION, "inputs": list(program.inputs),
            "persistables": {n: {"trainable": not t.stop_gradient}
                             for n, t in program.tensors.items()},
            "passes": list(program.passes), "origins": origins, "blocks": blocks}


def program_from_dict(d: dict, tensors: dict) -> Program:
    """Rebuild a program; `tensors` maps persistable names to the Tensors it will use. Every
    field is checked for its type; anything else raises `FormatError`."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise FormatError("not a saved program (missing 'format': 'd2s-program')")
    if d.get("version") != VERSION:
        raise FormatError(f"saved program has format version {_short(d.get('version'))}; this "
                          f"runtime reads version {VERSION}")
    try:
        p = Program()
        for i, bd in enumerate(_list(d["blocks"])):
            _block_from_dict(p, i, bd)
        p.inputs = [_str(n) for n in _list(d["inputs"])]
        p.origins = [_origin_from(o) for o in _list(d["origins"])]
        p._origin_ids = {o: i for i, o in enumerate(p.origins)}
        p.passes = [_str(n) for n in _list(d.get("passes", []))]
        persistables = d["persistables"]
        if not isinstance(persistables, dict):
            raise FormatError("'persistables' must be an object")
    except FormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as e:
        raise FormatError(f"corrupted program file: {type(e).__name__}: {e}") from None
    g = p.global_block()
    for name in persistables:
        t = tensors.get(name)
        v = g.vars.get(name)
        if t is None or v is None:
            raise FormatError(f"persistable {name!r} has no saved value")
        if tuple(t._data.shape) != v._static_shape or t.dtype != v.dtype:
            raise FormatError(f"persistable {name!r}: the program expects {v.type_str()} but "
                              f"the saved value is {t.dtype.short}{list(t._data.shape)}")
        p.tensors[name] = t
        p._captured[id(t)] = name
    return p


def _block_from_dict(p: Program, i: int, bd: dict) -> None:
    if _int(bd["idx"], "a block's idx") != i:
        raise FormatError(f"block {bd['idx']} is out of order (expected block {i})")
    parent = bd["parent"]
    if i == 0:
        if parent is not None:
            raise FormatError("block 0 must have no parent")
        b = p.blocks[0]
    else:
        if not 0 <= _int(parent, f"the parent of block {i}") < i:
            raise FormatError(f"block {i} has parent {parent}; a parent comes before its "
                              "children")
        b = p.new_block(parent)
    for vd in _list(bd["vars"]):
        name = _str(vd["name"])
        shape = _shape(vd["shape"], name)
        kind = vd["kind"]
        if kind not in ("tensor", "array"):
            raise FormatError(f"variable {name!r} has an unknown kind {_short(kind)}")
        v = b.new_var(name, shape, _dtype(vd["dtype"], name), kind=kind,
                      persistable=_bool(vd["persistable"], "persistable"),
                      stop_gradient=_bool(vd["stop_gradient"], "stop_gradient"))
        if shape is None:
            v._static_shape = None
    b.params = [_str(n) for n in _list(bd["params"])]
    b.results = [_dec(r) for r in _list(bd["results"])]
    for od in _list(bd["ops"]):
        if not isinstance(od["type"], str) or od["type"] not in registry.OPS:
            raise FormatError(f"unknown op type {_short(od['type'])} (saved by a newer "
                              "runtime or corrupted)")
        attrs = od["attrs"]
        if not isinstance(attrs, dict):
            raise FormatError(f"the attributes of a {od['type']} op must be an object")
        origin = od["origin"]
        if origin is not None:
            _int(origin, "an op's origin")
        b.ops.append(Op(od["type"], [_dec(x) for x in _list(od["inputs"])],
                        [_str(n) for n in _list(od["outputs"])],
                        {k: _dec_lit(v) for k, v in attrs.items()},
                        tuple(_int(j, "a sub-block index") for j in _list(od["blocks"])),
                        origin))


def _origin_from(o) -> tuple:
    if not isinstance(o, list) or len(o) != 3 or not isinstance(o[0], str) or \
            o[1].__class__ is not int or not (o[2] is None or isinstance(o[2], str)):
        raise FormatError(f"malformed origin {_short(o)} (expected [file, line, source])")
    return tuple(o)


def copy_program(program: Program) -> Program:
    """A structural deep copy sharing the same persistable Tensors (`Program.clone`)."""
    return program.clone()


def to_json(program: Program) -> str:
    return json.dumps(program_to_dict(program), indent=1)


def from_json(text: str, tensors: dict) -> Program:
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"corrupted program file (invalid JSON: {e})") from None
    return program_from_dict(d, tensors)


# ---- parameters -----------------------------------------------------------------------------

def save_tensors(tensors: dict, path: str) -> None:
    np.savez(path, **{n: backend.to_numpy(t._data) for n, t in tensors.items()})


def load_tensors(path: str, trainable: dict) -> dict:
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {n: f[n] for n in f.files}
    except (OSError, ValueError) as e:
        raise FormatError(f"cannot read parameters from {path!r}: {e}") from None
    out = {}
    for n, a in arrays.items():
        out[n] = Parameter(a, name=n) if trainable.get(n) else Tensor(a, name=n)
        if not trainable.get(n):
            out[n].persistable = True
    return out
