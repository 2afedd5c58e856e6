"""`while` and `for` as generated code calls them.

A Python (or eager) test runs the loop as plain Python; the first test that is a graph value
turns the rest of the loop into one `while` op through `rt.static.nn` (a Python loop whose
test becomes a graph value part-way runs its first iterations as Python). Lists in the state
become tensor arrays (`graph_while`), objects the body changes through other names are extra
loop variables (`mutation_loop.py`).
"""
from __future__ import annotations

import copy

from .. import report
from . import loop_errors, mutation
from . import unbound as unbound_mod
from .control_flow import _raise_when_run, _raised_by_user_code  # noqa: I001
from .branch_arrays import _array_at, _array_paths
from .control_flow import (  # the helpers loops share with `if`
    _as_list, _copy_container, _is_return_value, _is_tensor, _refuse_aliased, _result,
    _scalar, ifelse, probe)
from .exceptions import branch_frame
from .loop_initial import (
    _EmptyArray, _empty_array, _settled_initial_values, _to_array, python_items)
from .loop_keys import _check_keys, _removed, _skeleton
from .lists import StructArray
from .traced_keys import check_unique
from .variables import Undefined, is_variable, user_origin, where


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
    """`enumerate(x)` over the rows of a graph value whose first dim is unknown (or a tensor
    array, or a `TensorZip`)."""

    def __init__(self, tensor, start):
        self.tensor, self.start = tensor, start
        self.zipped = isinstance(tensor, TensorZip)

    def length(self):
        if self.zipped:
            return self.tensor.length()
        return _graph_length(self.tensor)

    def item(self, i):
        if self.zipped:
            return (i + self.start, self.tensor.item(i))
        t = self.tensor
        return (i + self.start, _row(t, i))


class TensorZip:
    """`zip(...)` where some part is a graph value of unknown length (a tensor whose first
    dim is unknown, or a tensor array): its length is the shortest part's, as in Python; a
    Python list part must be indexable by a tensor (numbers, or tensors of one shape)."""

    def __init__(self, parts):
        self.parts = parts
        self.rows = []
        for k, p in enumerate(parts):
            if is_variable(p) or isinstance(p, StructArray):
                self.rows.append(lambda i, p=p: _row(p, i))
                continue
            seq = _indexable(list(p)) if isinstance(p, (list, tuple)) and p else None
            if seq is None:
                raise TypeError(
                    f"zip() of a tensor whose length is only known when the program runs with "
                    f"a {type(p).__name__} (argument {k + 1}) whose items cannot be indexed by "
                    "a tensor: make every part a tensor, a tensor array, or a list of numbers "
                    "or of tensors of one shape")
            self.rows.append(seq)

    def length(self):
        import runtime as rt
        out = None
        for p in self.parts:
            n = _graph_length(p) if is_variable(p) or isinstance(p, StructArray) else len(p)
            if out is None:
                out = n
            elif is_variable(out) or is_variable(n):
                out = rt.minimum(*[v if is_variable(v) else rt.full([], v, "int64")
                                   for v in (out, n)])
            else:
                out = min(out, n)
        return out

    def item(self, i):
        return tuple(row(i) for row in self.rows)


def _graph_length(t):
    import runtime as rt
    if isinstance(t, StructArray):
        return t.length()
    return rt.static.array_length(t) if t.is_array else rt.shape(t)[0]


def _row(t, i):
    import runtime as rt
    if isinstance(t, StructArray):
        return t[i]
    return rt.static.array_read(t, i) if t.is_array else t[i]


def _first_variable(seq):
    while isinstance(seq, TensorEnumerate):
        seq = seq.tensor
    if isinstance(seq, TensorZip):
        seq = next(p for p in seq.parts if is_variable(p) or isinstance(p, StructArray))
    return seq.length() if isinstance(seq, StructArray) else seq


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
    if isinstance(iterable, (TensorEnumerate, TensorZip)):
        report.loop("for", 0, graph=_first_variable(iterable))
        return _result(_graph_for(iterable.length(), iterable.item, body, state, names,
                                  extra_test))
    if isinstance(iterable, StructArray):  # a list of tuples / dicts as tensor arrays
        report.loop("for", 0, graph=iterable.length())
        return _result(_graph_for(iterable.length(), iterable.__getitem__, body, state, names,
                                  extra_test))
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
    check_unique(iterable, "a for loop over the items")
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

    def step(i, *st):  # (the index alone, where the loop carries no other state)
        return _result([i + 1, *_as_list(body(item_of(i), *st), n)])

    # the index stands for a Python int (range and enumerate give Python ints in eager mode)
    out = graph_while(test, step, [_scalar(rt.zeros([], "int64"))] + list(state),
                      ("<index>",) + names)
    return out[1:]


