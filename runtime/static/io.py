"""Inference models: a pruned program as JSON (`.json`) plus its parameters (`.npz`)."""
from __future__ import annotations

from ..program import model_file
from ..program.builder import default_main_program
from ..program.ir import Program
from ..program.passes import eliminate_dead_code
from ..program.variable import Variable


def save_inference_model(path_prefix: str, feed_vars, fetch_vars, executor=None,
                         program: Program | None = None, structure: dict | None = None,
                         **kwargs) -> None:
    """Write `path_prefix.json` (the program pruned to what `fetch_vars` need, with the feed
    and fetch names) and `path_prefix.npz` (its parameters), atomically, creating missing
    folders (see `runtime.program.model_file`; `structure` nests the feeds and fetches, see
    `runtime.program.model_structure`).

    >>> import numpy as np, runtime as rt, tempfile, os
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [None, 2], 'float32')
    ...     y = x * 2.0
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'model')
    >>> rt.static.save_inference_model(prefix, [x], [y], program=main)
    >>> prog, feeds, fetches = rt.static.load_inference_model(prefix)
    >>> feeds
    ['x']
    """
    program = program or kwargs.get("main_program") or default_main_program()
    feed_vars = feed_vars if isinstance(feed_vars, (list, tuple)) else [feed_vars]
    fetch_vars = fetch_vars if isinstance(fetch_vars, (list, tuple)) else [fetch_vars]
    feeds = [v.name if isinstance(v, Variable) else str(v) for v in feed_vars]
    fetches = [v.name if isinstance(v, Variable) else str(v) for v in fetch_vars]
    pruned = eliminate_dead_code(program, keep=fetches)
    pruned.inputs = [n for n in pruned.inputs if n in feeds]
    used = {n for op in pruned.ops() for n in op.input_names()} | set(fetches) | {
        r for b in pruned.blocks for r in b.results if r.__class__ is str}
    pruned.tensors = {n: t for n, t in pruned.tensors.items() if n in used}
    model_file.save(path_prefix, pruned, feeds, fetches, structure)


def load_inference_model(path_prefix: str, executor=None, **kwargs) -> list:
    """Read what `save_inference_model` wrote: `[program, feed_names, fetch_vars]`. Only data
    is read; nothing from the files is executed. Every problem with the files (missing,
    truncated, damaged, edited, or a parameter file from another save) raises
    `ModelFormatError`, before anything runs."""
    program, feeds, fetches = model_file.load(path_prefix)
    g = program.global_block()
    return [program, feeds, [g.vars[n] for n in fetches]]
