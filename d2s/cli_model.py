"""`d2s export`, `d2s run` and `d2s bench`: inference models and the benchmark suite from the
command line.

    d2s export model.py::Net --spec 'float32[None,16]' -o out/net
    d2s run out/net --input x=x.npy -o y.npz       (or --random)
    d2s bench --only eager_overhead --quick

A model is `PATH.json` (the program) plus `PATH.npz` (its parameters), as `d2s.save` writes
them; `run` reads them with `d2s.load`, which executes nothing from the files. Usage errors
(a missing or corrupt model, an input of the wrong shape or dtype, no benchmarks directory)
exit with status 2 and a message naming what was expected.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import zipfile

import numpy as np

import d2s
import d2s.onnx
import runtime as rt
from runtime.backend import to_numpy
from runtime.program.model_structure import paths
from runtime.progress import ProgressBar

from .check import parse_spec
from .cli_target import resolve

# benchmark name -> the arguments --quick passes (small repeat counts)
BENCHMARKS = {
    "eager_overhead": ["--repeat", "2", "--number", "20"],
    "executor_overhead": ["--repeat", "2", "--number", "20"],
    "conversion": ["--repeat", "1"],
    "models": ["--repeat", "1", "--target", "0.02"],
    "model_table": ["--quick"],
    "loops": ["--repeat", "2", "--number", "5"],
    "guards": ["--repeat", "2", "--number", "200"],
    "fusion": ["--repeat", "1", "--number", "1", "--rows", "512"],
    "activations_cpu": ["--rounds", "1", "--repeat", "2", "--number", "1", "--rows", "256"],
    "memory": ["--batch", "4"],
    "call_path": ["--repeat", "2", "--number", "50"],
    "train_step": ["--repeat", "1", "--target", "0.02"],
    "profile_step": ["--calls", "10"],
}


class UsageError(Exception):
    """A problem with what the user gave; reported as one line and exit status 2."""


def _reported(command: str):
    def wrap(fn):
        def run(args) -> int:
            try:
                return fn(args)
            except UsageError as e:
                print(f"d2s {command}: {e}", file=sys.stderr)
                return 2
        return run
    return wrap


# ---- export ---------------------------------------------------------------------------------

def _init_args(items: list[str]) -> tuple[list, dict]:
    """`--init` values: 'NAME=LITERAL' is a keyword argument, a bare literal a positional one."""
    args, kwargs = [], {}
    for item in items:
        name, eq, text = item.partition("=")
        keyword = eq and name.isidentifier()
        try:
            value = ast.literal_eval(text if keyword else item)
        except (ValueError, SyntaxError):
            raise UsageError(f"bad --init {item!r}: expected a Python literal or NAME=LITERAL, "
                             "e.g. --init 16 or --init hidden=32") from None
        if keyword:
            kwargs[name] = value
        else:
            args.append(value)
    return args, kwargs


def _exportable(target: str, init: list[str]):
    """What FILE::QUALNAME names, ready for `d2s.save` (a Layer class is instantiated)."""

    obj, owner = resolve(target)
    if isinstance(owner, type) and issubclass(owner, rt.nn.Layer):
        if getattr(obj, "__name__", None) != "forward":
            raise UsageError(f"{target}: an inference model is a Layer's forward or a function;"
                             f" name the class ({owner.__name__}) or its forward")
        obj = owner  # `Net.forward`: the Layer, built below
    if isinstance(obj, type):
        if not issubclass(obj, rt.nn.Layer):
            raise UsageError(f"{target} is a class but not an rt.nn.Layer")
        args, kwargs = _init_args(init)
        try:
            obj = obj(*args, **kwargs)
        except TypeError as e:
            raise UsageError(f"cannot create {obj.__name__}({', '.join(init)}): {e}; give "
                             "constructor arguments with --init") from None
    elif init:
        raise UsageError("--init applies only when FILE::QUALNAME names a Layer class")
    if not callable(obj):
        raise UsageError(f"{target} is a {type(obj).__name__}, not a function or Layer")
    return obj


@_reported("export")
def cmd_export(args) -> int:

    try:
        specs = [parse_spec(s) for s in args.spec]
    except ValueError as e:
        raise UsageError(str(e)) from None
    for text, s in zip(args.spec, specs):
        if not s.is_tensor:
            raise UsageError(f"--spec {text!r}: an inference model takes tensors only; give "
                             "DTYPE[dims] like 'float32[None,16]'")
    obj = _exportable(args.target, args.init or [])
    set_mode(obj, args.train)
    if getattr(args, "format", "d2s") == "onnx":
        return _export_onnx(args, obj, [s.input_spec() for s in specs])
    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)
    try:
        d2s.save(obj, args.output, input_spec=[s.input_spec() for s in specs],
                 training=args.train, optimize=args.optimize)
    except TypeError as e:
        if "argument" not in str(e):
            raise
        raise UsageError(f"{str(e).splitlines()[0]}: give one --spec per tensor argument (an "
                         "inference model takes tensors only)") from None
    model = d2s.load(args.output)
    print(f"d2s export {args.target}: wrote")
    for ext in (".json", ".npz"):
        path = args.output + ext
        print(f"  {path}  ({os.path.getsize(path)} bytes)")
    print(describe(model))
    return 0


def set_mode(obj, training: bool) -> None:
    """The command line's mode rule: a Layer (or the Layer a converted method is bound to) is
    put in eval mode, or in training mode with `--train`, before it is traced."""
    layer = obj if isinstance(obj, rt.nn.Layer) else getattr(obj, "instance", None)
    if isinstance(layer, rt.nn.Layer):
        layer.train() if training else layer.eval()


def _export_onnx(args, obj, specs) -> int:
    """`--format onnx`: write PATH.onnx with d2s.onnx (the optional `onnx` extra)."""
    try:
        path = d2s.onnx.export(obj, args.output, input_spec=specs, training=args.train)
    except ImportError as e:
        raise UsageError(str(e)) from None
    except ValueError as e:  # OnnxExportError: an op ONNX export does not map, with its line
        raise UsageError(str(e)) from None
    print(f"d2s export {args.target}: wrote\n  {path}  ({os.path.getsize(path)} bytes)")
    return 0


# ---- run ------------------------------------------------------------------------------------

def _signature(model) -> tuple[list, list]:
    """[(name, np.dtype, shape)] for the model's inputs and for its outputs."""
    block = model.program().global_block()
    # TranslatedLayer keeps the saved feed order and fetch names, which the call follows
    ins = [(n, np.dtype(block.vars[n].dtype.np), block.vars[n].shape) for n in model.feed_names]
    outs = [(n, np.dtype(block.vars[n].dtype.np), block.vars[n].shape) for n in model.fetch_names]
    return ins, outs


