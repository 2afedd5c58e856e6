"""Load-time checks of a program read from a file: everything the executor will rely on, so a
loaded model that passes runs (or fails only on its inputs), never fails on its own structure
at the first call.

Checked, beyond what decoding already checked (field types, known op types, block order):
feeds and fetches; names defined once and before use, seen through the block nesting (a
sub-block sees what its enclosing blocks defined before the op that runs it); persistables;
the sub-blocks, arity and dtypes of the structural ops (`cond`, `while`, `switch_case`,
`recompute`, `write_persistable`); each other op's attributes against its kernel's parameters
(names, required ones, and the type its default has); op origins; then `verify` (every op's
inference rule accepts its inputs and attributes and agrees with the recorded outputs); the
size of every op's result, from its static shape, is at most `MAX_RESULT_BYTES` (a dim known
only when the program runs counts as 1); and the program compiles.
"""
from __future__ import annotations

import inspect

from ..dtypes import ALL, bool_
from ..ops import registry
from .executor import Executor
from .ir import Literal, Program
from .origin import short
from .serialize import ModelFormatError
from .verify import ProgramError, verify

_BRANCHING = ("cond", "switch_case")
# the most bytes one op's result may ask for, from its static shape: far above any zoo model's
# largest value (a few MiB) and far below a machine's memory; settable (a module global, or
# `d2s.load(path, max_result_bytes=N)` for one load)
MAX_RESULT_BYTES = 1 << 30
_STRUCTURAL = ("cond", "while", "switch_case", "recompute", "write_persistable")
# inputs an op leaves out on purpose (None) when its attribute says so: a training-mode
# batch_norm uses the batch's statistics, not the running ones (its inference rule refuses
# them missing in eval mode)
_OPTIONAL_INPUTS = {"batch_norm": ("training", {"rmean", "rvar"})}


def _fail(msg: str):
    raise ModelFormatError(f"invalid program: {msg}")


def feeds_and_fetches(d: dict) -> tuple[list, list]:
    feeds, fetches = d.get("feed"), d.get("fetch")
    if not isinstance(feeds, list) or not isinstance(fetches, list) or not all(
            isinstance(n, str) for n in feeds + fetches):
        _fail("it has no 'feed' and 'fetch' lists of names (not an inference model)")
    return list(feeds), list(fetches)


def check(program: Program, feeds: list, fetches: list,
          max_result_bytes: int | None = None) -> None:
    g = program.global_block()
    for v in program.all_vars():
        if v.kind == "tensor" and v._static_shape is None:
            _fail(f"tensor %{v.name} has no shape")
    if len(set(feeds)) != len(feeds) or len(set(program.inputs)) != len(program.inputs):
        _fail(f"an input is named twice in {feeds}")
    for n in program.inputs:
        if n not in feeds:
            _fail(f"data variable {n!r} is not among the feeds {feeds}")
    for n in feeds:
        v = g.vars.get(n)
        if v is None or v.persistable or v.kind != "tensor" or v._static_shape is None:
            _fail(f"feed {n!r} is not a data tensor of the top block")
    for n in program.tensors:
        if not g.vars[n].persistable:
            _fail(f"{n!r} has a saved value but is not persistable")
    used_by = _check_blocks(program)
    for b in program.blocks[1:]:
        if b.idx not in used_by:  # left behind by dead-code elimination; never run
            b.ops, b.params, b.results = [], [], []
    defined = set(program.inputs) | set(program.tensors)
    top = _check_scopes(program, 0, defined, set(defined))
    for n in fetches:
        if n not in top or n not in g.vars:
            _fail(f"fetch {n!r} is not a value of the top block")
    _verify(program)
    _check_result_sizes(program, MAX_RESULT_BYTES if max_result_bytes is None else
                        max_result_bytes)


def _check_result_sizes(program: Program, limit: int) -> None:
    """Each op's results fit in `limit` bytes (so a loaded model never allocates more per op,
    whatever its file asks)."""
    for b in program.blocks:
        for op in b.ops:
            for name in op.outputs:
                v = program.find_var(name) if name.__class__ is str else None
                if v is None or v.kind != "tensor" or v._static_shape is None:
                    continue
                size = v.dtype.np.itemsize
                for d in v._static_shape:
                    size *= max(int(d), 1)
                if size > limit:
                    where = short(program.origin_of(op))
                    _fail(f"{op.type} op{f' ({where})' if where else ''} makes %{name} "
                          f"{v.dtype.name}{list(v._static_shape)}, {size} bytes: more than the "
                          f"limit of {limit} bytes per op result (raise it with "
                          "d2s.load(path, max_result_bytes=N) or "
                          "runtime.program.model_check.MAX_RESULT_BYTES)")


