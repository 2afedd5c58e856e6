"""What a `FILE::QUALNAME` argument of the `d2s` command line names (shared by `cli.py` and
`cli_model.py`): the file is imported and the qualified name looked up in it."""
from __future__ import annotations

import importlib.util
import os
import sys


def load_target(target: str):
    """The Python function named by 'path/to/file.py::Qual.name' (a StaticFunction gives its
    original function; a class gives its `forward`)."""
    obj = load_object(target)
    if type(obj).__name__ != "StaticFunction" and hasattr(type(obj), "forward") and \
            not isinstance(obj, type):
        obj = type(obj)  # a Layer instance: its class's forward
    if isinstance(obj, type):
        obj = obj.__dict__.get("forward", getattr(obj, "forward", None))
    obj = getattr(obj, "__wrapped__", obj) if type(obj).__name__ == "StaticFunction" else obj
    return getattr(obj, "__func__", obj)


def load_object(target: str):
    """The object named by 'path/to/file.py::Qual.name', as the module defines it."""
    return resolve(target)[0]


def resolve(target: str):
    """(object, owner): what 'path/to/file.py::Qual.name' names, and the class it was looked
    up on when it is a class attribute (`Net.forward`), else None."""
    if "::" not in target:
        raise SystemExit(f"d2s: expected FILE::QUALNAME, got {target!r}")
    path, qualname = target.split("::", 1)
    path = os.path.abspath(path)
    if not os.path.exists(path):
        raise SystemExit(f"d2s: no such file: {path}")
    sys.path.insert(0, os.path.dirname(path))
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    obj, owner = module, None
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise SystemExit(f"d2s: {path} has no {qualname!r} ({part!r} not found)")
        owner = obj if isinstance(obj, type) else None
        obj = getattr(obj, part)
    return obj, owner
