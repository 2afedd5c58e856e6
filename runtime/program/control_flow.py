"""Control flow as ops with sub-blocks: `cond`, `while_loop`, `switch_case` (Paddle semantics).

The Python functions given for branches and loop bodies are traced into sub-blocks. A
predicate (or branch index) that is a Python value or an eager Tensor is not a graph value, so
the chosen branch is simply called (d2s relies on this: Python conditions stay Python).
Outputs of the branches must agree in structure and dtype; dims that differ become -1. Loop
variables whose shapes change across iterations get -1 dims (the body is traced again with
the relaxed shapes, at most once per changed dim).
"""
from __future__ import annotations

from .. import core, pytree
from ..dtypes import bool_
from ..ops import registry
from ..ops.registry import OpError, OpTypeError
from ..tensor import constant
from . import grad_views, stop_flags, zero_division
from .builder import Builder, current_builder
from .variable import Variable


def _structural_kernel(xp, *args, **attrs):
    raise RuntimeError("control-flow ops are run by the executor, not called as kernels")


def _structural_infer(*args, **attrs):
    raise OpError("control-flow ops are built by rt.static.nn.cond / while_loop / switch_case")


for _name in ("cond", "while", "switch_case", "recompute", "write_persistable"):
    registry.register(_name, kernel=_structural_kernel, infer=_structural_infer, amp="keep",
                      doc="A structural op; the executor emits code for it directly.")


# ---- nested structures of outputs ------------------------------------------------------------

def flatten(x):
    """(leaves, tree) of a branch's or loop's values, by `runtime.pytree`'s one rule (lists,
    tuples, namedtuples, dicts and dataclasses are containers), except that a `None` stays
    structure here: it is no value of the graph, and every branch must return it alike."""
    leaves, tree = pytree.flatten(x)
    nones = tuple(v is None for v in leaves)
    return [v for v in leaves if v is not None], (pytree.structure(tree), nones, tree)


def unflatten(tree, leaves):
    _, nones, t = tree
    it = iter(leaves)
    return pytree.unflatten(t, [None if n else next(it) for n in nones])


def _same_structure(a, b) -> bool:
    return a[:2] == b[:2]


def describe(x) -> str:
    """'(f32[4], i64[])' style description of a branch output for error messages."""
    if isinstance(x, (list, tuple)):
        inner = ", ".join(describe(t) for t in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in x.items()) + "}"
    if isinstance(x, Variable):
        return "Variable " + x.type_str()
    if isinstance(x, core.TensorBase):
        return f"Tensor {x.dtype.short}{list(x._data.shape)}".replace(" ", "")
    try:
        return repr(x)
    except Exception:  # noqa: BLE001  (an object whose text is refused: its type)
        return f"<{type(x).__name__}>"


def _is_tensor(x) -> bool:
    return core.is_tensor(x)


def _meta(x):
    if isinstance(x, Variable):
        return x._static_shape, x.dtype
    m = registry.meta_of(x)
    return m.shape, m.dtype


def _merge_shape(a, b):
    """Dims that differ become -1; None (a tensor array with no element yet) takes the
    other side."""
    if a is None or b is None:
        return b if a is None else a
    return tuple(x if x == y else -1 for x, y in zip(a, b))


def _same_rank(a, b) -> bool:
    return a is None or b is None or len(a) == len(b)


# ---- cond / switch_case ----------------------------------------------------------------------

def _trace(builder: Builder, fn):
    with builder.sub_block() as blk:
        out = fn() if fn is not None else None
    return blk, out


def _trace_all(builder: Builder, fns: list, views) -> list:
    """Each branch traced from the training step's gradient view as it was before them
    (`grad_views`: the view after the op is what any of them leaves)."""
    traced = []
    for fn in fns:
        views.enter()
        traced.append(_trace(builder, fn))
        views.leave(traced[-1][0])
    return traced


def _same_constant(v, first) -> bool:
    """Whether a Python value a branch returns is `first`, the first branch's: of one type
    and equal. A converter's stand-in for a str only the run decides (`run_str`, whose `==`
    may refuse: the text `sep.join` makes when the program runs) is one constant only where
    it is the same object; otherwise the branches' outputs are refused below."""
    if type(v) is not type(first):
        return False
    if v is first:
        return True
    if getattr(type(v), "run_str", False):  # (the class's: a stand-in may answer any name)
        return False
    return bool(v == first)


