"""`and`, `or`, `not` with Python's short-circuit, also for graph values.

When the left operand is a graph value, the right operands are evaluated only inside the
graph branch that needs them (a `cond` op), so they run only when the program decides so,
and Python side effects of building them happen once.
"""
from __future__ import annotations

import math
from types import MappingProxyType

import runtime as rt
from runtime.ops.array_number_kinds import holds_number_kinds, holds_strs
from runtime.ops.arrays import array_pack, holds_python_numbers
from runtime.ops.combine import refuse_rows
from runtime.program import train_step

from .. import report
from ..errors import ConversionError
from . import chosen_text, key_flags, mutation, str_arrays
from .flagged_algebra import flagged_compare
from .made_sets import MadeSet, items_of
from .set_algebra import check_items
from .traced_keys import check_decided, equal_items, set_flags, traced
from .variables import RunSizedList, is_variable, user_origin, where


def to_bool(x):
    """A graph value as a bool tensor (Python values: `bool(x)`)."""
    if isinstance(x, RunSizedList):  # (a list of structures the run sizes: has it items)
        return x.length() > 0
    truth = None if is_variable(x) else set_truth(x)
    return _to_bool(x) if truth is None else truth


def set_truth(x):
    """`bool(s)` of a set whose items a tensor `if` decides (`branch_sets`): a bool graph
    value standing for a Python bool (True where an item is there on every path); else
    None."""
    items = set_flags(x)
    if not items:
        return _str_truth(x) if chosen_text.is_run_str(x) else _dict_truth(x)
    if len(items_of(x)) > len(items):
        return True
    flags = list(items.values())
    out = flags[0]
    for f in flags[1:]:
        out = rt.logical_or(out, f)
    out = rt.assign(out)
    out.python_scalar = True
    return out


def _str_truth(x):
    """`bool(label)` of a str (or None) the run chooses among known strs (`if label:`): the
    run's truth, a bool graph value standing for the Python bool (a Python bool where every
    str the run may choose agrees); None where the strs are not known."""
    if getattr(x, "texts", None) is None:
        return None
    return chosen_text.text_op(bool, "its truth", x)


def _dict_truth(x):
    """`bool(d)` of a dict (or a view of one) with keys that exist on some paths only
    (`key_flags`): whether a key exists on this run; None for anything else."""
    mapping = x if isinstance(x, dict) else getattr(x, "mapping", None)
    flags = key_flags.flags_of(mapping) if isinstance(mapping, (dict, MappingProxyType)) \
        else {}
    if not flags:
        return None
    if len(mapping) > len(flags):
        return True
    out = rt.assign(rt.any(rt.stack([rt.reshape(f, []) for f in flags.values()])))
    out.python_scalar = True
    return out


def set_len(x):
    """`len(s)` of a set whose items a tensor `if` decides (`branch_sets`): its items there
    on every path, and each flagged one where its flag holds (an int64 standing for a
    Python int)."""
    items = set_flags(x)
    n = len(items_of(x)) - len(items) + sum(rt.cast(f, "int64") for f in items.values())
    n.python_scalar = True
    return n


def _to_bool(x):
    if not is_variable(x):
        return bool(x)
    if x.is_array:  # a list whose length the program decides: true when it has items
        return rt.static.array_length(x) > 0
    if x.none_when is not None:  # (None on some runs, `none_or_tensor`: false there, as
        check, flag = x.on_read, x.none_when  # `bool(None)`; its zeros are not used)
        x.on_read = x.none_when = None
        try:
            truth = to_bool(x)
        finally:
            x.on_read, x.none_when = check, flag
        return rt.logical_and(rt.logical_not(flag), truth)
    shape = x.shape
    if not x.is_array and all(d >= 0 for d in shape) and math.prod(shape) != 1:
        # eager's class and message (the program would name its own value instead)
        raise ValueError("The truth value of an array with more than one element is "
                         f"ambiguous (a tensor of shape {list(shape)}). Use a.any() or a.all()")
    if x.dtype == "bool":
        return x
    return rt.not_equal(x, rt.zeros_like(x))


def and_(a, *rest):
    """`a and rest[0]() and rest[1]() ...`"""
    if rest:
        report.record("and", a)
    for i, f in enumerate(rest):
        if (t := _chosen_truth(a)) is not None:  # (`label and label.upper()`)
            return STR_IF[0](t, lambda: and_(f(), *rest[i + 1:]), lambda: a)
        if is_variable(a):
            return _graph(a, rest[i:], and_, decided=False)
        if not a:
            return a
        a = f()
    return a