def _fmt(dtype: np.dtype, shape) -> str:
    return f"{dtype.name}[{','.join(str(d) for d in shape)}]"


def describe(model) -> str:
    """The inputs, outputs and op count of a loaded model, one per line."""
    ins, outs = _signature(model)
    lines = ["  inputs:"] + [f"    {n}: {_fmt(d, s)}" for n, d, s in ins]
    where = _output_places(model)
    lines += ["  outputs:"] + [f"    output_{i} ({n}): {_fmt(d, s)}{where.get(i, '')}"
                               for i, (n, d, s) in enumerate(outs)]
    lines.append(f"  ops: {len(list(model.program().ops()))}")
    return "\n".join(lines)


def _output_places(model) -> dict:
    """output index -> '  (returned at out[0]['a'])' for a model returning a nested value."""
    if model.structure is None:
        return {}
    return {i: f"  (returned at out{p})" for i, p in paths(model.structure["outputs"]).items()
            if p}


def _load_model(path: str):
    prefix = path.removesuffix(".json")
    missing = [prefix + e for e in (".json", ".npz") if not os.path.exists(prefix + e)]
    if missing:
        raise UsageError(f"no model at {prefix}: {', '.join(missing)} not found (d2s export "
                         "writes PATH.json and PATH.npz)")
    try:
        return d2s.load(prefix)
    except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise UsageError(f"cannot load the model {prefix}: {type(e).__name__}: {e}") from None


