"""`if`, conditional expressions, `while` and `for` as generated code calls them.

Each call looks at values at trace time. A Python (or eager) predicate runs the chosen branch
or the loop as plain Python. A graph predicate builds a `cond` or `while` op through
`rt.static.nn`. A Python loop whose test becomes a graph value part-way (a tensor `break`
flag, a counter compared with a tensor) runs its first iterations as Python and hands the
rest to one `while` op.

Branch and loop functions take the state (the names they may change) and return it: a
single value when there is one name, a tuple otherwise (see `d2s.converters.state`).
"""
from __future__ import annotations

import copy

from .. import report
from .exceptions import branch_frame, mark_raised
from . import unbound as unbound_mod
from .scalar_merge import cast_scalar, scalar_casts
from .variables import Undefined, UndefinedNameError, is_variable, user_origin, where


def _is_tensor(x) -> bool:
    """A graph value or an eager Tensor."""
    if is_variable(x):
        return True
    import runtime as rt
    return isinstance(x, rt.Tensor)


def _as_list(out, n: int) -> list:
    if n == 1:
        return [out]
    return list(out) if n else []


def _result(state: list):
    if len(state) == 1:
        return state[0]
    return tuple(state) if state else None


# ---- if --------------------------------------------------------------------------------------

def ifelse(pred, true_fn, false_fn, args: tuple, names: tuple):
    """`if pred: true_fn(*args) else: false_fn(*args)`; returns the new state."""
    report.record("if", pred)
    if not is_variable(pred):
        return (true_fn if pred else false_fn)(*args)
    import runtime as rt
    from runtime.program.builder import current_builder

    from .logical import to_bool
    src = user_origin()
    outs: list = []
    fills: dict = {}
    casts: dict = {}  # Python-number sides meeting a tensor (`scalar_merge`)
    unbound: dict = {}  # index -> whether the true branch leaves it unbound (`unbound`)
    raised: list = []  # per traced branch: whether it ends in a run-time `raise`
    stand_in: list = []  # the other branch's values, for a branch that raises
    raw: list = []  # each traced branch's values as it returned them

    def branch(fn):
        def run():
            with branch_frame() as frame:
                out = _as_list(fn(*[_copy_container(a) for a in args]), len(names))
            raised.append(frame.raised)
            raw.append(out)
            if frame.raised and stand_in:
                out = [_stand_in(v) for v in stand_in]
            elif outs and not (raised[0] and stand_in):
                _check_bound(names, outs[0], out, src, unbound)
                out = _promote_numbers(outs[0], out)
            outs.append(out)
            return tuple(cast_scalar(_fill(v, fills.get(i)), casts.get(i))
                         for i, v in enumerate(out))
        return run

    pred = to_bool(pred)
    builder = current_builder()
    program = builder.program
    mark = len(program.blocks)
    here, op_mark = builder.block, len(builder.block.ops)

    def retrace():
        del program.blocks[mark:]
        del here.ops[op_mark:]  # a cond op of the first attempt, if it was built
        outs.clear()
        raised.clear()
        raw.clear()
        return rt.static.nn.cond(pred, branch(true_fn), branch(false_fn))

    try:
        result = rt.static.nn.cond(pred, branch(true_fn), branch(false_fn))
        if len(raised) == 2 and raised[0] != raised[1]:
            stand_in.extend(raw[1] if raised[0] else raw[0])
            result = retrace()
    except Exception as e:
        if len(raised) == 2 and raised[0] != raised[1] and not stand_in:
            # One branch raises at run time: the other one's values are the `if`'s results.
            stand_in.extend(raw[1] if raised[0] else raw[0])
            result = retrace()
        elif not isinstance(e, (ValueError, TypeError)):
            raise
        else:
            # A return value set in one branch only (`_retval` is None in the other): trace
            # again with zeros of the returned type there. The return flag that goes with it
            # guarantees the zeros are never read.
            fills.update(_return_fills(names, outs))
            fills.update({i: outs[1][i] if first else outs[0][i]
                          for i, first in unbound.items() if len(outs) == 2})
            casts.update(scalar_casts(outs))
            if not fills and not casts:
                _explain_mismatch(names, outs, src)
                raise
            result = retrace()
    if raised and all(raised):
        mark_raised()  # both branches raise: so does the code around this `if`
    result = list(result) if result is not None else []
    _mark_scalars(result, raw)
    _read_checks(result, raw, unbound, pred, names, src)
    return _result(result)