def _merge_branches(op: str, builder: Builder, labels: list, blocks: list, outs: list):
    """Check that branch outputs agree; set each block's results; return (output treedef,
    leaf list with None where a graph output goes, list of (shape, dtype, stop, is an array,
    is an array of Python numbers, stands for a Python number) per graph output)."""
    flats = [flatten(o) for o in outs]
    tree = flats[0][1]
    for (leaves, t), label, o in zip(flats[1:], labels[1:], outs[1:]):
        if not _same_structure(t, tree):
            raise ValueError(
                f"{op}: the branches return different structures: {labels[0]} returned "
                f"{describe(outs[0])} but {label} returned {describe(o)}. Every branch must "
                "return the same number and nesting of values.")
    columns = list(zip(*[f[0] for f in flats])) if flats[0][0] else []
    results = [[] for _ in blocks]
    consts, specs = [], []
    for i, col in enumerate(columns):
        if not any(_is_tensor(v) for v in col) and all(_same_constant(v, col[0]) for v in col):
            consts.append(col[0])
            continue
        metas = [(_meta(v) if _is_tensor(v) else None) for v in col]
        first = next(m for m in metas if m is not None) if any(metas) else None
        if first is None:  # differing Python numbers: they become constants
            if any(getattr(type(v), "run_str", False) for v in col):  # (the converter
                raise TypeError(  # gives such strs out as ids: `branch_strs`)
                    f"{op}: output {i} differs between branches: a str only the run decides "
                    "on one, another value on another")
            first = _meta(builder.variable_of(col[0]))
        shape, dtype = first
        for m, v, label in zip(metas, col, labels):
            if m is not None and (m[1] != dtype or not _same_rank(m[0], shape)):
                raise OpTypeError(
                    f"{op}: output {i} differs between branches: {labels[0]} returned "
                    f"{describe(col[0])} but {label} returned {describe(v)}; branches must "
                    "return values of the same dtype and rank")
            if m is not None:
                shape = _merge_shape(shape, m[0])
        for b, v, label, res in zip(blocks, col, labels, results):
            if v is None or not (_is_tensor(v) or isinstance(v, (int, float, bool))):
                raise OpTypeError(f"{op}: output {i}: {label} returned {describe(v)} where "
                                  f"another branch returned a tensor")
            prev, builder.block = builder.block, b
            try:
                res.append(_result_ref(builder, v, dtype))
            finally:
                builder.block = prev
        stop = all(getattr(v, "stop_gradient", True) for v in col)
        arrays = {getattr(v, "kind", "tensor") == "array" for v in col}
        if len(arrays) > 1:
            raise OpTypeError(f"{op}: output {i} is a tensor array in one branch and a "
                              "tensor in another")
        consts.append(None)
        specs.append((shape, dtype, stop, arrays.pop(),
                      _number_items(col),
                      all(getattr(v, "python_scalar", False) or isinstance(v, (int, float))
                          and not _is_tensor(v) for v in col)))
    for b, res in zip(blocks, results):
        b.results = res
    return tree, consts, specs


def _result_ref(builder: Builder, v, dtype) -> str:
    if isinstance(v, Variable):
        builder._check_visible(v)
        if v.dtype != dtype:
            raise OpTypeError(f"internal: result {v.name} has dtype {v.dtype.name}, "
                              f"expected {dtype.name}")
        return v.name
    if not _is_tensor(v):
        v = constant(v, dtype=dtype)
    return builder.capture(v)


def _outputs(builder: Builder, tree, consts, specs):
    outs = [builder.block.new_var(builder.program.fresh_name(), () if arr else s, d,
                                  stop_gradient=st, kind="array" if arr else "tensor")
            for s, d, st, arr, _, _ in specs]
    for o, (s, _, _, arr, numbers, scalar) in zip(outs, specs):
        if arr:  # an array's element shape
            o._static_shape = s
        if "rows" in numbers:  # `x.tolist()` on every branch: its rows' lists
            o.row_lists = True
        elif "sums" in numbers:  # numbers a tensor `if` merged (`sum` of them is one)
            o.number_sums = True
        elif numbers:  # an array of Python numbers (a list the program grows): it stays one
            o.python_items = True
            o.mixed_numbers = "mixed" in numbers
            o.keeps_float = "float" in numbers
            o.float_if_filled = "filled" in numbers
        if scalar:  # every branch gives a Python number (or a value standing for one)
            o.python_scalar = True
    # (outputs are not forced stop_gradient under no_grad: see the note in _graph_while)
    it = iter(outs)
    leaves = [next(it) if c is None else c for c in consts]
    return outs, unflatten(tree, leaves)


