"""`while` and `for` as generated code calls them.

A Python (or eager) test runs the loop as plain Python; the first test that is a graph value
turns the rest of the loop into one `while` op through `rt.static.nn` (a Python loop whose
test becomes a graph value part-way runs its first iterations as Python). Lists in the state
become tensor arrays (`graph_while`), objects the body changes through other names are extra
loop variables (`mutation_loop.py`).
"""
from __future__ import annotations

import runtime as rt
from runtime.core import is_tensor
from runtime.program.builder import current_builder

from .. import report
from . import key_ranks
from .block_values import (  # what loops share with `if`
    as_list,
    mark_python_number,
    probe,
    result_of,
)
from .control_flow import ifelse
from .graph_while import graph_while
from .key_flags import check_order, flagged_items, flags_of, refuse_iteration
from .lists import StructArray
from .logical import and_
from .traced_keys import check_unique
from .variables import is_variable


def while_loop(test, body, args: tuple, names: tuple, unread=()):
    """`while test(*state): state = body(*state)`; returns the final state. `unread`: the
    names whose value on entry the loop never reads (its body binds them first)."""
    n = len(names)
    state = list(args)
    iterations = 0
    while True:
        p = probe(test, *state)
        if is_variable(p):
            report.loop("while", iterations, graph=p)
            return result_of(graph_while(test, body, state, names, unread))
        if not p:
            report.loop("while", iterations)
            return result_of(state)
        state = as_list(body(*state), n)
        iterations += 1


# ---- for -------------------------------------------------------------------------------------

