"""The first run of a big program, interpreted: each op's kernel called in turn from the
program itself, with no Python function generated and compiled for it.

Compiling a program (`codegen.compile_program`) costs about 70 us per op (choosing each op's
call, liveness, emitting the lines, CPython's `compile`): a 10,000-line converted function
makes 16,000 ops and spent 1.1 s of its first call there. `FirstRun` stands for the compiled
program of such a program: its first run is interpreted here (a few us per op), and the
program is compiled on the run after, which then runs it as before. A program run once pays
no compilation; one run again pays it once, a run later.

Only programs whose compiled form calls the same kernels op for op are interpreted (`worth`):
none with a `while` (the code generator rewrites loops: counters kept as ints, small loops
run in C), none with a value large enough for the fusion of elementwise chains (a fused chain
may round differently), none captured as CUDA graphs, and none under `MIN_OPS` ops (a small
program compiles in a millisecond and its steady calls, benchmarks and memory tests expect its
compiled form from the second call). The direct calls that compiled code makes instead of the
kernels compute what the kernels do, bit for bit (tests/static/test_codegen*.py), so both
runs give the same values.

As `torch.fx.Interpreter` does: one method per kind of op, values freed after their last use
(where the compiled program `del`s them), and a failing op remembered (`failure`) for the
executor to name it and the user's line that built it, as it does for compiled programs.
"""
from __future__ import annotations

from .. import backend
from ..ops.registry import OPS
from . import cuda_graph, fusion
from .codegen import Compiled
from .ir import Block, Literal, Op, Program, block_free, used_names

# programs with fewer ops are compiled on their first run (see the module's docstring)
MIN_OPS = 1000


def worth(program: Program) -> bool:
    """Whether `program`'s first run is interpreted rather than compiled."""
    n = 0
    for block in program.blocks:
        for op in block.ops:
            if op.type == "while":
                return False
        n += len(block.ops)
    return n >= MIN_OPS and not cuda_graph.enabled() and \
        not fusion.may_fuse(program, fusion.mode())


class FirstRun:
    """What `Executor.compiled` gives for a program `worth` interpreting: `fn(feed)` and
    `body(*arrays)` as a `Compiled`'s, interpreted on the first run and compiled (`compile()`,
    which returns the `Compiled`) from the second on. Reading the compiled form's `source`,
    `filename`, `line_map` or `idents` compiles it."""

    def __init__(self, program: Program, fetch: tuple, feed_check, compile):
        self.program, self.fetch, self.version = program, fetch, program.version
        self._feed_check, self._compile = feed_check, compile
        self.compiled: Compiled | None = None
        self.runs = 0
        used = used_names(program, fetch)
        self.body_feeds = tuple(n for n in program.inputs if n in used)
        gblk = program.global_block()
        self._captured = {name: t for name, t in program.tensors.items() if name in gblk.vars}
        self._reads = [(name, t) for name, t in self._captured.items() if name in used]
        self._deletions: dict = {}  # block idx -> {op index: names dead after it}
        self._liveness = None
        # (exception, ("op", op, block) or ("feed", name), the values then) of the last failure
        self.failure = None

    # ---- the Compiled interface -----------------------------------------------------------
    def fn(self, feed: dict) -> tuple:
        """Check the feeds (as the compiled `_run` does), then run the program on them."""
        if self.runs:
            return self.ready().fn(feed)
        check = self._feed_check
        if len(feed) != len(self.body_feeds):
            check.check_names(feed)
        gblk = self.program.global_block()
        arrays = []
        for name in self.body_feeds:
            try:
                x = feed[name]
                if x.__class__ is not backend.XP.ndarray:
                    x = check.to_array(x, name, gblk.vars[name].dtype.np)
                check.check(x, name)
            except Exception as e:
                self.failure = (e, ("feed", name), {})
                raise
            arrays.append(x)
        return self.body(*arrays)

    def body(self, *arrays) -> tuple:
        """Run the program on the arrays of `body_feeds` (checked by the caller)."""
        if self.runs:
            return self.ready().body(*arrays)
        self.runs += 1
        env = dict(zip(self.body_feeds, arrays, strict=True))
        for name, tensor in self._reads:
            env[name] = tensor._data
        self.run_block(self.program.global_block(), env)
        captured = self._captured
        return tuple([captured[n]._data if n in captured else env[n] for n in self.fetch])

    def ready(self) -> Compiled:
        """The compiled program (compiled now on first use); the executor's cache holds it
        from then on."""
        if self.compiled is None:
            self.compiled = self._compile()
            self.failure = self._liveness = None
            self._deletions.clear()
        return self.compiled

    @property
    def source(self) -> str:
        return self.ready().source

    @property
    def filename(self) -> str:
        return self.ready().filename

    @property
    def line_map(self) -> dict:
        return self.ready().line_map

    @property
    def idents(self) -> dict:
        return self.ready().idents

    def failed(self, e: BaseException):
        """(entry, values by variable name) of the op or feed whose run raised `e`, or None
        (not raised by this interpreter's run)."""
        failure = self.failure
        if failure is None or failure[0] is not e:
            return None
        self.failure = None
        return failure[1], failure[2]

    # ---- running ops ----------------------------------------------------------------------
    def run_block(self, block: Block, env: dict) -> None:
        dels = self._deletions.get(block.idx)
        if dels is None:
            if self._liveness is None:
                self._liveness = Liveness(self.program, self.fetch)
            dels = self._deletions[block.idx] = self._liveness.deletions(block)
        for j, op in enumerate(block.ops):
            try:
                _RUNNERS.get(op.type, FirstRun.run_kernel)(self, op, block, env)
            except Exception as e:
                if self.failure is None or self.failure[0] is not e:  # (the innermost op)
                    self.failure = (e, ("op", op, block), env)
                raise
            for name in dels.get(j, ()):
                env.pop(name, None)

    def run_kernel(self, op: Op, block: Block, env: dict) -> None:
        args = [env[x] if x.__class__ is str else _arg(x, env) for x in op.inputs]
        if op.attrs:
            attrs = {key: _literal(v) for key, v in op.attrs.items()}
            out = OPS[op.type].kernel(backend.XP, *args, **attrs)
        else:
            out = OPS[op.type].kernel(backend.XP, *args)
        outs = op.outputs
        if not outs:
            return
        if len(outs) != 1:
            out = tuple(out)
            if len(out) != len(outs):
                raise ValueError(f"op {op.type} gave {len(out)} values for "
                                 f"{len(outs)} outputs")
        else:
            out = (out,)
        ndarray = backend.XP.ndarray
        for name, value in zip(outs, out):
            if value.__class__ is not ndarray:
                v = block.var(name)
                if v._static_shape == () and v.kind == "tensor":
                    # NumPy returns 0-d results as scalars; arrays, as eager mode and the
                    # compiled program give
                    value = backend.XP.asarray(value)
            env[name] = value

    def run_cond(self, op: Op, block: Block, env: dict) -> None:
        taken = op.blocks[0] if _arg(op.inputs[0], env) else op.blocks[1]
        self._run_branch(op, taken, env)

    def run_switch(self, op: Op, block: Block, env: dict) -> None:
        index = int(_arg(op.inputs[0], env))
        cases = op.attrs["cases"]
        taken = next((b for case, b in zip(cases, op.blocks) if index == case), op.blocks[-1])
        self._run_branch(op, taken, env)

    def _run_branch(self, op: Op, idx: int, env: dict) -> None:
        sub = self.program.blocks[idx]
        self.run_block(sub, env)
        values = [_arg(r, env) for r in sub.results]
        if len(values) != len(op.outputs):
            raise ValueError(f"block {idx} gave {len(values)} results for "
                             f"{len(op.outputs)} outputs of {op.type}")
        env.update(zip(op.outputs, values))

    def run_recompute(self, op: Op, block: Block, env: dict) -> None:
        sub = self.program.blocks[op.blocks[0]]
        values = [_arg(x, env) for x in op.inputs]
        env.update(zip(sub.params, values, strict=True))
        self.run_block(sub, env)

    def run_write(self, op: Op, block: Block, env: dict) -> None:
        target, value = op.inputs
        tensor = self._captured[target]
        tensor._data = _arg(value, env)
        tensor._version += 1
        env[target] = tensor._data  # later reads of the persistable see the new value