def _check_pred(op: str, pred: Variable, what: str = "pred") -> None:
    if pred.dtype != bool_ or pred.size not in (1, -1) or pred.ndim > 1:
        raise OpTypeError(f"{op}: {what} must be a bool tensor with one element, got "
                          f"{pred.type_str()} ('{pred.name}')")


def cond(pred, true_fn=None, false_fn=None, name=None, return_names=None):
    """Run `true_fn()` if `pred` else `false_fn()`; in a static program both are traced into
    sub-blocks and the choice is made when the program runs.

    >>> import numpy as np, runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [], 'float32')
    ...     y = rt.static.nn.cond(x < 0.0, lambda: -x, lambda: x * 2.0)
    >>> rt.static.Executor().run(main, {'x': np.float32(-3)}, [y])[0].item()
    3.0
    """
    if not isinstance(pred, Variable):
        fn = true_fn if bool(pred) else false_fn
        return fn() if fn is not None else None
    _check_pred("cond", pred)
    b = current_builder()
    with grad_views.Branches(b.program) as views:
        (tb, t_out), (fb, f_out) = _trace_all(b, [true_fn, false_fn], views)
        flagged, flags = _branch_stop_flags(b, [tb, fb], [t_out, f_out])
        if flagged:  # (their flags, as more outputs)
            t_out, f_out = [t_out, flags[0]], [f_out, flags[1]]
        tree, consts, specs = _merge_branches("cond", b, ["true_fn", "false_fn"], [tb, fb],
                                              [t_out, f_out])
        outs, result = _outputs(b, tree, consts, specs)
        b.append("cond", [b.ref(pred)], [o.name for o in outs], {}, (tb.idx, fb.idx))
    return _with_stop_flags(result, flagged)


def _with_stop_flags(result, flagged: list):
    """A branch op's result, its leaves at `flagged` given their flags (the outputs after
    the result's, where `_branch_stop_flags` found any)."""
    if not flagged:
        return result
    result, flag_outs = result
    leaves = flatten(result)[0]
    for k, f in zip(flagged, flag_outs, strict=True):
        stop_flags.attach(leaves[k], f)
    return result


def _branch_stop_flags(b: Builder, blocks: list, outs: list) -> tuple:
    """(indices of the output leaves whose stop_gradient the branch taken decides, each
    branch's flags of them, built in its block: `stop_flags.carried`)."""
    flats = [flatten(o) for o in outs]
    if any(not _same_structure(f[1], flats[0][1]) for f in flats):
        return [], []  # (`_merge_branches` says what differs)
    columns = list(zip(*[f[0] for f in flats]))
    flagged = [k for k, col in enumerate(columns) if stop_flags.differ(col)]
    flags = []
    for blk, (leaves, _) in zip(blocks, flats):
        prev, b.block = b.block, blk
        try:
            flags.append([stop_flags.carried(leaves[k]) for k in flagged])
        finally:
            b.block = prev
    return flagged, flags