# ---- the graph while loop --------------------------------------------------------------------

def graph_while(test, body, state: list, names: tuple) -> list:
    """One `while` op for state whose test is a graph value (see `_graph_while`). A body that
    raises Python's own IndexError / KeyError whenever it runs (a Python list popped empty:
    its state is the same on every run) is `if test: body`, whose branch raises that error
    when the program runs it, as eager code does on the first iteration."""
    logs: list = []
    try:
        return _graph_while(test, body, list(state), names, logs)
    except LookupError as e:
        if not _raised_by_user_code(e):
            raise
        for log in logs:
            log.restore()
        return _as_list(ifelse(test(*state), body, _unchanged, tuple(state), names),
                        len(names))


def _into_dict(original: dict, new: dict) -> dict:
    """The loop's result for a dict its body changed in place, written into the dict the
    name held before the loop, which the name holds again: the caller's object (an argument,
    an attribute's dict) sees the change, as in eager code (`side_effects.py` then makes a
    Python number there program state)."""
    original.update(new)
    return original


def _unchanged(*state):
    return _result(list(state))


def _graph_while(test, body, state: list, names: tuple, logs: list) -> list:
    """One `while` op for state whose test is a graph value. State that is not a graph value
    and not a Python number (objects, None, functions) must stay the same object; Python
    lists become tensor arrays; names first bound inside the loop get a zero initial value of
    the shape and dtype the body gives them (found by tracing the body once, discarded)."""
    import runtime as rt
    src = user_origin()
    n = len(names)
    checks, taken = {}, None
    log = mutation.begin((test, body), state, names, src)  # state found by object
    logs.append(log)
    _refuse_test_effects(test, state, log, src)  # (so the test can run again: `taken`)
    from .logical import to_bool
    # names first bound inside the loop: after it, bound only where the body ran
    first_bound = [i for i in range(n) if isinstance(state[i], Undefined)]
    if unbound_mod.checked(state) or first_bound:
        taken = to_bool(test(*state))  # the test on entry: whether the body runs at all
    if unbound_mod.checked(state):  # a name bound on some paths only, carried into the loop:
        checks = {i: v.on_read for i, v in enumerate(state) if unbound_mod.checked([v])}
        unbound_mod.read_if(state, taken)  # read where the body runs
    fixed = _fixed_lists(body, state, names)
    log.scratch_end()
    report.arrays(names, [None if i in fixed else v for i, v in enumerate(state)])
    for i in range(n):  # (no enumerate: its tuple would be one more reference)
        if isinstance(state[i], list) and i not in fixed:
            _refuse_aliased(state[i], names[i], "is appended to in a loop whose condition "
                            "is a tensor, so it becomes a tensor array", src, log)
    dicts = {i: v for i, v in enumerate(state) if isinstance(v, dict)}
    dict_keys = {i: _skeleton(v) for i, v in dicts.items()}  # (one not carried: checked too)
    state = [_to_array(v, names[i], src) if isinstance(v, list) and i not in fixed else (
        copy.copy(v) if isinstance(v, dict) else v) for i, v in enumerate(state)]
    numbers = {}  # index -> a Python number the body may turn into a tensor
    if any(isinstance(v, (Undefined, int, float)) or _empty_array(v) or (
            v is None and _is_return_value(name)) for v, name in zip(state, names)):
        numbers = {i: v for i, v in enumerate(state) if isinstance(v, (int, float))}
        before = state
        state = _settled_initial_values(body, state, names, src, log)
        # a number filling a tensor of another shape: right only where the body runs
        numbers = {i: v for i, v in numbers.items() if is_variable(state[i]) and
                   state[i].ndim and not getattr(state[i], "python_scalar", False)}
        if numbers and taken is None:
            taken = to_bool(test(*before))
    carried = [i for i, v in enumerate(state) if _carried(v)]
    loop = mutation.Loop(log, body, state, carried)  # changed objects: extra loop vars
    if loop.numbers and taken is None:  # (an attribute's number filling a tensor)
        taken = to_bool(test(*state))

    def full(values):
        merged = list(state)
        for i, v in zip(carried, values):
            merged[i] = v
        return loop.enter(merged, values[len(carried):])

    def graph_test(*values):
        return loop.restore(test(*full(values)))

    widen: dict = {}
    widened: dict = {}  # index -> a tensor's dtype before the body widened it
    changed_in_place: set = set()
    arrayify: dict = {}  # (state index, path) -> dtype
    extra_arrays: dict = {}  # (changed-object index, path) -> dtype

    def graph_body(*values):
        keys = [_skeleton(v) for v in values]  # (the body may change the dicts in place)
        given = full(values)
        try:
            out = _as_list(body(*given), n)
        except LookupError as e:
            if not _raised_by_user_code(e):
                raise
            # Python's own IndexError / KeyError in the body (a list popped empty): eager
            # code raises it when the body runs, so the program does; the state is unchanged
            _raise_when_run(e)
            out = list(given)
        for k, i in enumerate(carried):
            _check_keys(names[i], keys[k], out[i], src)
        for i in dicts.keys() - set(carried):  # (a dict of no tensors: a key set in the body)
            _check_keys(names[i], dict_keys[i], out[i], src)
        changed_in_place.clear()  # dicts the body changed, not rebound: the same object after
        changed_in_place.update(i for i in dicts if i in carried and out[i] is given[i])
        _check_widening(carried, values, out, widen)
        for k, i in enumerate(carried):  # a list inside the state that the body makes (or
            for path, dtype in _array_paths(values[k], out[i], ()):  # grows into) an array
                arrayify[(i, path)] = dtype
        if arrayify:
            raise _Widen
        for i, (before, after) in enumerate(zip(state, out)):
            if i not in carried and after is not before and not (
                    isinstance(after, Undefined) and isinstance(before, Undefined)):
                raise TypeError(
                    f"'{names[i]}' is a Python {type(before).__name__} changed inside a loop "
                    f"whose condition is a tensor ({where(src)}{_assigned(names[i], src)}); "
                    "only tensors, numbers and lists can change in such a loop")
        res = loop.leave([out[i] for i in carried], [state[i] for i in carried])
        nc = len(carried)
        for j, slot in enumerate(loop.slots):
            if slot.kind == "dict" and res[nc + j] is mutation.MISSING:
                _removed(slot.path[:-len(f"[{slot.key!r}]")], slot.key, src)
            _check_keys(slot.path, keys[nc + j], res[nc + j], src)
        for j, slot in enumerate(loop.slots):  # objects changed through other names
            for path, dtype in _array_paths(values[nc + j], res[nc + j], ()):
                if slot.kind == "list" and not path:
                    raise mutation.StateChangeError(
                        f"the list {slot.path} becomes a tensor array inside a loop whose "
                        f"condition is a tensor ({where(src)}) while the loop changes it "
                        "through another name too; append to it by one name only.", src)
                extra_arrays[(j, path)] = dtype
        if extra_arrays:
            raise _Widen
        return res

    from runtime.program.builder import current_builder
    blocks = current_builder().program.blocks
    for _ in range(len(carried) + 1):
        mark = len(blocks)
        try:
            with branch_frame():  # a `raise` in the body does not end the code around it
                result = rt.static.nn.while_loop(graph_test, graph_body,
                                                 loop.initial_state(carried) + loop.initial)
            out = list(state)
            for i, v in zip(carried, result):
                out[i] = v
                if getattr(state[i], "python_items", False):
                    python_items(v)
            unbound_mod.after_loop(checks, out, taken)
            unbound_mod.bound_by_loop(first_bound, names, out, taken, src)
            unbound_mod.tensor_by_loop(numbers, names, out, taken, src)
            unbound_mod.dtype_by_loop(widened, names, out, taken, src)
            unbound_mod.tensor_by_loop({j: v for j, v in loop.numbers.items() if loop.initial[
                j].ndim}, [s.path for s in loop.slots], list(result[len(carried):]), taken, src)
            out = loop.finish(out, result[len(carried):])
            for i in changed_in_place:  # (`stats["n"] += 1` on a dict passed in)
                out[i] = _into_dict(dicts[i], out[i])
            return out
        except Exception as e:
            log.restore()  # the user's objects must not keep values of discarded blocks
            if not isinstance(e, _Widen):
                told = loop_errors.named(
                    e, loop.initial_state(carried) + loop.initial,
                    [names[i] for i in carried] + [s.path for s in loop.slots], src)
                if told is not None:
                    raise told from None
                raise
            # The body widens a carried value's dtype (int32 -> int64, int -> float), as
            # Python's first iteration would: widen it before the loop, trace again. The
            # failed trace's changes to the user's objects (and Variables it retargeted) were
            # undone above: they name values of the discarded blocks.
            del blocks[mark:]
            if taken is None and any(_is_tensor(state[i]) or is_variable(state[i]) and not
                                     state[i].python_scalar for i in widen):
                taken = to_bool(test(*state))  # (the test on entry, with the old dtypes)
            for i, dtype in widen.items():
                v = state[i]
                if (is_variable(v) and not v.python_scalar or _is_tensor(v)) and \
                        i not in widened:
                    widened[i] = v.dtype  # eager's dtype where the body never runs
                state[i] = rt.cast(v, dtype) if is_variable(v) or _is_tensor(v) else rt.full(
                    [], v, dtype)
            for (i, path), dtype in arrayify.items():
                state[i] = _array_at(state[i], path, dtype)
            for (j, path), dtype in extra_arrays.items():
                loop.initial[j] = _array_at(loop.initial[j], path, dtype)
            widen.clear()
            arrayify.clear()
            extra_arrays.clear()
    raise AssertionError("d2s bug: loop state kept widening")


