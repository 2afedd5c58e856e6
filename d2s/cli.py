"""The `d2s` command line (also `python -m d2s`).

    d2s code FILE::QUALNAME [--level N]   print the converted code (after pass N)
    d2s code FILE::QUALNAME --report [--spec SPEC ...]
                                          the source marked with what each construct became
    d2s check FILE::QUALNAME --spec SPEC ...
                                          eager vs static on random inputs (exit 1: they
                                          differ; 2: the function fails eagerly)
    d2s report FILE::QUALNAME [--spec SPEC ...] -o PAGE.html
                                          the conversion report as one HTML page: the source
                                          marked, the converted code, the program drawn, the
                                          program cache and timings

FILE::QUALNAME names a function, a Layer class (built with the --init arguments, by default
none), a method of one (`model.py::Net.forward`: the class is built and its forward
converted) or a module-level function or Layer already decorated with @d2s.to_static. A Layer is compared,
reported and exported in eval mode (as it is deployed); --train uses training mode.
    d2s passes                            list the converter passes in order
    d2s export FILE::QUALNAME --spec SPEC ... -o PATH
                                          save an inference model (PATH.json, PATH.npz)
    d2s run PATH --input NAME=FILE.npy ... [--random] [-o OUT.npz]
                                          run a saved inference model
    d2s bench [--only NAMES] [--quick]    run the benchmark suite (source tree only)
    d2s bench --models [--torch-python PATH]
                                          the zoo's training/inference table vs PyTorch
    d2s demo                              a short end-to-end demonstration

A mistake in what was given (a bad --spec, a function d2s cannot convert, an error raised by
the function) is one line on stderr and exit status 2; D2S_TRACEBACK=1 shows the traceback.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from . import __version__, converters, errors, transpile
from .check import check, draw, parse_spec, static_function_for
from .cli_model import UsageError, _init_args, add_parsers, set_mode
from .cli_target import load_object, load_target, resolve

TRACEBACK_ENV = "D2S_TRACEBACK"


def cmd_code(args) -> int:
    if args.report:
        return cmd_report(args)
    fn = load_target(args.target)
    level = len(converters.PASSES) if args.level is None else args.level
    print(transpile.convert_source(fn, level))
    return 0


def _specs(args) -> list:
    try:
        return [parse_spec(s) for s in args.spec or []]
    except ValueError as e:
        raise SystemExit(f"d2s: {e}") from None


def _static_function(args, specs: list):
    try:
        init = _init_args(args.init or [])
    except UsageError as e:
        raise SystemExit(f"d2s: {e}") from None
    return static_function_for(*resolve(args.target), specs, init)


def _traced_inputs(args) -> tuple:
    """(StaticFunction, example inputs drawn from --spec) for `code --report` and `report`."""
    specs = _specs(args)
    sf = _static_function(args, specs)
    set_mode(sf, getattr(args, "train", False))
    if not specs and sf.spec.input_spec is None:
        obj = load_object(args.target)
        obj = obj.__dict__.get("forward") if isinstance(obj, type) else obj
        how = ("add input_spec=[...] to its @d2s.to_static" if type(obj).__name__ ==
               "StaticFunction" else "decorate it with @d2s.to_static(input_spec=[...])")
        raise SystemExit("d2s: --report traces the function: give its inputs with --spec "
                         f"(e.g. --spec 'float32[4,16]' --spec 3) or {how}")
    return sf, [draw(s, 0, np.random.default_rng(0)) for s in specs]


def cmd_report(args) -> int:
    """`code --report`: trace for --spec (or the function's input_spec) and print the
    report."""
    sf, inputs = _traced_inputs(args)
    print(sf.report(*inputs))
    return 0


def cmd_report_html(args) -> int:
    """`report`: the conversion report as one HTML page (`d2s/report_html.py`)."""
    sf, inputs = _traced_inputs(args)
    page = sf.report_html(*inputs, layout=args.layout)
    folder = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(folder, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(page)
    print(f"d2s report {args.target}: wrote {args.output} ({len(page.encode())} bytes)")
    return 0


def cmd_check(args) -> int:
    specs = _specs(args)
    sf = _static_function(args, specs)
    set_mode(sf, args.train)
    mode = "training mode, seeded" if args.train else "eval mode"
    print(f"d2s check {args.target}: eager vs static on {args.draws} random draws ({mode})")
    found = check(sf, specs, draws=args.draws, seed=args.seed)
    if found is not None and found.eager_failed:
        print(f"d2s check: the function itself raised on draw {found.draw + 1} (eager, before "
              "any conversion): fix the --spec values (one per argument, in order) or the "
              "function", file=sys.stderr)
        return 2
    print("eager and static agree" if found is None else
          f"eager and static disagree on draw {found.draw + 1}")
    return 0 if found is None else 1


def cmd_passes(args) -> int:
    for i, name in enumerate(converters.NAMES, 1):
        print(f"{i:3d}  {name}")
    return 0


def cmd_demo(args) -> int:
    from . import demo  # (loads runtime.nn and a model: only for this command)
    return demo.main()


def _add_mode_arguments(p) -> None:
    p.add_argument("--init", action="append", metavar="ARG",
                   help="a constructor argument when FILE::QUALNAME is a Layer class: a "
                        "Python literal or NAME=LITERAL (repeat for each)")
    p.add_argument("--train", action="store_true",
                   help="a Layer in training mode, random ops seeded alike in eager and "
                        "static (default: eval mode)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="d2s", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"d2s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("code", help="print the converted code of a function")
    p.add_argument("target", help="FILE::QUALNAME, e.g. model.py::Net.forward")
    p.add_argument("--level", type=int, default=None,
                   help="the code after this many passes (0: as parsed; default: all)")
    p.add_argument("--report", action="store_true",
                   help="trace and print the source marked with what each if/while/for/"
                        "and/or/assert/print/list became, and why")
    p.add_argument("--spec", action="append", metavar="SPEC",
                   help="an input for --report, in order: 'float32[4,16]' (None for a "
                        "varying dim) or a Python literal")
    _add_mode_arguments(p)
    p.set_defaults(func=cmd_code)
    p = sub.add_parser("check", help="compare eager and static on random inputs")
    p.add_argument("target", help="FILE::QUALNAME")
    p.add_argument("--spec", action="append", metavar="SPEC", required=True,
                   help="an input, in order: 'float32[4,16]' (None for a varying dim) or a "
                        "Python literal; repeat for each argument")
    p.add_argument("--draws", type=int, default=6, help="number of random draws (default 6)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_mode_arguments(p)
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("passes", help="list the converter passes in order")
    p.set_defaults(func=cmd_passes)
    p = sub.add_parser("demo", help="run a short end-to-end demonstration")
    p.set_defaults(func=cmd_demo)
    p = sub.add_parser("report", help="write the conversion report as one HTML page")
    p.add_argument("target", help="FILE::QUALNAME")
    _add_spec(p, "an input, in order", required=False)
    p.add_argument("-o", "--output", required=True, help="the page to write (PAGE.html)")
    p.add_argument("--layout", choices=("auto", "dot", "layered"), default="auto",
                   help="how the program is drawn: Graphviz dot when installed (auto), dot, "
                        "or the layout of d2s (layered)")
    _add_mode_arguments(p)
    p.set_defaults(func=cmd_report_html)
    add_parsers(sub)
    args = parser.parse_args(argv)
    return reported(args.func, args)


def _add_spec(p, what: str, required: bool) -> None:
    p.add_argument("--spec", action="append", metavar="SPEC", required=required,
                   help=f"{what}: 'float32[4,16]' (None for a varying dim) or a Python "
                        "literal; repeat for each argument")


def reported(command, args) -> int:
    """Run `command(args)`; a mistake is one line on stderr and status 2 (the traceback
    with D2S_TRACEBACK=1), a closed output pipe (`d2s code ... | head`) too."""
    try:
        status = command(args)
        sys.stdout.flush()  # (a closed pipe fails here, not at exit)
        return status
    except SystemExit as e:
        if not isinstance(e.code, str):
            raise
        print(e.code, file=sys.stderr)
        return 2
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # (so the flush at exit fails no more)
        os.dup2(devnull, sys.stdout.fileno())
        print(f"d2s {args.command}: the output was closed early (broken pipe)",
              file=sys.stderr)
        return 2
    except Exception as e:
        if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
            raise
        print(f"d2s {args.command}: {one_line(e)} ({TRACEBACK_ENV}=1 shows the traceback)",
              file=sys.stderr)
        return 2


def one_line(e: BaseException) -> str:
    """'TypeName: first line of the message (file.py:12)', the user's line when known."""
    text = (str(e).strip().splitlines() or [""])[0]
    src = getattr(e, "origin", None)
    frames = errors.user_frames(e)
    where = f"{os.path.basename(src.filename)}:{src.lineno}" if src is not None else \
        f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return f"{type(e).__name__}: {text}" + (f" ({where})" if where else "")