def or_(a, *rest):
    """`a or rest[0]() or rest[1]() ...`"""
    if rest:
        report.record("or", a)
    for i, f in enumerate(rest):
        if (t := _chosen_truth(a)) is not None:  # (`label or "none"`)
            return STR_IF[0](t, lambda: a, lambda: or_(f(), *rest[i + 1:]))
        if is_variable(a):
            return _graph(a, rest[i:], or_, decided=True)
        if a:
            return a
        a = f()
    return a


def _chosen_truth(a):
    """The truth of `a`, a str (or None) the run chooses, where only the run decides it (a
    bool graph value); else None."""
    if not chosen_text.is_run_str(a):
        return None
    t = _str_truth(a)
    return t if is_variable(t) else None


# `true() if t else false()` of a graph `t`, as a tensor `if` (`control_flow.ifexp`, set
# when it is imported): `and` / `or` of a str the run chooses gives one of the operands
STR_IF: list = []


def truth(x):
    """A condition's operand: a graph value as a 0-d bool tensor, a Python value as it is."""
    if chosen_text.is_run_str(x) and (chosen := _str_truth(x)) is not None:
        return chosen  # (`if label:` of a str or None a tensor decided)
    return _scalar_bool(x) if is_variable(x) else x


def truth_and_(a, *rest):
    """`a and ...` where only the truth of the result matters (a condition): graph operands
    are combined as bool tensors (a float tensor `and` a bool tensor is a bool)."""
    return _condition(and_, truth(a), [_truthful(f) for f in rest], decides=False)


def truth_or_(a, *rest):
    """`a or ...` in a condition (see `truth_and_`)."""
    return _condition(or_, truth(a), [_truthful(f) for f in rest], decides=True)


def _condition(op, a, rest: list, decides: bool):
    """`op(a, *rest)` as a condition. A graph `a` followed by operands that give a Python
    value deciding the condition alone (`t and False`, `t or True`): the condition is that
    Python value, as eager's truth is on every input, so a tensor `if` on it prunes the
    branch eager never enters (its code is not traced; the `cond` built is never read)."""
    if not (is_variable(a) and rest):
        return op(a, *rest)
    given: list = []
    evaluate = _chained(op, rest)

    def remaining():
        given.append(evaluate())
        return given[-1]
    out = op(a, remaining)
    if len(given) == 1 and not is_variable(given[0]) and bool(given[0]) is decides:
        return decides
    return out


def _chained(op, fns: list):
    """`lambda: op(fns[0](), fns[1], ...)` closing over each function itself, not a list of
    them: `mutation.python_effects_refused` finds the user's code through such closures."""
    first = fns[0]
    if len(fns) == 1:
        return first
    after = _chained(op, fns[1:])
    return lambda: op(first(), after)


def chain_value(before, value):
    """`a and b` / `a or b` used as a value and computed by statements (a walrus in `b`):
    `value` replaces `before` only where the program evaluates `b`, so the two must agree in
    dtype and rank when `before` is a graph value (the result's type would depend on data)."""
    if is_variable(before) and (is_variable(value) or hasattr(value, "dtype")) and (
            str(before.dtype) != str(value.dtype) or len(before.shape) != len(value.shape)):
        src = user_origin()
        raise ConversionError(
            f"`a and b` / `a or b` used as a value, with a {_dtype(before)} tensor `a` and an "
            f"operand `b` of another dtype or rank ({where(src)}): Python gives one operand "
            "or the other, so the result's dtype would depend on data. Use it as a "
            "condition (`if a and b:` combines truth values), or combine tensors "
            "explicitly (`rt.logical_and(a != 0, b)`).", origin=src)
    return value


def _dtype(v) -> str:
    return getattr(v.dtype, "name", str(v.dtype))


def _truthful(f):
    return lambda: truth(f())