def switch_case(branch_index, branch_fns, default=None, name=None):
    """Run the branch whose key equals `branch_index` (else `default`, or the branch with the
    largest key when `default` is None). `branch_fns`: a list of callables, a list of
    `(int, callable)` pairs, or a dict."""
    if isinstance(branch_fns, dict):
        pairs = list(branch_fns.items())
    else:
        pairs = [p if isinstance(p, (list, tuple)) else (i, p) for i, p in enumerate(branch_fns)]
    pairs = sorted((int(k), fn) for k, fn in pairs)
    if len({k for k, _ in pairs}) != len(pairs):
        raise ValueError(f"switch_case: duplicate branch keys {[k for k, _ in pairs]}")
    if default is None:
        default = pairs[-1][1]
    if not isinstance(branch_index, Variable):
        return dict(pairs).get(int(branch_index), default)()
    if branch_index.dtype.kind not in "iu" or branch_index.size not in (1, -1):
        raise OpTypeError(f"switch_case: branch_index must be an integer tensor with one "
                          f"element, got {branch_index.type_str()}")
    b = current_builder()
    with grad_views.Branches(b.program) as views:
        traced = _trace_all(b, [fn for _, fn in pairs] + [default], views)
        labels = [f"branch {k}" for k, _ in pairs] + ["default"]
        blocks, results = [t[0] for t in traced], [t[1] for t in traced]
        flagged, flags = _branch_stop_flags(b, blocks, results)
        if flagged:  # (their flags, as more outputs)
            results = [[r, f] for r, f in zip(results, flags, strict=True)]
        tree, consts, specs = _merge_branches("switch_case", b, labels, blocks, results)
        outs, result = _outputs(b, tree, consts, specs)
        b.append("switch_case", [b.ref(branch_index)], [o.name for o in outs],
                 {"cases": [k for k, _ in pairs]}, tuple(blk.idx for blk in blocks))
    return _with_stop_flags(result, flagged)


# ---- while_loop ------------------------------------------------------------------------------

def while_loop(cond, body, loop_vars, is_test=False, name=None):
    """Repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`; returns the final
    loop vars as a list. With tensor loop vars and a tensor condition this is one `while` op.

    >>> import numpy as np, runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     n = rt.static.data('n', [], 'int64')
    ...     i, s = rt.static.nn.while_loop(lambda i, s: i < n, lambda i, s: [i + 1, s + i],
    ...                                    [0, 0])
    >>> rt.static.Executor().run(main, {'n': np.int64(4)}, [s])[0].item()
    6
    """
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callables")
    if not isinstance(loop_vars, (list, tuple)) or not loop_vars:
        raise ValueError("while_loop: loop_vars must be a non-empty list or tuple")
    loop_vars = list(loop_vars)
    b = registry.STATE.builder
    if b is not None:
        probe = _probe_condition(b, cond, loop_vars)
        if isinstance(probe, Variable):
            return _graph_while(b, cond, body, loop_vars)
    return _python_while(cond, body, loop_vars)


def _python_while(cond, body, loop_vars):
    n = 0
    while True:
        p = cond(*loop_vars)
        if isinstance(p, Variable):
            raise TypeError(
                f"while_loop: the condition became a static tensor after {n} Python "
                "iterations (the loop variables changed from Python values to tensors); make "
                "the loop variables tensors from the start so the loop becomes one while op")
        if not p:
            return loop_vars
        out = body(*loop_vars)
        loop_vars = list(out) if isinstance(out, (list, tuple)) else [out]
        n += 1


def _probe_condition(b: Builder, cond, loop_vars):
    """Trace `cond` once in a scratch block (tensor loop vars as block params) to see whether
    it is a graph value; the scratch block is discarded."""
    with b.scratch() as blk:
        leaves, tree = flatten(loop_vars)
        args = [_new_param(b, blk, v) if _is_tensor(v) else v for v in leaves]
        p = cond(*unflatten(tree, args))
    return p


def _new_param(b: Builder, blk, v, shape=None, stop=None):
    vs, vd = _meta(v)
    name = b.program.fresh_name()
    p = blk.new_var(name, vs if shape is None else shape, vd, kind=getattr(v, "kind", "tensor"),
                    stop_gradient=getattr(v, "stop_gradient", True) if stop is None else stop)
    blk.params.append(name)
    if getattr(v, "python_scalar", False):
        p.python_scalar = True
    if getattr(v, "number_sums", False):  # (numbers a tensor `if` merged, as below)
        p.number_sums = True
    if getattr(v, "row_lists", False):  # (`x.tolist()`'s rows: `array_split.row_lists`)
        p.row_lists = True
    if getattr(v, "python_items", False):  # (an array of Python numbers: `sum` of it too)
        p.python_items = True
        p.mixed_numbers = getattr(v, "mixed_numbers", False)
        p.keeps_float = getattr(v, "keeps_float", False)
        p.float_if_filled = getattr(v, "float_if_filled", False)
    return p


