"""The static IR: a `Program` holds `Block`s; a `Block` holds `Variable`s and `Op`s.

- `Op.inputs` is a list whose entries are a variable *name* (`str`), a Python literal
  (int, float, bool, None, or a `Literal` wrapping any other constant such as a string), or a
  list of those. `Op.outputs` is a list of names. Referring by name (not by object) is what
  lets `Variable._inplace_update` re-point a Python handle at a new value while the ops that
  read the old value keep reading it.
- `Op.blocks` lists the indices of the op's sub-blocks (cond branches, loop bodies).
- `Op.origin` is an index into `Program.origins`, the table of user source locations.
- A sub-block may read any name visible in its parent blocks (lexical scope). It has its own
  `params` (names bound by the op that runs it: loop-carried values) and `results` (what it
  yields back: names or literals).
- Names are unique in a program, so the executor can compile every block into one Python
  function with one local per value.
- `Program.tensors` maps each persistable name to the eager `Tensor` object it stands for
  (parameters, buffers, captured constants): running a program reads and writes those very
  objects, so eager and static training share parameters.
"""
from __future__ import annotations

from ..dtypes import DType
from .literal import Literal  # noqa: F401  (part of the IR: op inputs)
from .printer import program_to_string
from .variable import Variable
from .verify import verify


class Op:
    """One op application: `outputs = type(inputs) {attrs}` with optional sub-blocks."""

    __slots__ = ("attrs", "blocks", "inputs", "origin", "outputs", "type")

    def __init__(self, type: str, inputs: list, outputs: list, attrs: dict,
                 blocks: tuple = (), origin: int | None = None):
        self.type = type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.blocks = tuple(blocks)
        self.origin = origin

    def input_names(self):
        """The variable names this op reads directly (not through its sub-blocks)."""
        for x in self.inputs:
            if x.__class__ is str:
                yield x
            elif isinstance(x, list):
                for t in x:
                    if t.__class__ is str:
                        yield t

    def __repr__(self):
        return f"<Op {self.type} {self.outputs} <- {self.inputs}>"


class Block:
    """A list of ops with the variables they define; block 0 is the program's top level."""

    def __init__(self, program: Program, idx: int, parent: int | None):
        self.program = program
        self.idx = idx
        self.parent = parent
        self.vars: dict[str, Variable] = {}
        self.ops: list[Op] = []
        self.params: list[str] = []
        self.results: list = []

    @property
    def parent_block(self) -> Block | None:
        return None if self.parent is None else self.program.blocks[self.parent]

    def ancestors(self):
        """This block, its parent, ... up to block 0."""
        b = self
        while b is not None:
            yield b
            b = b.parent_block

    def var(self, name: str) -> Variable:
        """The variable `name` as seen from this block (searching enclosing blocks too)."""
        b = self
        while True:  # (`ancestors` without a generator: this runs several times per op built)
            v = b.vars.get(name)
            if v is not None:
                return v
            if b.parent is None:
                break
            b = b.program.blocks[b.parent]
        found = self.program.find_var(name)
        if found is not None:
            return found
        raise KeyError(f"no variable named {name!r} in block {self.idx}")

    def has_var(self, name: str) -> bool:
        return any(name in b.vars for b in self.ancestors())

    def new_var(self, name: str, shape, dtype: DType, *, kind: str = "tensor",
                persistable: bool = False, stop_gradient: bool = True) -> Variable:
        if name in self.program._names:
            raise ValueError(f"variable name {name!r} is already used in this program")
        v = Variable(self, name, None if shape is None else tuple(shape), dtype, kind=kind,
                     persistable=persistable, stop_gradient=stop_gradient)
        self.vars[name] = v
        self.program._names.add(name)
        return v

    def __repr__(self):
        return f"<Block {self.idx} ({len(self.ops)} ops)>"


def _copy_inputs(inputs: list) -> list:
    return [list(x) if isinstance(x, list) else x for x in inputs]