def _check_blocks(program: Program) -> dict:
    used_by = {}
    n_origins = len(program.origins)
    for b in program.blocks:
        for op in b.ops:
            if op.origin is not None and not 0 <= op.origin < n_origins:
                _fail(f"a {op.type} op points at origin {op.origin} of {n_origins}")
            for idx in op.blocks:
                if not 0 < idx < len(program.blocks) or program.blocks[idx].parent != b.idx:
                    _fail(f"{op.type} in block {b.idx} refers to block {idx}, which is not "
                          f"a child of block {b.idx}")
                if idx in used_by:
                    _fail(f"block {idx} is run by two ops")
                used_by[idx] = op
            check = _STRUCTURE_CHECKS.get(op.type)
            if check is not None:
                check(program, b, op)
            elif op.blocks:
                _fail(f"{op.type} op has sub-blocks")
            else:
                _check_attrs(op)
    return used_by


def _check_scopes(program: Program, idx: int, visible: set, defined_once: set) -> set:
    """Names read in block `idx` are visible there; every name is defined once. Returns the
    names visible at the end of the block."""
    b = program.blocks[idx]
    visible = set(visible)

    def define(n: str) -> None:
        if n in defined_once:
            _fail(f"%{n} is defined twice")
        if program.find_var(n) is None:
            _fail(f"%{n} is defined in block {idx} but never declared")
        defined_once.add(n)
        visible.add(n)

    for n in b.params:
        define(n)
    for op in b.ops:
        for n in op.input_names():
            if n not in visible:
                _fail(f"{op.type} in block {idx} reads %{n}, which is not defined before it "
                      "in this block or an enclosing one")
        for sub in op.blocks:
            if op.type != "recompute":
                _check_scopes(program, sub, visible, defined_once)
        for n in op.outputs:
            define(n)
    for r in b.results:
        if r.__class__ is str and r not in visible:
            _fail(f"block {idx} yields %{r}, which it cannot see")
    return visible


def _verify(program: Program) -> None:
    try:
        verify(program)
    except ProgramError as e:
        _fail(str(e).split("\n--- program ---", 1)[0])


def compile_check(program: Program, fetches: list) -> None:
    """Compile the program now (the executor caches it), so a program the code generator
    cannot handle is refused at load."""
    try:
        Executor().compiled(program, tuple(fetches))
    except (SyntaxError, RecursionError, MemoryError, ValueError, TypeError, KeyError,
            IndexError, AttributeError) as e:
        _fail(f"it does not compile ({type(e).__name__}: {str(e)[:200]})")


# ---- structural ops ---------------------------------------------------------------------------

def _var(program: Program, block, name):
    if name.__class__ is not str:
        _fail(f"{name!r} where a variable name is needed")
    v = program.find_var(name)
    if v is None:
        _fail(f"%{name} is never declared")
    return v


def _result_dtypes(program: Program, block, results: list, what: str) -> list:
    out = []
    for r in results:
        if r.__class__ is str:
            out.append(_var(program, block, r).dtype)
        elif isinstance(r, (bool, int, float)):
            out.append(None)  # a literal result: any number
        else:
            _fail(f"{what} yields {r!r}")
    return out


def _same_dtypes(program: Program, names: list, dtypes: list, what: str) -> None:
    for n, dt in zip(names, dtypes):
        v = _var(program, None, n)
        if dt is not None and v.dtype != dt:
            _fail(f"{what}: %{n} is {v.dtype.name} but the value given for it is {dt.name}")


def _no_attrs(op, allowed=()) -> None:
    extra = set(op.attrs) - set(allowed)
    if extra:
        _fail(f"{op.type} op has unknown attributes {sorted(extra)}")


def _predicate(program, block, op, kinds: str) -> None:
    if len(op.inputs) != 1:
        _fail(f"{op.type} op takes one input, got {len(op.inputs)}")
    v = _var(program, block, op.inputs[0])
    ok = v.dtype == bool_ if kinds == "b" else v.dtype.kind in kinds
    if not ok or v.kind != "tensor" or v.size not in (1, -1):
        _fail(f"{op.type} op: %{v.name} ({v.type_str()}) cannot select a branch")