def comp_filter(c, kind="list"):
    """A comprehension's `if c` that stays Python's (a dict or set comprehension, or a list
    one with a walrus): a graph value cannot decide which items it has."""
    if not is_variable(c):
        return c
    src = user_origin()
    if kind == "dict":
        raise ConversionError(
            f"a dict comprehension filter whose condition is a tensor ({where(src)}): the "
            "dict's keys would depend on data, and a converted function's dicts have keys fixed "
            "when the program is built. Keep every key and mask the value instead "
            "(`{k: rt.where(cond, v, rt.zeros_like(v)) for k, v in d.items()}`), or keep "
            "the selected values in a list comprehension (`[v for k, v in d.items() if "
            "cond]` is a tensor array).", origin=src)
    if kind == "set":
        raise ConversionError(
            f"a set comprehension filter whose condition is a tensor ({where(src)}): which "
            "items the set holds would depend on data, and a converted function's sets are "
            "fixed when the program is built. Use a list comprehension (a tensor array whose "
            "length is decided when the program runs), or mask every item with rt.where.",
            origin=src)
    raise ConversionError(
        f"a comprehension filter whose condition is a tensor ({where(src)}), in a "
        "comprehension with a walrus (`:=`) or an `async for`: the number of items would "
        "depend on data. Bind the name in a `for` statement that appends, or keep every "
        "item and mask it (`rt.where(cond, value, rt.zeros_like(value))`).", origin=src)


def _scalar_bool(x):
    """A one-element truth value as a 0-d bool tensor, so both branches agree in rank."""
    x = to_bool(x)
    if is_variable(x) and x.ndim and all(d == 1 for d in x.shape):
        return rt.reshape(x, [])
    return x


def _graph(a, rest, op, decided: bool):
    """`a` is a graph value: `cond(a, ...)` evaluating the rest in one branch only.

    As in Python, the result is the operand that decided (`m or 0.5` gives `m` or 0.5; `(x >
    0) and y` gives `x > 0` or `y`, whatever `y` is), which requires both to have one dtype
    and shape: otherwise the result's type would depend on data, a `ConversionError`. (In a
    condition, `truth_and_` / `truth_or_` combine truth values instead.)"""

    first, *more = rest
    src = user_origin(3)

    def rest_value():  # the operands evaluated only when `a` decides so
        with mutation.python_effects_refused(
                rest, "an operand of `and`/`or` evaluated only when a tensor operand "
                "before it decides so", src):
            return op(first(), *more)
    pred = _scalar_bool(a)

    def keep_value():
        return a

    def evaluate_value():
        return rest_value()

    try:
        if decided:
            return rt.static.nn.cond(pred, keep_value, evaluate_value)
        return rt.static.nn.cond(pred, evaluate_value, keep_value)
    except TypeError as e:
        if "differs between branches" not in str(e):
            raise
        src = user_origin()
        word = "or" if decided else "and"
        raise ConversionError(
            f"`a {word} b` used as a value, with a {a.dtype.name} tensor `a` and an "
            f"operand of another dtype or shape ({where(src)}): Python gives one operand "
            "or the other, so the result's dtype would depend on data. Use it as a "
            f"condition (`if a {word} b:` combines truth values), or combine tensors "
            f"explicitly (`rt.logical_{word}(a != 0, b)`).", origin=src) from e


def not_(x):
    """`not x`"""
    if not is_variable(x) and (truth := set_truth(x)) is not None:
        x = truth  # (a set whose items, a dict whose keys, a tensor `if` decides)
        if not is_variable(x):
            return not x
    if isinstance(x, RunSizedList):
        out = rt.logical_not(to_bool(x))
        out.python_scalar = True  # (`not lst`: a Python bool)
        return out
    if is_variable(x):
        out = rt.logical_not(to_bool(x))
        # (`not n` of a Python number, of a list, of a one-element tensor: a Python bool;
        # a dim the run decides (a saved model's batch) is 1 wherever eager's `not` runs)
        out.python_scalar = x.python_scalar or x.is_array or all(d in (1, -1) for d in x.shape)
        return out
    return not x


def is_none(x):
    """`x is None`: Python's answer, except for `p.grad` where whether backward() reached
    `p` is decided per run (a term a tensor `if` adds): a bool graph value of that run."""
    return _is_none(x, "`is None`")


def is_not_none(x):
    """`x is not None` (see `is_none`)."""
    out = _is_none(x, "`is not None`")
    return not out if isinstance(out, bool) else not_(out)