class TensorRange:
    """`range(start, stop, step)` where some bound is a graph value (see `range_`)."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def length(self):
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
        counter = scaled if _is_int(self.start, 0) else self.start + scaled
        counter.python_number_note = COUNTER_NOTE
        return counter


# What a Python use of a graph loop's counter says (`Variable.python_number_note`)
COUNTER_NOTE = (
    "It is the counter of a `for` over `range()` of a tensor: that loop is a graph loop, so "
    "the counter is a value known only when the program runs, and this use needs a Python "
    "number. Give the loop a Python int bound (a Python number, or a size known when tracing "
    "such as `range(x.shape[0])`) so that the counter stays an int, or give the call a size "
    "that does not change between trips (pad or slice to the largest size, then mask).")


def _is_int(x, value: int) -> bool:
    return x.__class__ is int and x == value


class TensorEnumerate:
    """`enumerate(x)` over the rows of a graph value whose first dim is unknown (or a tensor
    array, or a `TensorZip`)."""

    def __init__(self, tensor, start):
        self.tensor, self.start = tensor, start
        self.zipped = isinstance(tensor, _GRAPH_SEQUENCES)  # (its own length and items)

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
            if isinstance(p, _GRAPH_SEQUENCES):  # (`zip(zip(a, b), c)`, `zip(enumerate(a), b)`)
                self.rows.append(p.item)
                continue
            seq = _indexable(list(p)) if isinstance(p, (list, tuple, range)) and p else None
            if seq is None:
                raise TypeError(
                    f"zip() of a tensor whose length is only known when the program runs with "
                    f"a {type(p).__name__} (argument {k + 1}) whose items cannot be indexed by "
                    "a tensor: make every part a tensor, a tensor array, or a list of numbers "
                    "or of tensors of one shape")
            self.rows.append(seq)

    def length(self):
        out = None
        for p in self.parts:
            n = _graph_length(p) if is_variable(p) or isinstance(p, StructArray) else (
                p.length() if isinstance(p, _GRAPH_SEQUENCES) else len(p))
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


_GRAPH_SEQUENCES = (TensorRange, TensorEnumerate, TensorZip)


def _graph_length(t):
    if isinstance(t, StructArray):
        return t.length()
    return rt.static.array_length(t) if t.is_array else rt.shape(t)[0]


def _row(t, i):
    if isinstance(t, StructArray):
        return t[i]
    return rt.static.array_read(t, i) if t.is_array else t[i]


def _first_variable(seq):
    while isinstance(seq, (TensorEnumerate, TensorZip)):
        seq = seq.tensor if isinstance(seq, TensorEnumerate) else next(
            p for p in seq.parts if is_variable(p) or isinstance(p, (StructArray,
                                                                      *_GRAPH_SEQUENCES)))
    if isinstance(seq, TensorRange):
        return seq.stop
    return seq.length() if isinstance(seq, StructArray) else seq


def _sign(step):
    if is_variable(step):
        return rt.sign(step)
    return 1 if step > 0 else -1


def for_loop(iterable, body, args: tuple, names: tuple, extra_test=None, unread=()):
    """`for item in iterable: state = body(item, *state)`, stopping early once
    `extra_test(*state)` is false; returns the final state. `unread`: as for `while_loop`."""
    n = len(names)
    state = list(args)
    over = iterable
    mapping = getattr(iterable, "mapping", iterable)
    ranks = key_ranks.ranks_of(mapping) if extra_test is None else None
    if check_order(mapping, "a `for` over the dict", ranks=ranks):
        return result_of(_in_run_order(iterable, mapping, ranks, body, state, names))
    flagged = flagged_items(iterable) if extra_test is None else None
    if flagged is not None:  # (a dict with a key a tensor `if` set on one path)
        return result_of(_over_flagged_keys(flagged, body, state, names))
    refuse_iteration(iterable)
    if isinstance(iterable, TensorRange):
        report.loop("for", 0, graph=iterable.stop)
        return result_of(_graph_for(iterable.length(), iterable.item, body, state, names,
                                  extra_test, unread))
    if isinstance(iterable, (TensorEnumerate, TensorZip)):
        report.loop("for", 0, graph=_first_variable(iterable))
        return result_of(_graph_for(iterable.length(), iterable.item, body, state, names,
                                  extra_test, unread))
    if isinstance(iterable, StructArray):  # a list of tuples / dicts as tensor arrays
        report.loop("for", 0, graph=iterable.length())
        return result_of(_graph_for(iterable.length(), iterable.__getitem__, body, state, names,
                                  extra_test, unread))
    if is_variable(iterable) and iterable.is_array:
        report.loop("for", 0, graph=iterable)
        return result_of(_graph_for(rt.static.array_length(iterable),
                                  lambda i: rt.static.array_read(iterable, i), body, state,
                                  names, extra_test, unread))
    if is_variable(iterable):
        dim = iterable.shape[0] if iterable.ndim else None
        if dim is None:
            raise TypeError("iteration over a 0-d tensor")
        if dim < 0:
            report.loop("for", 0, graph=iterable)
            return result_of(_graph_for(rt.shape(iterable)[0], lambda i: iterable[i], body,
                                      state, names, extra_test, unread))
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
                    return result_of(_guarded(rest, body, state, names, extra_test))
                program = current_builder().program
                mark = len(program.blocks)
                try:
                    return result_of(_graph_for(len(rest), seq, body, state, names,
                                                extra_test, unread))
                except TypeError:
                    # The body needs the item as a Python value (`xs[i]` on a Python list):
                    # unroll the rest with guards instead.
                    program.drop_blocks(mark)
                    return result_of(_guarded(rest, body, state, names, extra_test))
            if not t:
                break
        state = as_list(body(item, *state), n)
        iterations += 1
    report.loop("for", iterations, over=over)
    return result_of(state)


def _over_flagged_keys(items: list, body, state: list, names: tuple) -> list:
    """A `for` over a dict whose keys a tensor `if` set on some paths only (`key_flags`):
    the turn of such a key runs under that key's presence flag, as eager code visits it only
    where the key exists."""
    n = len(names)
    for item, flag in items:
        if flag is None:
            state = as_list(body(item, *state), n)
            continue
        state = as_list(ifelse(flag, lambda *s, item=item: body(item, *s),
                               lambda *s: s[0] if n == 1 else s, tuple(state), names), n)
    return state


def _in_run_order(iterable, mapping: dict, ranks: dict, body, state: list, names: tuple):
    """A `for` over a dict whose keys' order the run decides (`key_ranks`): the body
    unrolled over the keys in each order the run may give them, the run taking the one its
    keys' ranks hold (each key's turn under its presence flag, as `_over_flagged_keys`)."""
    orders = key_ranks.orders(ranks)
    if orders is None:
        check_order(mapping, "a `for` over the dict")  # (refused: too many orders)
    keys, flags = list(mapping), flags_of(mapping)
    at = {k: (item, flags.get(k)) for k, item in zip(keys, list(iterable), strict=True)}
    n = len(names)

    def run(i, *s):
        items = [at[k] for k in orders[i]]
        if i == len(orders) - 1:
            return _over_flagged_keys(items, body, list(s), names)
        return as_list(ifelse(key_ranks.holds(ranks, orders[i]),
                              lambda *s: _as_state(_over_flagged_keys(items, body, list(s),
                                                                      names)),
                              lambda *s: _as_state(run(i + 1, *s)), tuple(s), names), n)
    return run(0, *state)


def _as_state(state: list):
    """A branch's state as `ifelse` takes it from a branch function (one name: its value)."""
    return state[0] if len(state) == 1 else tuple(state)


