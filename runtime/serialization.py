"""`rt.save` / `rt.load`: state dicts in a NumPy `.npz` file, never pickle.

The file is an ordinary `.npz` (a zip of `.npy` arrays) readable with
`np.load(path, allow_pickle=False)`. Array `__manifest__` holds UTF-8 JSON describing the
structure of the saved object (dicts, lists, tuples, tensors, arrays, numbers, strings, None);
each tensor or array is its own entry `t0`, `t1`, ... Loading therefore never runs code from
the file: it parses JSON and reads raw arrays. bfloat16 (which `.npy` cannot describe) is stored
as its uint16 bit pattern, with the real dtype in the manifest.
"""
from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile

import numpy as np

from . import backend
from .dtypes import convert_dtype
from .program.serialize import ModelFormatError
from .tensor import Tensor, to_tensor

FORMAT = "runtime.save"
VERSION = 1
_MANIFEST = "__manifest__"
_BIT_VIEWS = {"bfloat16": np.uint16}  # dtypes .npy cannot name, stored as raw bits


class _Writer:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def node(self, obj, where: str):
        if isinstance(obj, Tensor):
            return {"kind": "tensor", **self.array(obj.numpy(), where),
                    "name": obj.name, "stop_gradient": bool(obj.stop_gradient)}
        if isinstance(obj, np.ndarray):
            return {"kind": "ndarray", **self.array(obj, where)}
        if isinstance(obj, np.generic):
            return {"kind": "scalar", **self.array(np.asarray(obj), where)}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return {"kind": "value", "value": obj}
        if isinstance(obj, dict):
            items = []
            for key, value in obj.items():
                if not (key is None or isinstance(key, (str, int, float, bool))):
                    raise TypeError(f"rt.save: dict key {key!r} at {where} is a "
                                    f"{type(key).__name__}; keys must be str, int, float or bool")
                items.append([key, self.node(value, f"{where}[{key!r}]")])
            return {"kind": "dict", "items": items}
        if isinstance(obj, (list, tuple)):
            return {"kind": type(obj).__name__,
                    "items": [self.node(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        raise TypeError(
            f"rt.save: cannot save a {type(obj).__name__} at {where}; save state dicts (nested "
            "dicts/lists of Tensors, arrays, numbers and strings), e.g. layer.state_dict()")

    def array(self, arr: np.ndarray, where: str) -> dict:
        if arr.dtype.hasobject:
            raise TypeError(f"rt.save: the array at {where} has dtype object, which cannot be "
                            "saved without pickle")
        dtype = convert_dtype(arr.dtype).name if arr.dtype.kind == "V" else arr.dtype.str
        if dtype in _BIT_VIEWS:
            arr = arr.view(_BIT_VIEWS[dtype])
        entry = f"t{len(self.arrays)}"
        self.arrays[entry] = arr
        return {"entry": entry, "dtype": dtype}


def save(obj, path: str) -> None:
    """Save a (nested) state dict to `path` (written atomically; parent folders created).

    >>> import runtime as rt, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "model.pdparams")
    >>> rt.save({"w": rt.ones([2, 2]), "epoch": 3}, path)
    >>> rt.load(path)["epoch"]
    3
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"rt.save: {path!r} is a directory; give a file name such as "
                                f"{os.path.join(path, 'model.pdparams')!r}")
    writer = _Writer()
    root = writer.node(obj, "the top level")
    manifest = json.dumps({"format": FORMAT, "version": VERSION, "root": root})
    arrays = {_MANIFEST: np.frombuffer(manifest.encode("utf-8"), dtype=np.uint8),
              **writer.arrays}
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)  # a file object: NumPy adds no ".npz" to the name
            f.flush()
            os.fsync(f.fileno())  # on disk before it takes the final name
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def load(path: str, return_numpy: bool = False):
    """Load what `rt.save` wrote. Tensors come back as Tensors on the current device (or as
    NumPy arrays with `return_numpy=True`). A missing file is a FileNotFoundError; a damaged,
    truncated or foreign one a `ModelFormatError` (a ValueError)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"rt.load: no such file {path!r}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"rt.load: {path!r} is a directory, not a file saved by rt.save")
    try:
        with open(path, "rb") as f:
            data = f.read()
        _check_members(data)
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            manifest = json.loads(bytes(z[_MANIFEST]).decode("utf-8"))
            if manifest.get("format") != FORMAT:
                raise ValueError(f"its manifest says format {manifest.get('format')!r}")
            if manifest.get("version", 0) > VERSION:
                raise ValueError(f"it has format version {manifest['version']}, newer than "
                                 f"this runtime reads ({VERSION})")
            return _Reader(z, return_numpy).node(manifest["root"])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, KeyError, OSError, EOFError,
            TypeError, AttributeError, IndexError, RecursionError, NotImplementedError) as e:
        raise ModelFormatError(f"rt.load: {path!r} is not a valid file written by rt.save (it "
                               f"is truncated, corrupt or of another format): "
                               f"{type(e).__name__}: {str(e)[:300]}", path) from e


def _check_members(data: bytes) -> None:
    """Every member is stored uncompressed (as np.savez writes them), so reading one never
    allocates more than the file's own size (no zip bombs)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if info.compress_type != zipfile.ZIP_STORED or \
                    info.file_size != info.compress_size or info.file_size > len(data):
                raise ValueError(f"member {info.filename!r} is compressed or of the wrong size")


class _Reader:
    def __init__(self, z, return_numpy: bool):
        self.z, self.return_numpy = z, return_numpy

    def node(self, n: dict):
        kind = n["kind"]
        if kind == "value":
            return n["value"]
        if kind == "dict":
            return {key: self.node(value) for key, value in n["items"]}
        if kind in ("list", "tuple"):
            items = [self.node(v) for v in n["items"]]
            return items if kind == "list" else tuple(items)
        arr = self.array(n)
        if kind == "ndarray":
            return arr
        if kind == "scalar":
            return arr[()]
        if kind == "tensor":
            if self.return_numpy:
                return arr
            t = to_tensor(backend.XP.asarray(arr), stop_gradient=n.get("stop_gradient", True))
            if n.get("name"):
                t.name = n["name"]
            return t
        raise ValueError(f"unknown manifest node kind {kind!r}")

    def array(self, n: dict) -> np.ndarray:
        arr = self.z[n["entry"]]
        dtype = n["dtype"]
        if dtype in _BIT_VIEWS:
            return arr.view(convert_dtype(dtype).np)
        if arr.dtype.str != dtype:
            raise ValueError(f"entry {n['entry']} has dtype {arr.dtype.str}, manifest says "
                             f"{dtype}")
        return arr


__all__ = ["load", "save"]