def _check_branching(program: Program, block, op) -> None:
    if op.type == "cond":
        _no_attrs(op)
        _predicate(program, block, op, "b")
        n_blocks = 2
    else:
        _no_attrs(op, ("cases",))
        cases = op.attrs.get("cases")
        if not isinstance(cases, list) or not all(c.__class__ is int for c in cases) or \
                len(set(cases)) != len(cases):
            _fail(f"switch_case op has malformed cases {cases!r}")
        _predicate(program, block, op, "iu")
        n_blocks = len(cases) + 1
    if len(op.blocks) != n_blocks:
        _fail(f"{op.type} op has {len(op.blocks)} branches, expected {n_blocks}")
    for idx in op.blocks:
        sub = program.blocks[idx]
        if sub.params or len(sub.results) != len(op.outputs):
            _fail(f"{op.type} op: branch block {idx} yields {len(sub.results)} values for "
                  f"{len(op.outputs)} outputs")
        dtypes = _result_dtypes(program, sub, sub.results, f"block {idx}")
        _same_dtypes(program, op.outputs, dtypes, f"{op.type} output")


def _check_while(program: Program, block, op) -> None:
    _no_attrs(op)
    if len(op.blocks) != 2:
        _fail(f"while op has {len(op.blocks)} blocks, expected 2 (cond, body)")
    cblk, bblk = (program.blocks[i] for i in op.blocks)
    n = len(op.inputs)
    if len(cblk.params) != n or len(bblk.params) != n or len(bblk.results) != n or \
            not n <= len(op.outputs) <= 2 * n or len(cblk.results) != 1:
        _fail(f"while op: {n} loop values but cond takes {len(cblk.params)}, body takes "
              f"{len(bblk.params)} and yields {len(bblk.results)}, {len(op.outputs)} outputs")
    init = [_var(program, block, x).dtype for x in op.inputs]
    _same_dtypes(program, cblk.params, init, "while cond parameter")
    _same_dtypes(program, bblk.params, init, "while body parameter")
    _same_dtypes(program, op.outputs[:n], init, "while output")
    _same_dtypes(program, op.outputs[:n],
                 _result_dtypes(program, bblk, bblk.results, "the while body"), "while body")
    c = cblk.results[0]
    if c.__class__ is not str or _var(program, cblk, c).dtype != bool_:
        _fail("while op: its cond block does not yield a bool tensor")
    for name in op.outputs[n:]:
        if _var(program, block, name).kind != "array":
            _fail(f"while op: saved values %{name} must be an array")


def _check_recompute(program: Program, block, op) -> None:
    _no_attrs(op)
    if len(op.blocks) != 1 or op.outputs or \
            len(program.blocks[op.blocks[0]].params) != len(op.inputs):
        _fail("recompute op must run one block on its inputs and have no outputs")


def _check_write(program: Program, block, op) -> None:
    _no_attrs(op)
    if op.blocks or op.outputs or len(op.inputs) != 2 or \
            op.inputs[0] not in program.tensors or op.inputs[1].__class__ is not str:
        _fail("write_persistable op must write a value into a persistable")
    target, value = (_var(program, block, n) for n in op.inputs)
    if target.dtype != value.dtype:
        _fail(f"write_persistable: %{value.name} is {value.dtype.name}, the persistable "
              f"%{target.name} is {target.dtype.name}")


_STRUCTURE_CHECKS = {"cond": _check_branching, "switch_case": _check_branching,
                     "while": _check_while, "recompute": _check_recompute,
                     "write_persistable": _check_write}


# ---- attributes -------------------------------------------------------------------------------

_SIGNATURES: dict = {}


def _signature(op_type: str):
    sig = _SIGNATURES.get(op_type, False)
    if sig is False:
        try:
            sig = inspect.signature(registry.OPS[op_type].kernel)
        except (TypeError, ValueError):
            sig = None
        _SIGNATURES[op_type] = sig
    return sig


def _may_be_none(op, key: str) -> bool:
    attr, keys = _OPTIONAL_INPUTS.get(op.type, (None, ()))
    return key in keys and op.attrs.get(attr) is True


