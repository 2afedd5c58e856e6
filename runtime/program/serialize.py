"""Programs <-> versioned JSON; persistable values <-> `.npz` (never pickle).

The JSON is readable: one object per block, one per op, inputs as `{"v": name}` references or
literals, and an origin table (file, line, source) the ops point into. Loading only builds data
structures from that text and checks it; it never executes anything from the file.
"""
from __future__ import annotations

import json
import math

import numpy as np

from ..dtypes import convert_dtype
from ..ops import registry
from . import origin as _origin
from .ir import Literal, Op, Program

FORMAT = "d2s-program"
VERSION = 1


class FormatError(ValueError):
    """A saved program or parameter file is corrupted, of another version, or does not match."""


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
    if isinstance(x, list):
        return [_dec(t) for t in x]
    if isinstance(x, dict):
        if len(x) != 1:
            raise FormatError(f"malformed value {x!r}")
        (k, v), = x.items()
        if k == "v":
            return _str(v)
        if k == "float":
            if v not in ("inf", "-inf", "nan"):
                raise FormatError(f"malformed float {v!r}")
            return float(v)
        if k == "lit":
            return Literal(_dec_lit(v))
        return _dec_lit(x)
    return x


def _dec_lit(x):
    if isinstance(x, dict):
        (k, v), = x.items()
        if k == "tuple":
            return tuple(_dec_lit(t) for t in v)
        if k == "str":
            return _str(v)
        if k == "dict":
            return {kk: _dec_lit(vv) for kk, vv in v.items()}
        return _dec(x)
    if isinstance(x, list):
        return [_dec_lit(t) for t in x]
    return x


def _str(v) -> str:
    if not isinstance(v, str):
        raise FormatError(f"expected a string, got {v!r}")
    return v


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
    """Rebuild a program; `tensors` maps persistable names to the Tensors it will use."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise FormatError("not a saved program (missing 'format': 'd2s-program')")
    if d.get("version") != VERSION:
        raise FormatError(f"saved program has format version {d.get('version')!r}; this "
                          f"runtime reads version {VERSION}")
    try:
        p = Program()
        for bd in d["blocks"]:
            b = p.blocks[0] if bd["idx"] == 0 else p.new_block(bd["parent"])
            if b.idx != bd["idx"]:
                raise FormatError(f"block {bd['idx']} is out of order")
            for vd in bd["vars"]:
                v = b.new_var(_str(vd["name"]), vd["shape"], convert_dtype(vd["dtype"]),
                              kind=vd["kind"], persistable=bool(vd["persistable"]),
                              stop_gradient=bool(vd["stop_gradient"]))
                if vd["shape"] is None:
                    v._static_shape = None
            b.params = [_str(n) for n in bd["params"]]
            b.results = [_dec(r) for r in bd["results"]]
            for od in bd["ops"]:
                if od["type"] not in registry.OPS:
                    raise FormatError(f"unknown op type {od['type']!r} (saved by a newer "
                                      "runtime or corrupted)")
                b.ops.append(Op(od["type"], [_dec(x) for x in od["inputs"]],
                                [_str(n) for n in od["outputs"]],
                                {k: _dec_lit(v) for k, v in od["attrs"].items()},
                                tuple(int(i) for i in od["blocks"]), od["origin"]))
        p.inputs = [_str(n) for n in d["inputs"]]
        p.origins = [tuple(o) for o in d["origins"]]
        p._origin_ids = {o: i for i, o in enumerate(p.origins)}
        p.passes = list(d.get("passes", []))
    except FormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise FormatError(f"corrupted program file: {type(e).__name__}: {e}") from None
    g = p.global_block()
    for name in d["persistables"]:
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
    from .. import backend
    np.savez(path, **{n: backend.to_numpy(t._data) for n, t in tensors.items()})


def load_tensors(path: str, trainable: dict) -> dict:
    from ..parameter import Parameter
    from ..tensor import Tensor
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