def _is_none(x, what: str):
    if isinstance(x, str_arrays.StrItem):  # (a str or None the run picks: `python_picks`)
        return x.is_none()
    if not is_variable(x):
        return x is None
    if x.none_when is not None:  # (None on the runs a tensor `if` decided: `none_or_tensor`)
        out = rt.assign(x.none_when)
        out.python_scalar = True
        return out
    try:
        present = train_step.grad_presence(x)
    except RuntimeError as e:
        src = user_origin(3)
        raise ConversionError(f"{what} ({where(src)}): {e}", origin=src) from None
    if present is None:
        return False
    out = rt.logical_not(present)
    out.python_scalar = True  # (`is` gives a Python bool)
    return out


def in_(x, container):
    """`x in container`; with a graph value on either side, a bool graph value (`x` equal to
    some item; for a tensor container, to some element), as eager code decides per value."""
    refuse_rows(container, "`in`")
    if getattr(type(x), "run_type", False) and type(container) in (tuple, list, set,
                                                                  frozenset):
        return x.within(container)  # (`type(v) in (int, float)`: `run_types`)
    items = set_flags(container)
    if items and not traced(x):  # (a set whose items a tensor `if` decides)
        try:
            flag = items.get(x)
        except TypeError:  # (unhashable: Python's own error)
            flag = None
        if flag is None:
            return x in items_of(container)
        out = rt.assign(flag)
        out.python_scalar = True  # (`in` gives a Python bool)
        return out
    check_decided(container, "`in`")
    if type(x) is MadeSet and isinstance(container, (set, frozenset)):
        x = frozenset(x)  # (as a set's `in` looks a set up: `{1, 2} in {frozenset({1, 2})}`)
    flag = key_flags.flag_of(_keys_of(container, x), x) if not traced(x) else None
    if flag is not None:  # (a key set by one branch of a tensor `if`: `branch_keys`)
        out = rt.assign(flag)
        out.python_scalar = True  # (`in` gives a Python bool)
        return out
    items = list(container) if isinstance(container, (list, tuple, set, frozenset, dict)) \
        else None
    if is_variable(container) and container.is_array and holds_strs(container):
        return str_arrays.contains(container, x)  # (ids of the strs a tensor decides)
    if isinstance(x, str_arrays.StrItem) and isinstance(container, (list, tuple, set,
                                                                    frozenset)):
        return str_arrays.item_in(x, container)  # (a str the run decides, among Python's)
    if chosen_text.is_run_str(container) or chosen_text.is_run_str(x) and (
            type(container) is str or chosen_text.is_run_str(container)):  # (`"a" in mode`)
        return chosen_text.text_op(lambda a, b: a in b, "`in`", x, container)
    if is_variable(container) and container.is_array and holds_python_numbers(container):
        values = array_pack(container)  # (a list of Python numbers the program grows)
        out = rt.any(rt.equal(values[:, 0] if holds_number_kinds(container) else values, x))
        out.python_scalar = True  # (`in` gives a Python bool)
        return out
    if is_variable(container):
        return rt.any(rt.equal(container, x))
    if items is None or not (traced(x) or any(traced(t) for t in items)):
        out = x in container
        key_flags.guard_membership(container, x, out)  # (`name in self.cache`)
        return out
    found = None  # (a set or dict of values the trace computed: compared by value)
    for item in items:
        eq = equal_items(x, item)
        if eq is True:
            return True
        if eq is not False:
            found = eq if found is None else rt.logical_or(found, eq)
    out = rt.tensor.constant(False) if found is None else found
    out.python_scalar = True  # (`in` gives a Python bool: `sum(p in seen for p in t)` an int)
    return out


def eq_(a, b):
    """`a == b`. Two lists (or two tuples) holding graph values compare as eager's list
    comparison does, item by item (an item equals itself; others by the truth of their
    `==`): a 0-d bool graph value where a graph comparison decides. Anything else is `==`
    (of a set a tensor `if` left undecided: refused, as its other reads)."""
    none = _none_equal(a, b)
    if none is not None:
        return none
    flagged = flagged_compare("==", a, b)  # (a set a tensor `if` decides: by its flags)
    if flagged is not None:
        return flagged
    _decided_sets(a, b, "`==`")
    strs = str_arrays.lists_equal(a, b)  # (a list of strs a tensor sizes)
    if strs is not None:
        return strs
    if _number_list(a) and _number_list(b) and (is_variable(a) or is_variable(b)):
        return _number_lists_equal(a, b)
    if not _sequences_with_graph_values(a, b):
        return a == b
    if len(a) != len(b):
        return False
    found = None
    for x, y in zip(a, b):
        if x is y:
            continue
        same = eq_(x, y)
        if not is_variable(same):
            if not same:
                return False
            continue
        same = _scalar_bool(same)
        found = same if found is None else rt.logical_and(found, same)
    return True if found is None else found