def _indexable(items: list):
    """`i -> items[i]` for a graph index `i`: the items stacked into one tensor (None when
    they are not all numbers or all tensors of one shape and dtype, e.g. Layers)."""
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
        # Python numbers: each item stands for one (Python's precision), as in eager mode
        dtype = "float64" if any(isinstance(x, float) for x in items) else "int64"
        table = rt.tensor.constant(items, dtype)
        return lambda i: mark_python_number(table[i])
    numbers = _numbers_table(items)
    if numbers is not None:
        return lambda i: mark_python_number(numbers[i])
    if all(is_variable(x) or is_tensor(x) for x in items) and len(
            {(tuple(x.shape), str(x.dtype)) for x in items}) == 1:
        table = rt.stack(list(items))
    else:
        return None
    return lambda i: table[i]


def _numbers_table(items: list):
    """The items stacked, where they are Python ints (or floats) some of which the program
    computes (`draft = [int(t.argmax()) for ...]`): each item read from it stands for a
    Python number again (an int appended to a list stays an int); else None."""
    kinds = set()
    for x in items:
        if is_variable(x) and getattr(x, "python_scalar", False) and not x.is_array and \
                not tuple(x.shape) and x.dtype.name != "bool":
            kinds.add(float if x.dtype.is_floating else int)
        elif type(x) in (int, float):
            kinds.add(type(x))
        else:
            return None
    if len(kinds) != 1 or not any(is_variable(x) for x in items):
        return None
    dtype = "float64" if kinds == {float} else "int64"
    return rt.stack([rt.cast(x, dtype) if is_variable(x) else rt.tensor.constant(x, dtype)
                     for x in items])


def _guarded(items: list, body, state: list, names: tuple, extra_test) -> list:
    """The rest of a Python loop over items that cannot be indexed by a tensor (Layers,
    strings, mixed shapes), after a tensor break/return flag: unrolled, each iteration a
    `cond` on the loop's extra test."""
    n = len(names)
    for item in items:
        def step(*st, item=item):
            return body(item, *st)

        def skip(*st):
            return result_of(list(st))

        state = as_list(ifelse(extra_test(*state), step, skip, tuple(state), names), n)
    return state


def _graph_for(length, item_of, body, state, names, extra_test, unread=()):
    n = len(names)

    def test(i, *st):
        more = i < length
        if not is_variable(more):
            more = rt.tensor.constant(bool(more)) if not is_variable(i) else more
        if extra_test is None:
            return more
        # d2s's own test (`not _do_return`, `not _break`): no user code, so it is traced on
        # every path; traced only where `more` holds, its setting of state the loop carries
        # by name (`o.stats = ...`) looked like a change under a tensor-decided operand
        extra = extra_test(*st)
        return and_(more, lambda: extra)

    def step(i, *st):  # (the index alone, where the loop carries no other state)
        return result_of([i + 1, *as_list(body(item_of(i), *st), n)])

    # the index stands for a Python int (range and enumerate give Python ints in eager mode)
    out = graph_while(test, step, [mark_python_number(rt.zeros([], "int64"))] + list(state),
                      ("<index>",) + names, unread)
    return out[1:]


# ---- the graph while loop --------------------------------------------------------------------