def _refuse_test_effects(test, state: list, log, src) -> None:
    """The loop's condition traced once in a scratch block: eager code runs its Python
    effects (`self.log.append(...)`, a counter on an object) each time it tests it, which the
    `while` op's condition block cannot do (its only output is the truth value)."""
    from runtime.program.builder import current_builder
    with current_builder().scratch():
        test(*state)
    new = log.changed()
    log.restore()
    if new:
        raise mutation.StateChangeError(
            f"{new[0].path} is changed by the condition of a loop whose condition is a tensor "
            f"({where(src)}): eager code changes it each time it tests the condition, and the "
            "program's loop condition can only compute its truth value. Change it in the loop "
            "body (or before the loop) instead.", src)


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
    try:
        with b.scratch():
            out = _as_list(body(*[_copy_container(v) for v in state]), len(names))
    except Exception:  # noqa: BLE001  (then they are arrays, as before; the real trace reports)
        return set()
    return {i for i in lists if isinstance(out[i], list) and len(out[i]) == len(state[i])
            and all(_carried(x) for x in out[i])}


def _carried(v, inner: bool = False) -> bool:
    """Loop state the while op carries: tensors, numbers, and lists/tuples/dicts of those
    (inside one, also an empty list, tuple or dict: a returned `(h, [])`)."""
    if isinstance(v, dict):
        return bool(v) and all(_carried(x, True) for x in v.values()) or inner and not v
    if isinstance(v, (tuple, list)) and not isinstance(v, _EmptyArray):
        return bool(v) and all(_carried(x, True) for x in v) or inner and not v
    return is_variable(v) or _is_tensor(v) or isinstance(v, (int, float, bool))


def _assigned(name: str, src) -> str:
    """`; assigned at line N: <code>` for the first assignment to `name` in the loop's body
    (the lines after the loop's header that are indented deeper), or ''."""
    import linecache
    import re
    if src is None:
        return ""
    header = linecache.getline(src.filename, src.lineno)
    indent = len(header) - len(header.lstrip())
    pattern = re.compile(rf"^\s*{re.escape(name)}\s*(?:[-+*/%@&|^]|//|\*\*|>>|<<)?=(?!=)")
    n = src.lineno + 1
    while True:
        line = linecache.getline(src.filename, n)
        if not line:
            return ""
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            return ""  # past the loop's body
        if pattern.match(line):
            return f"; assigned at line {n}: {line.strip()}"
        n += 1