def _read_checks(result, raw, unbound, pred, names, src) -> None:
    """Names bound in one branch only get a read check; checks of branch values go on."""
    if len(raw) != 2:
        return
    import runtime as rt
    for i, first in unbound.items():
        unbound_mod.mark(result[i], rt.logical_not(pred) if first else pred, names[i], src)
    for i, r in enumerate(result):
        for k, side in enumerate(raw):
            if i < len(side):
                unbound_mod.carry(side[i], r, pred, k == 0)


def _stand_in(v):
    """A value for a branch that raises at run time (never read): zeros like a tensor of the
    other branch, the same Python value otherwise."""
    if isinstance(v, (list, tuple)):
        return type(v)(_stand_in(x) for x in v)
    if isinstance(v, dict):
        return {k: _stand_in(x) for k, x in v.items()}
    if is_variable(v):
        import runtime as rt
        return rt.zeros([d if d >= 0 else 1 for d in v.shape], v.dtype)
    return v


def _explain_mismatch(names, outs, src) -> None:
    """Name the variable when the branches of a tensor `if` left it with different structure
    (e.g. lists of different lengths): `cond` itself only knows output positions."""
    if len(outs) < 2:
        return
    for name, a, b in zip(names, outs[0], outs[1]):
        if isinstance(a, (list, tuple, dict)) and (type(a) is not type(b) or len(a) != len(b)):
            what = (f"a {type(a).__name__} of length {len(a)} in the if branch and "
                    f"{type(b).__name__ if not isinstance(b, (list, tuple, dict)) else 'one'}"
                    f" of length {len(b) if isinstance(b, (list, tuple, dict)) else '-'} in "
                    "the else branch")
            raise ValueError(
                f"'{name}' is {what} of an if whose condition is a tensor ({where(src)}); both "
                "branches must leave it with the same length. Append the same number of items "
                "in both branches, or use a tensor (rt.concat) instead of a list.")


def _promote_numbers(first: list, second: list) -> list:
    """Python numbers that differ between the two branches (`1` and `2.5`, `2.0` and `3.0`):
    the second becomes a tensor of Python's precision (bool, int64, float64; the wider type
    when they differ), which `cond` then gives the first one too."""
    return [_promote_number(a, b) for a, b in zip(first, second)]