class Liveness:
    """Where a run frees each value: after the op of its block that reads it last (itself or
    in that op's sub-blocks), as the compiled program `del`s it; never a block's result, a
    fetched value, or a value some block reads that does not lie inside the block defining
    it (a backward branch reading its forward branch's values)."""

    def __init__(self, program: Program, fetch: tuple):
        self.program, self.fetch = program, fetch
        self.free: dict = {}  # (`block_free`'s cache)
        defined = {}  # name -> the block (not the global one) defining it
        for b in program.blocks[1:]:
            for n in b.params:
                defined[n] = b.idx
            for op in b.ops:
                for n in op.outputs:
                    defined[n] = b.idx
        parent = {b.idx: b.parent for b in program.blocks}
        self.shared = set()
        for b in program.blocks:
            reads = [n for op in b.ops for n in op.input_names()]
            reads += [r for r in b.results if r.__class__ is str]
            for n in reads:
                home = defined.get(n)
                if home is None or home == b.idx:
                    continue
                up = parent[b.idx]
                while up is not None and up != home:
                    up = parent[up]
                if up is None:
                    self.shared.add(n)

    def deletions(self, block: Block) -> dict:
        """op index -> the names dead after that op of `block`."""
        last: dict = {}
        here = set(block.params)
        for j, op in enumerate(block.ops):
            here.update(op.outputs)
            for n in op.outputs:
                last.setdefault(n, j)
            for n in op.input_names():
                last[n] = j
            for sub in op.blocks:
                for n in block_free(self.program, sub, self.free):
                    last[n] = j
        keep = {r for r in block.results if r.__class__ is str} | self.shared
        if block.idx == 0:
            keep.update(self.fetch)
        out: dict = {}
        for n, j in last.items():
            if n in here and n not in keep:
                out.setdefault(j, []).append(n)
        return out


_RUNNERS = {"cond": FirstRun.run_cond, "switch_case": FirstRun.run_switch,
            "recompute": FirstRun.run_recompute, "write_persistable": FirstRun.run_write}


def _arg(x, env: dict):
    """An op input's value: a variable's, a list of inputs', or a constant's."""
    cls = x.__class__
    if cls is str:
        return env[x]
    if cls is list:
        return [_arg(t, env) for t in x]
    return _literal(x)


def _literal(v):
    """A constant as the compiled program writes it: lists and tuples rebuilt as plain ones
    (of their items' constants), a `Literal` unwrapped, anything else itself."""
    if isinstance(v, list):
        return [_literal(t) for t in v]
    if isinstance(v, tuple):
        return tuple(_literal(t) for t in v)
    if isinstance(v, Literal):
        return _literal(v.value)
    return v