def _number_list(x) -> bool:
    """A list of Python numbers: a Python one, or one the program grows (a tensor array)."""
    if is_variable(x):
        return x.is_array and holds_python_numbers(x)
    return type(x) is list and all(type(v) in (bool, int, float) for v in x)


def _number_values(x):
    """The values of a list of Python numbers as a float64 tensor (of its run-time length)."""
    if not is_variable(x):
        return rt.to_tensor([float(v) for v in x], "float64").reshape([len(x)])
    values = array_pack(x)
    return rt.cast(values[:, 0] if holds_number_kinds(x) else values, "float64")


def _number_lists_equal(a, b):
    """`a == b` of lists of Python numbers, one of which the program grows: equal lengths
    and values (`1 == 1.0 == True`, as Python compares them), a Python bool when returned."""
    a, b = _number_values(a), _number_values(b)
    same = rt.static.nn.cond(rt.shape(a)[0] == rt.shape(b)[0],
                             lambda: rt.all(rt.equal(a, b)), lambda: rt.full([], False, "bool"))
    same.python_scalar = True
    return same


def ne_(a, b):
    """`a != b` (see `eq_`)."""
    none = _none_equal(a, b)
    if none is not None:
        return not_(none)
    flagged = flagged_compare("!=", a, b)
    if flagged is not None:
        return flagged
    _decided_sets(a, b, "`!=`")
    if not _sequences_with_graph_values(a, b):
        return a != b
    same = eq_(a, b)
    if not is_variable(same):
        return not same
    return rt.logical_not(same)


def _none_equal(a, b):
    """`v == None` of a value a tensor `if` left None on some runs (`none_or_tensor`): its
    flag, as `v is None` (None where neither side is such a pair)."""
    for x, y in ((a, b), (b, a)):
        if x is None and is_variable(y) and y.none_when is not None:
            return is_none(y)
    return None


def _decided_sets(a, b, what: str) -> None:
    """Refuse `a == b` of a set a tensor `if` left undecided, or of two sets (dicts) one of
    which holds a value the converted code computed (`set_algebra`)."""
    for x in (a, b):
        if isinstance(x, (set, frozenset)):
            check_decided(x, what)
        _flagged_dict(x, what)
    kinds = (set, frozenset, dict, type({}.keys()))
    if isinstance(a, kinds) and isinstance(b, kinds):
        check_items(what, what.strip("`"), a, b)


def _keys_of(container, x):
    """The dict whose keys `x in container` looks up: `container` itself, a keys view's
    dict; refused for a values or items view of a dict with keys on some paths only (it
    would find the items of the keys absent on this run)."""
    if type(container) is type({}.keys()):
        return container.mapping
    if type(container) in (type({}.values()), type({}.items())):
        _flagged_dict(container, "`in`", 4)
    return container


def _flagged_dict(x, what: str, depth: int = 3) -> None:
    """Refuse `==` / `!=` of a dict (or its view) with a key that exists on some paths only
    (`key_flags`): Python compares the keys it holds on every path, not the run's."""
    flags = key_flags.flags_of(x if isinstance(x, dict) else getattr(x, "mapping", None))
    if flags:
        src = user_origin(depth)
        raise ConversionError(
            f"{what} ({where(src)}) compares a dict whose key {next(iter(flags))!r} exists "
            "on some paths only (a tensor `if` or a graph loop set or removed it, or it is "
            "one value of a key the converted code computes): which keys it has is known "
            "only when the program runs. Compare the items by name (`'k' in d`, "
            "`d.get('k', default) == v`) instead.", origin=src)


def _sequences_with_graph_values(a, b) -> bool:
    return type(a) is type(b) and type(a) in (list, tuple) and _holds_graph(a + b)


def _holds_graph(items) -> bool:
    return any(is_variable(v) or type(v) in (list, tuple) and _holds_graph(v) for v in items)


def not_in(x, container):
    """`x not in container` (see `in_`)."""
    return not_(in_(x, container))