class Program:
    """A static program: blocks of ops over named variables.

    >>> import runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [-1, 4], 'float32')
    ...     y = rt.tanh(x) + 1.0
    >>> print(main)  # doctest: +NORMALIZE_WHITESPACE
    program(%x: f32[-1,4]) {
      %t0: f32[-1,4] = tanh(%x)
      %t1: f32[-1,4] = add(%t0, 1.0)
    }
    """

    def __init__(self):
        self.blocks: list[Block] = [Block(self, 0, None)]
        self.tensors: dict = {}  # persistable name -> the eager Tensor it stands for
        self.inputs: list[str] = []  # names declared with static.data, in order
        self.origins: list[tuple] = []  # (file, line, source) per distinct location
        self._origin_ids: dict = {}
        self.passes: list[str] = []  # names of the passes that produced this program
        self.version = 0  # bumped on every change, so executors recompile
        self._compiled: dict = {}  # (fetch names, device) -> codegen.Compiled
        self._counters: dict = {}
        self._names: set = set()
        self._captured: dict = {}  # id(tensor) -> name
        self._latest: dict = {}  # (block idx, persistable name) -> name of its newest value
        self.leaf_reads: dict = {}  # a read after such a write -> the trainable's name
        # name -> [(hook, origin)]: `register_hook` on a value while the program is built;
        # the backward built from it applies them (`backward.py`)
        self.grad_hooks: dict = {}
        self.hookless: list = []  # (weakrefs: `leaf_hooks.py`)
        # traced from eager code by d2s: an API whose static meaning differs acts as it does
        # eagerly (`Optimizer.minimize` applies the `.grad`s backward() left)
        self.from_eager_code = False
        # name -> (file, line, source) of each Parameter the code being built made (a Layer
        # created inside a converted function; `Builder.made_parameter`)
        self.made_parameters: dict = {}
        # name -> {block: None} for values whose graph a gradient taken while building freed,
        # as eager autograd frees it; (name, block, writer) per in-place write of a value
        # (`freed_graph.py`)
        self.freed: dict = {}
        self.overwritten: list = []
        # `freed_graph.GradientWalk` per gradient taken while building (`freed_loops.py`)
        self.gradient_walks: list = []

    # ---- names --------------------------------------------------------------------------
    @property
    def names(self) -> set:
        """Every variable name used in any block (what `fresh_name` avoids); do not change."""
        return self._names

    @property
    def captured(self) -> dict:
        """id(eager Tensor) -> the name of the persistable variable standing for it."""
        return self._captured

    # ---- structure ------------------------------------------------------------------------
    def global_block(self) -> Block:
        return self.blocks[0]

    def block(self, idx: int) -> Block:
        return self.blocks[idx]

    def new_block(self, parent: int) -> Block:
        b = Block(self, len(self.blocks), parent)
        self.blocks.append(b)
        return b

    def fresh_name(self, prefix: str = "t") -> str:
        """A name not used in this program yet: t0, t1, ... (one counter per prefix)."""
        while True:
            n = self._counters.get(prefix, 0)
            self._counters[prefix] = n + 1
            name = f"{prefix}{n}"
            if name not in self._names:
                return name

    def find_var(self, name: str) -> Variable | None:
        for b in self.blocks:
            v = b.vars.get(name)
            if v is not None:
                return v
        return None

    def all_vars(self):
        for b in self.blocks:
            yield from b.vars.values()

    def list_vars(self) -> list:
        return list(self.all_vars())

    def drop_blocks(self, mark: int) -> None:
        """Discard blocks `mark` and after (a trace to be done again, a probe), with what
        the gradients and in-place writes traced in them noted (`freed`, `overwritten`)."""
        del self.blocks[mark:]
        for blocks in self.freed.values():
            for idx in [i for i in blocks if i >= mark]:
                del blocks[idx]
        self.overwritten = [w for w in self.overwritten if w[1] < mark]
        self.gradient_walks = [w for w in self.gradient_walks if w[0] < mark]

    def ops(self):
        """Every op of every block, outer blocks first."""
        for b in self.blocks:
            yield from b.ops

    def add_origin(self, origin: tuple | None) -> int | None:
        if origin is None:
            return None
        idx = self._origin_ids.get(origin)
        if idx is None:
            idx = self._origin_ids[origin] = len(self.origins)
            self.origins.append(origin)
        return idx

    def origin_of(self, op: Op) -> tuple | None:
        return None if op.origin is None else self.origins[op.origin]

    def touch(self) -> None:
        self.version += 1

    # ---- printing and checking ------------------------------------------------------------
    def to_string(self, with_origin: bool = False) -> str:
        return program_to_string(self, with_origin=with_origin)

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return f"<Program {len(self.blocks)} blocks, {sum(len(b.ops) for b in self.blocks)} ops>"

    def verify(self) -> None:
        """Raise `ProgramError` (with the program text) if the program is malformed."""
        verify(self)

    def clone(self, for_test: bool = False) -> Program:
        """A deep copy of the structure (blocks, variables with all their flags, ops, origins)
        that shares the same parameter tensors, made directly (as torch.fx's graph copy): JSON
        is for files. `for_test` is accepted for Paddle compatibility: layers pick train/eval
        behaviour when they are traced (`layer.eval()`), so the copy is the same program
        either way."""
        new = Program()
        new.blocks = []
        for b in self.blocks:
            nb = Block(new, b.idx, b.parent)
            for name, v in b.vars.items():
                nv = Variable(nb, name, v._static_shape, v.dtype, kind=v.kind,
                              persistable=v.persistable, stop_gradient=v._stop_gradient)
                nv._user_stop = v._user_stop
                if v.detached:
                    nv.detached = True
                nb.vars[name] = nv
            nb.ops = [Op(op.type, _copy_inputs(op.inputs), list(op.outputs), dict(op.attrs),
                         op.blocks, op.origin) for op in b.ops]
            nb.params = list(b.params)
            nb.results = list(b.results)
            new.blocks.append(nb)
        new.tensors = dict(self.tensors)
        new.inputs = list(self.inputs)
        new.origins = list(self.origins)
        new._origin_ids = dict(self._origin_ids)
        new.passes = list(self.passes)
        new._counters = dict(self._counters)
        new._names = set(self._names)
        new._captured = dict(self._captured)
        new._latest = dict(self._latest)
        new.leaf_reads = dict(self.leaf_reads)
        new.grad_hooks = {name: list(hooks) for name, hooks in self.grad_hooks.items()}
        new.hookless, new.from_eager_code = list(self.hookless), self.from_eager_code
        new.freed = {name: dict(blocks) for name, blocks in self.freed.items()}
        new.overwritten = list(self.overwritten)
        new.gradient_walks = list(self.gradient_walks)
        return new

    def num_ops(self) -> int:
        return sum(len(b.ops) for b in self.blocks)


def defined_under(program: Program, idx: int) -> set:
    """Every name defined in block `idx` or any block nested in it."""
    b = program.blocks[idx]
    out = set(b.params)
    for op in b.ops:
        out.update(op.outputs)
        for sub in op.blocks:
            out |= defined_under(program, sub)
    return out


def block_free(program: Program, idx: int, cache: dict) -> set:
    """Names read by block `idx` or its sub-blocks that are not defined inside them."""
    got = cache.get(idx)
    if got is None:
        b = program.blocks[idx]
        got = set()
        local = set(b.params)
        for op in b.ops:
            got.update(n for n in op.input_names() if n not in local)
            for sub in op.blocks:
                got.update(n for n in block_free(program, sub, cache) if n not in local)
            local.update(op.outputs)
        got.update(r for r in b.results if r.__class__ is str and r not in local)
        cache[idx] = got
    return got


def used_names(program: Program, fetch) -> set:
    """The names some op, block result or fetch reads (the feeds a run takes)."""
    used = set(fetch)
    for b in program.blocks:
        for op in b.ops:
            used.update(op.input_names())
        used.update(r for r in b.results if r.__class__ is str)
    return used