def _random_input(dtype: np.dtype, shape, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(2 if d == -1 else d for d in shape)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 10, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _read_npy(name: str, path: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise UsageError(f"input {name!r}: cannot read {path} as a .npy array ({e})") from None


def _checked(name: str, a: np.ndarray, dtype: np.dtype, shape) -> np.ndarray:
    fits = a.ndim == len(shape) and all(d in (-1, n) for d, n in zip(shape, a.shape))
    if a.dtype != dtype or not fits:
        raise UsageError(f"input {name!r}: expected {_fmt(dtype, shape)} (-1: any size), got "
                         f"{_fmt(a.dtype, a.shape)}")
    return a


def _inputs(args, ins: list) -> list:
    given = {}
    for item in args.input or []:
        name, eq, path = item.partition("=")
        if not eq:
            raise UsageError(f"bad --input {item!r}: expected NAME=FILE.npy")
        given[name] = path
    names = [n for n, _, _ in ins]
    expected = ", ".join(_fmt(d, s).join((f"{n}=", "")) for n, d, s in ins)
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise UsageError(f"the model has no input {unknown[0]!r}; its inputs are {expected}")
    read = {n: _checked(n, _read_npy(n, given[n]), d, s) for n, d, s in ins if n in given}
    missing = [n for n in names if n not in given]
    if missing and not args.random:
        raise UsageError(f"no value for input {missing[0]!r}: give --input "
                         f"{missing[0]}=FILE.npy or --random (inputs: {expected})")
    rng = np.random.default_rng(args.seed)
    return [read[n] if n in read else _random_input(d, s, rng) for n, d, s in ins]


def _summary(a: np.ndarray) -> str:
    if a.size == 0:
        return "empty"
    if a.dtype == np.bool_:
        return f"{int(a.sum())} of {a.size} true"
    f = a.astype(np.float64)
    return f"min {f.min():.6g}  max {f.max():.6g}  mean {f.mean():.6g}"


@_reported("run")
def cmd_run(args) -> int:
    model = _load_model(args.model)
    ins, _ = _signature(model)
    arrays = _inputs(args, ins)
    try:
        outs = [np.asarray(to_numpy(a)) for a in model.run_flat(*arrays)]
    except ValueError as e:
        raise UsageError(f"the model rejected its inputs: {e}") from None
    where = _output_places(model)
    print(f"d2s run {args.model}: inputs "
          + ", ".join(f"{n}={_fmt(a.dtype, a.shape)}" for (n, _, _), a in zip(ins, arrays)))
    for i, a in enumerate(outs):
        print(f"  output_{i}: {_fmt(a.dtype, a.shape)}  {_summary(a)}{where.get(i, '')}")
    if args.output:
        np.savez(args.output, **{f"output_{i}": a for i, a in enumerate(outs)})
        print(f"  saved to {args.output}")
    return 0


# ---- bench ----------------------------------------------------------------------------------

def benchmarks_dir() -> str | None:
    """The source tree's benchmarks/ (next to the d2s package), or None when not there."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "benchmarks")
    return path if os.path.isdir(path) else None


@_reported("bench")
def cmd_bench(args) -> int:
    names = [s.strip() for s in (args.only or ",".join(BENCHMARKS)).split(",") if s.strip()]
    if args.models:
        names = ["model_table"]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise UsageError(f"no benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    where = benchmarks_dir()
    if where is None:
        raise UsageError("the benchmarks live in the source tree (benchmarks/ next to the d2s "
                         "package) and are not installed; run d2s bench from a checkout")
    root = os.path.dirname(where)
    env = dict(os.environ)
    # the scripts import runtime, d2s and examples from the source tree
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    failed = []
    # one plain line per finished benchmark: the scripts' own output runs between them
    bar = ProgressBar(total=len(names), prefix="d2s bench: benchmark", tty=False)
    for done, name in enumerate(names, start=1):
        script = os.path.join(where, name + ".py")
        cmd = [sys.executable, script] + (BENCHMARKS[name] if args.quick else [])
        if name == "model_table" and args.torch_python:
            cmd += ["--torch-python", args.torch_python]
        print(f"## {name}\n\n$ {' '.join(cmd[1:])}\n", flush=True)
        rc = subprocess.call(cmd, cwd=root, env=env)
        if rc != 0:
            print(f"\nd2s bench: {name} exited with status {rc}", file=sys.stderr, flush=True)
            failed.append(name)
        bar.update(done, [("finished", name), ("failed", ", ".join(failed) or "none")])
        print(flush=True)
    return 1 if failed else 0


def add_parsers(sub) -> None:
    """Register `export`, `run` and `bench` on the `d2s` subparsers."""
    p = sub.add_parser("export", help="convert a function or Layer and save an inference model")
    p.add_argument("target", help="FILE::QUALNAME: a function, a Layer class (made with --init "
                                  "arguments, default none) or a module-level Layer instance")
    p.add_argument("--spec", action="append", metavar="SPEC", required=True,
                   help="an input, in order: 'float32[None,16]' (None for a varying dim)")
    p.add_argument("-o", "--output", required=True, metavar="PATH",
                   help="writes PATH.json (program) and PATH.npz (parameters)")
    p.add_argument("--init", action="append", metavar="ARG",
                   help="a Layer class constructor argument: LITERAL or NAME=LITERAL")
    p.add_argument("--train", action="store_true",
                   help="save the training-mode program (default: the Layer in eval mode, "
                        "an inference model)")
    p.add_argument("--no-optimize", dest="optimize", action="store_false",
                   help="save the program as traced (default: BatchNorm folded into the "
                        "convolution or linear layer before it, as d2s.save does)")
    p.add_argument("--format", choices=("d2s", "onnx"), default="d2s",
                   help="d2s: PATH.json + PATH.npz (default); onnx: PATH.onnx (needs the "
                        "onnx extra)")
    p.set_defaults(func=cmd_export)
    p = sub.add_parser("run", help="run a saved inference model on .npy or random inputs")
    p.add_argument("model", help="PATH as given to export (PATH.json and PATH.npz)")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                   help="an input's value; repeat for each input")
    p.add_argument("--random", action="store_true",
                   help="random values for inputs not given (varying dims: 2)")
    p.add_argument("--seed", type=int, default=0, help="seed for --random (default 0)")
    p.add_argument("-o", "--output", metavar="OUT.npz",
                   help="save the outputs as output_0, output_1, ...")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("bench", help="run the benchmark suite (from the source tree)")
    p.add_argument("--only", metavar="NAMES",
                   help=f"comma-separated, from {','.join(BENCHMARKS)} (default: all)")
    p.add_argument("--quick", action="store_true", help="small repeat counts")
    p.add_argument("--models", action="store_true",
                   help="only the model table (benchmarks/model_table.py): the zoo and two "
                        "blocks, d2s vs PyTorch")
    p.add_argument("--torch-python", metavar="PATH",
                   help="an interpreter with torch, for the model table's PyTorch columns")
    p.set_defaults(func=cmd_bench)