def _number_items(values) -> tuple:
    """Whether `values` (one output of each branch) are arrays of Python numbers: () for
    none, else ("numbers",) plus "mixed" where one may hold ints beside floats
    (`mixed_numbers`), "float" where each surely keeps a float item (`keeps_float`) and
    "filled" where each holds one when not empty (`float_if_filled`); ("sums",) where each is
    an array of numbers a tensor `if` merged (`number_sums`); ("rows",) where each is the
    rows of an `x.tolist()` (`row_lists`)."""
    if all(getattr(v, "row_lists", False) for v in values):
        return ("rows",)
    if not any(getattr(v, "python_items", False) for v in values):
        # arrays of numbers a tensor `if` merged, on every branch: still numbers
        return ("sums",) if all(getattr(v, "number_sums", False) for v in values) else ()
    marks = [("mixed", any(getattr(v, "mixed_numbers", False) for v in values)),
             ("float", all(getattr(v, "keeps_float", False) for v in values)),
             ("filled", all(getattr(v, "float_if_filled", False) for v in values))]
    return ("numbers",) + tuple(name for name, on in marks if on)


def _new_var_like(b: Builder, v: Variable) -> Variable:
    out = b.block.new_var(b.program.fresh_name(), v._static_shape, v.dtype, kind=v.kind,
                          stop_gradient=True)
    out._static_shape = v._static_shape
    return out


def _fix_unset(params, shapes):
    for p, s in zip(params, shapes):
        if s is None:  # Block.new_var made a tuple of None; keep "no element yet"
            p._static_shape = None


def _mark_varying_stops(params, inits, stops) -> None:
    """A loop parameter's stop_gradient at the first trip is its entry's, from the second on
    the body's: where they differ, a Python test of it is one decision for every trip
    (`Variable.stop_varies`; d2s refuses such a read in converted code)."""
    for p, v, st in zip(params, inits, stops):
        p.stop_varies = st != v.stop_gradient