def _promote_number(a, b):
    if isinstance(a, (list, tuple)) and type(a) is type(b) and len(a) == len(b):
        return type(b)(_promote_number(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        return {k: _promote_number(a[k], b[k]) for k in b}
    kinds = {type(a), type(b)}
    if kinds <= {bool, int, float} and (type(a) is not type(b) or a != b):
        import runtime as rt
        dtype = "float64" if float in kinds else "bool" if kinds == {bool} else "int64"
        return _scalar(rt.full([], b, dtype))
    return b


def _is_return_value(name: str) -> bool:
    """The return converter's `_retval` (its reads are guarded by the return flag)."""
    return name.startswith("_retval")


def _return_fills(names, outs) -> dict:
    """Return values set in one branch only: the other branch holds the return converter's
    unbound placeholder (the function always returns, and the return flag guards every read
    of it), so zeros of the returned type may stand in for it."""
    fills = {}
    if len(outs) < 2:
        return fills
    for i, name in enumerate(names):
        values = [o[i] for o in outs]
        known = [v for v in values if not isinstance(v, Undefined) and _has_tensor(v)]
        placeholder = _is_return_value(name) or any(isinstance(v, Pending) for v in values)
        if placeholder and known and any(isinstance(v, Undefined) for v in values):
            fills[i] = known[0]
    return fills


class Pending(Undefined):
    """A name the converter proved bound before every read after a loop, though it is bound
    only on some paths inside it (`for ... else` with a `break`: the break path binds it, the
    `else` binds it otherwise). A tensor `if` may fill it with zeros: they are never read."""

    __slots__ = ()


def check_return_none(names, values, src, what: str = "if") -> None:
    """A return value that is None (a path falls through, or `return None`) on one side of a
    graph decision and a value on the other: the result's type would depend on data."""
    for name, vs in zip(names, values):
        if not _is_return_value(name):
            continue
        kinds = {"none" if v is None else "undefined" if isinstance(v, Undefined) else "value"
                 for v in vs}
        if "none" in kinds and "value" in kinds:
            from ..errors import ConversionError
            raise ConversionError(
                f"the function returns a value on some paths and None on others (a path that "
                f"ends without `return`, or `return None`), and which one is decided by a "
                f"tensor condition ({where(src)}): a converted function's result cannot be "
                f"None for some inputs only. Return a value on every path (e.g. `return x` "
                f"at the end), or decide with a Python value.", origin=src)


def _fill(value, like):
    """`value`, or zeros like `like` (see `_zeros_like`) where `value` is a placeholder."""
    if like is None or not (value is None or isinstance(value, Undefined)):
        return value
    return _zeros_like(like)


def _zeros_like(like):
    """Zeros like `like`: a tensor's dtype and shape (unknown dims as 1), a Python number's
    precision (a value standing for a Python number), the same structure for lists/tuples/dicts; other Python values as they are."""
    if isinstance(like, (list, tuple)):
        return type(like)(_zeros_like(x) for x in like)
    if isinstance(like, dict):
        return {k: _zeros_like(x) for k, x in like.items()}
    import runtime as rt
    if isinstance(like, (bool, int, float)) and not _is_tensor(like):
        dtype = "bool" if isinstance(like, bool) else "int64" if isinstance(
            like, int) else "float64"  # Python's precision, standing for a Python number
        return _scalar(rt.full([], 0, dtype))
    if not _is_tensor(like):
        return like
    zeros = rt.zeros([d if d >= 0 else 1 for d in like.shape], like.dtype)
    return _scalar(zeros) if getattr(like, "python_scalar", False) else zeros


def _has_tensor(x) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(t) for t in x)
    if isinstance(x, dict):
        return any(_has_tensor(t) for t in x.values())
    return _is_tensor(x) or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _copy_container(x):
    """Branches traced one after the other must each start from the same values: lists and
    dicts are copied, and so is a Variable object (`y[0] = v` rebinds the object it is
    called on to a new variable of the branch's block)."""
    return copy.copy(x) if isinstance(x, (list, dict)) or is_variable(x) else x


def _check_bound(names, first, second, src, unbound=None) -> None:
    check_return_none(names, zip(first, second), src)
    for i, (name, a, b) in enumerate(zip(names, first, second)):
        if _is_return_value(name) or isinstance(a, Pending) or isinstance(b, Pending):
            continue  # placeholders never read (`_return_fills`)
        if isinstance(a, Undefined) != isinstance(b, Undefined):
            if unbound is not None and _is_tensor(b if isinstance(a, Undefined) else a):
                unbound[i] = isinstance(a, Undefined)  # checked when read (`unbound`)
                continue
            branch = "if" if isinstance(b, Undefined) else "else"
            raise UndefinedNameError(
                f"'{name}' is bound in only one branch of an if whose condition is a tensor, "
                f"and is used after it ({where(src)}). Bind '{name}' before the if, or in "
                f"the {branch} branch too.")


def ifexp(pred, true_fn, false_fn):
    """`true_fn() if pred else false_fn()`."""
    report.record("if", pred)
    if not is_variable(pred):
        return true_fn() if pred else false_fn()
    import runtime as rt

    from .logical import to_bool
    return rt.static.nn.cond(to_bool(pred), true_fn, false_fn)


# ---- while -----------------------------------------------------------------------------------

def probe(fn, *args):
    """`fn(*args)` evaluated in a scratch block that is then discarded: a Python result is
    the real value; a graph result only says "this is a graph value" (its ops are gone, so a
    loop test that turns out to be a tensor leaves no dead ops behind)."""
    from runtime.ops.registry import STATE
    b = STATE.builder
    if b is None:
        return fn(*args)
    mark = len(b.program.blocks)
    with b.sub_block():
        value = fn(*args)
    del b.program.blocks[mark:]
    return value


def while_loop(test, body, args: tuple, names: tuple):
    """`while test(*state): state = body(*state)`; returns the final state."""
    n = len(names)
    state = list(args)
    iterations = 0
    while True:
        p = probe(test, *state)
        if is_variable(p):
            report.loop("while", iterations, graph=p)
            return _result(graph_while(test, body, state, names))
        if not p:
            report.loop("while", iterations)
            return _result(state)
        state = _as_list(body(*state), n)
        iterations += 1


# ---- for -------------------------------------------------------------------------------------

class TensorRange:
    """`range(start, stop, step)` where some bound is a graph value (see `range_`)."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def length(self):
        import runtime as rt
        if _is_int(self.start, 0) and _is_int(self.step, 1):  # range(n): no arithmetic
            steps = self.stop
        else:
            span = self.stop - self.start
            steps = (span + self.step - _sign(self.step)) // self.step
        return rt.maximum(rt.cast(steps, "int64"), rt.zeros([], "int64")) if is_variable(
            steps) else max(int(steps), 0)

    def item(self, i):
        # (kept to the ops needed: the loop runs this every iteration)
        scaled = i if _is_int(self.step, 1) else i * self.step
        return scaled if _is_int(self.start, 0) else self.start + scaled


def _is_int(x, value: int) -> bool:
    return x.__class__ is int and x == value


class TensorEnumerate:
    """`enumerate(x)` over the rows of a graph value whose first dim is unknown."""

    def __init__(self, tensor, start):
        self.tensor, self.start = tensor, start

    def item(self, i):
        return (i + self.start, self.tensor[i])


def _sign(step):
    if is_variable(step):
        import runtime as rt
        return rt.sign(step)
    return 1 if step > 0 else -1


def for_loop(iterable, body, args: tuple, names: tuple, extra_test=None):
    """`for item in iterable: state = body(item, *state)`, stopping early once
    `extra_test(*state)` is false; returns the final state."""
    n = len(names)
    state = list(args)
    over = iterable
    if isinstance(iterable, TensorRange):
        report.loop("for", 0, graph=iterable.stop)
        return _result(_graph_for(iterable.length(), iterable.item, body, state, names,
                                  extra_test))
    if isinstance(iterable, TensorEnumerate):
        import runtime as rt
        report.loop("for", 0, graph=iterable.tensor)
        return _result(_graph_for(rt.shape(iterable.tensor)[0], iterable.item, body, state,
                                  names, extra_test))
    if is_variable(iterable) and iterable.is_array:
        import runtime as rt
        report.loop("for", 0, graph=iterable)
        return _result(_graph_for(rt.static.array_length(iterable),
                                  lambda i: rt.static.array_read(iterable, i), body, state,
                                  names, extra_test))
    if is_variable(iterable):
        dim = iterable.shape[0] if iterable.ndim else None
        if dim is None:
            raise TypeError("iteration over a 0-d tensor")
        if dim < 0:
            import runtime as rt
            report.loop("for", 0, graph=iterable)
            return _result(_graph_for(rt.shape(iterable)[0], lambda i: iterable[i], body,
                                      state, names, extra_test))
        iterable = [iterable[i] for i in range(dim)]
    iterations = 0
    it = iter(iterable)
    for item in it:
        if extra_test is not None:
            t = probe(extra_test, *state)
            if is_variable(t):  # a tensor break/return: the rest becomes one while op
                report.loop("for", iterations, graph=t)
                rest = [item] + list(it)
                seq = _indexable(rest)
                if seq is None:
                    return _result(_guarded(rest, body, state, names, extra_test))
                from runtime.program.builder import current_builder
                blocks = current_builder().program.blocks
                mark = len(blocks)
                try:
                    return _result(_graph_for(len(rest), seq, body, state, names, extra_test))
                except TypeError:
                    # The body needs the item as a Python value (`xs[i]` on a Python list):
                    # unroll the rest with guards instead.
                    del blocks[mark:]
                    return _result(_guarded(rest, body, state, names, extra_test))
            if not t:
                break
        state = _as_list(body(item, *state), n)
        iterations += 1
    report.loop("for", iterations, over=over)
    return _result(state)


def _indexable(items: list):
    """`i -> items[i]` for a graph index `i`: the items stacked into one tensor (None when
    they are not all numbers or all tensors of one shape and dtype, e.g. Layers)."""
    import runtime as rt
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
        # Python numbers: each item stands for one (Python's precision), as in eager mode
        dtype = "float64" if any(isinstance(x, float) for x in items) else "int64"
        table = rt.tensor.constant(items, dtype)
        return lambda i: _scalar(table[i])
    elif all(is_variable(x) or _is_tensor(x) for x in items) and len(
            {(tuple(x.shape), str(x.dtype)) for x in items}) == 1:
        table = rt.stack(list(items))
    else:
        return None
    return lambda i: table[i]


def _guarded(items: list, body, state: list, names: tuple, extra_test) -> list:
    """The rest of a Python loop over items that cannot be indexed by a tensor (Layers,
    strings, mixed shapes), after a tensor break/return flag: unrolled, each iteration a
    `cond` on the loop's extra test."""
    n = len(names)
    for item in items:
        def step(*st, item=item):
            return body(item, *st)

        def skip(*st):
            return _result(list(st))

        state = _as_list(ifelse(extra_test(*state), step, skip, tuple(state), names), n)
    return state


def _graph_for(length, item_of, body, state, names, extra_test):
    import runtime as rt
    n = len(names)

    def test(i, *st):
        more = i < length
        if not is_variable(more):
            more = rt.tensor.constant(bool(more)) if not is_variable(i) else more
        if extra_test is None:
            return more
        from .logical import and_
        return and_(more, lambda: extra_test(*st))

    def step(i, *st):
        return (i + 1, *_as_list(body(item_of(i), *st), n))

    # the index stands for a Python int (range and enumerate give Python ints in eager mode)
    out = graph_while(test, step, [_scalar(rt.zeros([], "int64"))] + list(state),
                      ("<index>",) + names)
    return out[1:]


# ---- the graph while loop --------------------------------------------------------------------

def graph_while(test, body, state: list, names: tuple) -> list:
    """One `while` op for state whose test is a graph value. State that is not a graph value
    and not a Python number (objects, None, functions) must stay the same object; Python
    lists become tensor arrays; names first bound inside the loop get a zero initial value of
    the shape and dtype the body gives them (found by tracing the body once, discarded)."""
    import runtime as rt
    src = user_origin()
    n = len(names)
    unbound_mod.read(state)  # a name bound on some paths only, carried into the loop
    fixed = _fixed_lists(body, state, names)
    report.arrays(names, [None if i in fixed else v for i, v in enumerate(state)])
    state = [_to_array(v) if isinstance(v, list) and i not in fixed else (
        dict(v) if isinstance(v, dict) else v) for i, v in enumerate(state)]
    if any(isinstance(v, (Undefined, int, float)) or _empty_array(v) or (
            v is None and _is_return_value(name)) for v, name in zip(state, names)):
        state = _initial_values(body, state, names, src)
    carried = [i for i, v in enumerate(state) if _carried(v)]

    def full(values):
        merged = list(state)
        for i, v in zip(carried, values):
            merged[i] = v
        return merged

    def graph_test(*values):
        return test(*full(values))

    widen: dict = {}

    def graph_body(*values):
        out = _as_list(body(*full(values)), n)
        _check_widening(carried, values, out, widen)
        for i, (before, after) in enumerate(zip(state, out)):
            if i not in carried and after is not before and not (
                    isinstance(after, Undefined) and isinstance(before, Undefined)):
                raise TypeError(
                    f"'{names[i]}' is a Python {type(before).__name__} changed inside a loop "
                    f"whose condition is a tensor ({where(src)}); only tensors, numbers and "
                    f"lists can change in such a loop")
        return [out[i] for i in carried]

    from runtime.program.builder import current_builder
    blocks = current_builder().program.blocks
    for _ in range(len(carried) + 1):
        mark = len(blocks)
        try:
            with branch_frame():  # a `raise` in the body does not end the code around it
                result = rt.static.nn.while_loop(graph_test, graph_body,
                                                 [state[i] for i in carried])
            return full(result)
        except _Widen:
            # The body widens a carried value's dtype (int32 -> int64, int -> float), as
            # Python's first iteration would: widen it before the loop, trace again.
            del blocks[mark:]
            for i, dtype in widen.items():
                v = state[i]
                state[i] = rt.cast(v, dtype) if is_variable(v) or _is_tensor(v) else rt.full(
                    [], v, dtype)
            widen.clear()
    raise AssertionError("d2s bug: loop state kept widening")


class _Widen(Exception):
    """A loop body returned a carried value in a wider dtype than it received."""


def _check_widening(carried, values, out, widen: dict) -> None:
    from runtime.dtypes import promote
    for k, i in enumerate(carried):
        before, after = values[k], out[i]
        if not (is_variable(before) and (is_variable(after) or _is_tensor(after))):
            continue
        if after.dtype != before.dtype and promote(before.dtype, after.dtype) == after.dtype:
            widen[i] = after.dtype
    if widen:
        raise _Widen


def _fixed_lists(body, state: list, names: tuple) -> set:
    """Indices of Python lists in the state that the body only updates in place (same length,
    tensors and numbers): they are carried element by element instead of becoming tensor
    arrays, so `xs[0] = xs[0] + xs[1]` keeps working. Found by tracing the body once in a
    scratch block."""
    lists = [i for i, v in enumerate(state) if isinstance(v, list) and v and all(
        _carried(x) for x in v)]
    if not lists:
        return set()
    from runtime.program.builder import current_builder
    b = current_builder()
    mark = len(b.program.blocks)
    try:
        with b.sub_block():
            out = _as_list(body(*[_copy_container(v) for v in state]), len(names))
    except Exception:  # noqa: BLE001  (then they are arrays, as before; the real trace reports)
        return set()
    finally:
        del b.program.blocks[mark:]
    return {i for i in lists if isinstance(out[i], list) and len(out[i]) == len(state[i])
            and all(_carried(x) for x in out[i])}


def _carried(v) -> bool:
    """Loop state the while op carries: tensors, numbers, and lists/tuples/dicts of those."""
    if isinstance(v, dict):
        return bool(v) and all(_carried(x) for x in v.values())
    if isinstance(v, (tuple, list)) and not isinstance(v, _EmptyArray):
        return bool(v) and all(_carried(x) for x in v)
    return is_variable(v) or _is_tensor(v) or isinstance(v, (int, float, bool))


def _to_array(items: list):
    import runtime as rt
    if not items:
        return _EmptyArray()
    return rt.static.create_array(items[0].dtype if hasattr(items[0], "dtype") else "float32",
                                  initialized_list=list(items))


class _EmptyArray(list):
    """An empty Python list used as loop state: its element type is known only after the
    body appended to it once."""


def _empty_array(v) -> bool:
    return isinstance(v, _EmptyArray)


def _initial_values(body, state: list, names: tuple, src) -> list:
    """Trace the body once in a scratch block to learn the types that names first bound in
    the loop (or Python numbers that the body turns into tensors) take."""
    import runtime as rt
    from runtime.program.builder import current_builder
    b = current_builder()
    mark = len(b.program.blocks)
    with b.sub_block():
        probe = _as_list(body(*[_copy_container(v) for v in state]), len(names))
    del b.program.blocks[mark:]
    out = list(state)
    for i, (v, p) in enumerate(zip(state, probe)):
        if isinstance(v, _EmptyArray):
            elem = p[0] if isinstance(p, list) and p else None
            out[i] = rt.static.create_array(elem.dtype) if hasattr(elem, "dtype") else []
        elif isinstance(v, (int, float)) and isinstance(p, (int, float)):
            out[i] = _python_number(v, p)
        elif isinstance(v, Undefined) or (v is None and _is_return_value(names[i])) or (
                isinstance(v, (int, float)) and (is_variable(p) or _is_tensor(p))):
            if isinstance(p, Undefined):
                continue
            if isinstance(v, Undefined) and isinstance(p, (list, tuple, dict)) and _has_tensor(p):
                out[i] = _zeros_like(p)  # a structure returned from inside the loop
                continue
            if not (is_variable(p) or _is_tensor(p)):
                out[i] = p if isinstance(v, Undefined) else v
                continue
            if v is None:
                check_return_none([names[i]], [[None, p]], src)
            if any(d < 0 for d in p.shape) and not _is_return_value(names[i]):
                raise UndefinedNameError(
                    f"'{names[i]}' is first bound inside a loop whose condition is a tensor "
                    f"and has a shape unknown before the loop ({p.shape}) ({where(src)}); "
                    f"bind '{names[i]}' before the loop")
            fill = v if isinstance(v, (int, float)) else 0
            out[i] = rt.full([d if d >= 0 else 1 for d in p.shape], fill, p.dtype)
            if getattr(p, "python_scalar", False):
                _scalar(out[i])  # the body keeps it a Python number (a tensor `if` in it)
    return out


def _python_number(v, p):
    """A Python number carried through a graph loop: a tensor of Python's precision (bool,
    int64, float64), of the wider type when the body changes it (`1` -> `1 / 2`). Anything
    else stays as it is."""
    if not (isinstance(v, (int, float)) and isinstance(p, (int, float))):
        return v
    import runtime as rt
    if isinstance(v, bool) and isinstance(p, bool):
        return _scalar(rt.full([], v, "bool"))
    dtype = "float64" if isinstance(v, float) or isinstance(p, float) else "int64"
    return _scalar(rt.full([], v, dtype))


def _scalar(v):
    """Mark a graph value as standing for a Python number (see `Variable.python_scalar`)."""
    if is_variable(v):
        v.python_scalar = True
    return v


def _items(v, n: int) -> list:
    """The items of a structure, or n placeholders where a branch left it unbound."""
    return list(v) if isinstance(v, (list, tuple)) and len(v) == n else [v] * n


def _mark_scalars(result, raw: list) -> None:
    """Outputs of a tensor `if` whose branches both gave Python numbers (or values standing
    for them) stand for a Python number too."""
    if len(raw) != 2 or not isinstance(result, (list, tuple)):
        return
    for r, a, b in zip(result, raw[0], raw[1]):
        if isinstance(r, (list, tuple)):  # structures (a returned tuple): item by item
            _mark_scalars(r, [_items(a, len(r)), _items(b, len(r))])
            continue
        if is_variable(r) and all((is_variable(v) and v.python_scalar) or isinstance(
                v, Undefined) or (isinstance(v, (int, float)) and not _is_tensor(v))
                for v in (a, b)) and not all(isinstance(v, Undefined) for v in (a, b)):
            r.python_scalar = True
