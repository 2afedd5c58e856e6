"""The `d2s` command line (also `python -m d2s`).

    d2s code FILE::QUALNAME [--level N]   print the converted code (after pass N)
    d2s passes                            list the converter passes in order
    d2s demo                              a short end-to-end demonstration
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys


def load_target(target: str):
    """The Python function named by 'path/to/file.py::Qual.name' (a StaticFunction gives its
    original function; a class gives its `forward`)."""
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
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, type):
        obj = obj.forward
    obj = getattr(obj, "__wrapped__", obj) if type(obj).__name__ == "StaticFunction" else obj
    return getattr(obj, "__func__", obj)


def cmd_code(args) -> int:
    from . import converters, transpile
    fn = load_target(args.target)
    level = len(converters.PASSES) if args.level is None else args.level
    print(transpile.convert_source(fn, level))
    return 0


def cmd_passes(args) -> int:
    from . import converters
    for i, name in enumerate(converters.NAMES, 1):
        print(f"{i:3d}  {name}")
    return 0


def cmd_demo(args) -> int:
    from examples.demo import main as demo
    return demo()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="d2s", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("code", help="print the converted code of a function")
    p.add_argument("target", help="FILE::QUALNAME, e.g. model.py::Net.forward")
    p.add_argument("--level", type=int, default=None,
                   help="the code after this many passes (0: as parsed; default: all)")
    p.set_defaults(func=cmd_code)
    p = sub.add_parser("passes", help="list the converter passes in order")
    p.set_defaults(func=cmd_passes)
    p = sub.add_parser("demo", help="run a short end-to-end demonstration")
    p.set_defaults(func=cmd_demo)
    args = parser.parse_args(argv)
    return args.func(args)