def _graph_while(b: Builder, cond, body, loop_vars):
    leaves, tree = flatten(loop_vars)
    inits = [b.variable_of(v) for v in leaves]
    for v, init in zip(leaves, inits):
        if isinstance(v, (int, float)) and not _is_tensor(v):  # (a Python number carried,
            init.python_scalar = True  # the item of a Python list: it stays one, as eagerly)
    shapes = [v._static_shape for v in inits]
    stops = [v.stop_gradient for v in inits]
    # loop variables whose stop_gradient the trip count decides (`stop_flags`): their
    # flags at entry, carried as more loop variables
    entry_flags: dict = {}
    ever_carried: set = set()  # (a flag a trace found stays carried after stops change)
    for _ in range(2 + sum(len(s or ()) for s in shapes) + 2 * len(stops)):
        mark = len(b.program.blocks)
        flagged = sorted(entry_flags)
        with b.sub_block() as cblk:
            cps = [_new_param(b, cblk, v, s, st) for v, s, st in zip(inits, shapes, stops)]
            _fix_unset(cps, shapes)
            _mark_varying_stops(cps, inits, stops)
            for k in flagged:
                _new_param(b, cblk, entry_flags[k])
            pred = cond(*unflatten(tree, cps))
            if not isinstance(pred, Variable):
                raise TypeError(f"while_loop: cond returned {describe(pred)} for tensor loop "
                                "variables; it must return a bool tensor")
            _check_pred("while_loop", pred, "the value returned by cond")
            cblk.results = [b.ref(pred)]
        with b.sub_block() as bblk:
            bps = [_new_param(b, bblk, v, s, st) for v, s, st in zip(inits, shapes, stops)]
            _fix_unset(bps, shapes)
            _mark_varying_stops(bps, inits, stops)
            for k in flagged:
                stop_flags.attach(bps[k], _new_param(b, bblk, entry_flags[k]))
            walks = len(b.program.gradient_walks)
            out = body(*unflatten(tree, bps))
            out = list(out) if isinstance(out, (list, tuple)) else [out]
            outs, otree = flatten(out)
            if not _same_structure(otree, tree):
                raise ValueError(f"while_loop: body must return the loop variables in the "
                                 f"same structure: got {describe(out)} for loop_vars "
                                 f"{describe(loop_vars)}")
            new_shapes, new_stops, refs = [], [], []
            mixed = [tuple(getattr(v, f, False) for f in (
                "mixed_numbers", "keeps_float", "float_if_filled")) + (
                getattr(v, "float_when", None) is not None,) for v in outs]
            scalar = [init.python_scalar and (getattr(v, "python_scalar", False) or not
                                              _is_tensor(v)) for v, init in zip(outs, inits)]
            for i, (v, init) in enumerate(zip(outs, inits)):
                if _is_tensor(v):
                    vs, vd = _meta(v)
                    if vd != init.dtype or not _same_rank(vs, init._static_shape):
                        raise OpTypeError(
                            f"while_loop: loop variable {i} is {init.type_str()} before the "
                            f"loop but the body returns {describe(v)}; a loop variable must "
                            "keep its dtype and rank")
                    new_shapes.append(_merge_shape(shapes[i], vs))
                    new_stops.append(stops[i] and getattr(v, "stop_gradient", True))
                else:
                    new_shapes.append(shapes[i])
                    new_stops.append(stops[i])
                refs.append(_result_ref(b, v, init.dtype))
            refs += [_result_ref(b, stop_flags.carried(outs[k]), bool_) for k in flagged]
            bblk.results = refs
            # (the loop variables whose flag the body decides, and those whose flag is
            # their entry's or the body's, by whether the loop ran)
            carry, by_trips = stop_flags.loop_flags(inits, outs)
            if len(b.program.gradient_walks) > walks:  # (a gradient in the body: its
                carry |= set(by_trips)  # trips tell whether one of them has a path)
            ever_carried |= carry
            carry = ever_carried
        if new_shapes == shapes and new_stops == stops:
            if carry <= set(flagged):
                break
            for k in sorted(carry - set(flagged)):  # (in the block around the loop)
                entry_flags[k] = b.variable_of(stop_flags.carried(inits[k]))
        shapes, stops = new_shapes, new_stops
        b.program.drop_blocks(mark)
    outs = [b.block.new_var(b.program.fresh_name(), s, v.dtype, kind=v.kind, stop_gradient=st)
            for v, s, st in zip(inits, shapes, stops)]
    flag_outs = [_new_var_like(b, entry_flags[k]) for k in flagged]
    b.append("while", [v.name for v in inits] + [entry_flags[k].name for k in flagged],
             [o.name for o in outs + flag_outs], {}, (cblk.idx, bblk.idx))
    for k, f in zip(flagged, flag_outs):
        stop_flags.attach(outs[k], f)
    by_trips = [k for k in by_trips if k not in entry_flags]
    if by_trips:  # (the first test, on the values at entry: whether the loop ran)
        stop_flags.by_trips(cond(*unflatten(tree, inits)), [inits[k] for k in by_trips],
                            [outs[k] for k in by_trips])
    # (no stop_gradient on the outputs under no_grad: a branch may hand back a value from
    # outside the region unchanged, which keeps its gradient in eager code too)
    for o, w, init, m in zip(outs, scalar, inits, mixed):
        o.python_scalar = w
        # a number whose type the body's run decides (`float_when`, a graph value of the body):
        # not carried out of the loop; d2s refuses it (`graph_while`)
        o.float_type_lost = w and m[3]
        if getattr(init, "number_sums", False):  # (so does one of numbers an `if` merged)
            o.number_sums = True
        if getattr(init, "row_lists", False):  # (and `x.tolist()`'s rows)
            o.row_lists = True
        if getattr(init, "python_items", False):  # (an array of Python numbers stays one)
            o.python_items = True
            o.mixed_numbers = m[0]  # (a float the body appended: its 0 runs leave none)
            o.keeps_float = m[1] and getattr(init, "keeps_float", False)
            o.float_if_filled = m[2] and getattr(init, "float_if_filled", False)
    return unflatten(tree, outs)


def raise_where_zero(divisor, error: BaseException):
    """The program raises `error` where `divisor` is zero when it runs, before it divides
    (`zero_division`: `/`, `//`, `%` of values standing for Python numbers)."""
    from ..ops.logic import equal
    from .debug_ops import raise_error

    cond(equal(divisor, 0), lambda: raise_error(error), lambda: None)
    return divisor


zero_division.CHECK[0] = raise_where_zero