def _check_attrs(op) -> None:
    """The kernel, called as the executor calls it (`kernel(xp, *inputs, **attrs)`), binds
    every attribute to one of its parameters, and each attribute has the type of that
    parameter's default (a bool for a bool, an int for an int, a number for a float, a str for
    a str)."""
    for x in op.inputs:
        _check_input(op, x)
    sig = _signature(op.type)
    if sig is None:
        return
    try:
        bound = sig.bind(None, *op.inputs, **op.attrs)
    except TypeError as e:
        _fail(f"{op.type} op: its {len(op.inputs)} inputs and attributes "
              f"{sorted(op.attrs)} do not fit the op ({e})")
    _check_shape_attr(op, sig)
    for key, value in list(bound.arguments.items())[1:len(op.inputs) + 1]:
        p = sig.parameters[key]
        if p.kind is p.VAR_POSITIONAL:  # (e.g. a shape's entries: None marks a literal slot)
            continue
        if value is None and p.default is not None and not _may_be_none(op, key):
            _fail(f"{op.type} op: input {key!r} is None")
    for key, value in op.attrs.items():
        rule = _ATTR_RULES.get(key)
        if rule is not None and not rule[0](value):
            _fail(f"{op.type} op: attribute {key}={value!r} should be {rule[1]}")
        p = sig.parameters.get(key)
        if p is None or p.default is inspect.Parameter.empty or p.default is None:
            continue
        want = type(p.default)
        ok = (value.__class__ is bool if want is bool else
              value.__class__ is int if want is int else
              value.__class__ in (int, float) if want is float else
              isinstance(value, str) if want is str else
              isinstance(value, (list, tuple)) if want in (list, tuple) else True)
        if not ok:
            _fail(f"{op.type} op: attribute {key}={value!r} should be a {want.__name__}")


def _check_shape_attr(op, sig) -> None:
    """A `shape` attribute has a None for each dim given as a tensor input (or is None for one
    1-D shape tensor): as many as the kernel's `*dims` receive."""
    if "shape" not in op.attrs:
        return
    params = list(sig.parameters.values())[1:]  # after xp
    if not any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return
    fixed = sum(1 for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                inspect.Parameter.POSITIONAL_OR_KEYWORD))
    dims = len(op.inputs) - fixed
    shape = op.attrs["shape"]
    want = 1 if shape is None else sum(d is None for d in shape)
    if dims != want:
        _fail(f"{op.type} op: shape {shape!r} takes {want} dims from tensors but the op has "
              f"{dims}")


def _is_int(v) -> bool:
    return v.__class__ is int


def _ints(v, none=False) -> bool:
    return isinstance(v, (list, tuple)) and all(
        _is_int(t) or (none and t is None) for t in v)


def _number(v) -> bool:
    return v.__class__ in (int, float)


_DTYPE_NAMES = frozenset(d.name for d in ALL)
_INT = (_is_int, "an int")
_INT_OR_INTS = (lambda v: _is_int(v) or _ints(v), "an int or a list of ints")
_STR = (lambda v: isinstance(v, str), "a str")
# attribute name -> (check, what it should be), for attributes of these names on any op
_ATTR_RULES = {
    "axis": (lambda v: v is None or _is_int(v) or _ints(v), "None, an int or a list of ints"),
    "shape": (lambda v: v is None or _ints(v, none=True), "a list of ints (None for a dim "
                                                          "given as a tensor)"),
    "perm": (_ints, "a list of ints"), "repeat_times": (_ints, "a list of ints"),
    "paddings": (lambda v: isinstance(v, (list, tuple)) and all(_ints(t) for t in v),
                 "a list of (before, after) pairs of ints"),
    "shifts": _INT_OR_INTS, "kernel": _INT_OR_INTS, "stride": _INT_OR_INTS,
    "dilation": _INT_OR_INTS, "output_padding": _INT_OR_INTS,
    "padding": (lambda v: isinstance(v, str) or _is_int(v) or _ints(v),
                "a str, an int or a list of ints"),
    "size": (lambda v: v is None or _is_int(v) or _ints(v, none=True),
             "an int or a list of ints"),
    "sections": (lambda v: v is None or _is_int(v) or _ints(v), "None, an int or a list of ints"),
    **{k: (lambda v: v is None or _is_int(v), "None or an int")  # (None: a tensor input)
       for k in ("num", "num_rows", "num_columns")},
    "dtype": (lambda v: v is None or v in _DTYPE_NAMES, "a dtype name"),
    "min": (lambda v: v is None or _number(v), "None or a number"),
    "max": (lambda v: v is None or _number(v), "None or a number"),
    **{k: _INT for k in ("groups", "num_classes", "diagonal",
                         "begin_norm_axis", "start_axis", "stop_axis", "ignore_index",
                         "summarize", "bit_length", "quant_axis", "seed", "n")},
    **{k: _STR for k in ("equation", "message", "name", "sep", "end", "mode", "reduction",
                         "data_format", "kind")},
}


def _check_input(op, x) -> None:
    if x.__class__ is list:
        for t in x:
            if t.__class__ is list:
                _fail(f"{op.type} op has a nested list input")
            _check_input(op, t)
    elif not (x is None or x.__class__ in (str, bool, int, float) or isinstance(x, Literal)):
        _fail(f"{op.type} op has an input {x!r} that is neither a name nor a literal")
