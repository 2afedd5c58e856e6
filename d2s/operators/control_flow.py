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

from runtime.core import is_tensor

from .. import report
from ..errors import note_traced_branch
from . import mutation
from .exceptions import branch_frame, mark_raised
from . import unbound as unbound_mod
from .branch_arrays import _array_at, _array_paths
from .scalar_merge import cast_scalar, mixed_number_types, scalar_casts
from .variables import Undefined, UndefinedNameError, is_variable, user_origin, where


def _is_tensor(x) -> bool:
    """A graph value or an eager Tensor."""
    return is_tensor(x)


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
    _refuse_gradient_flags(names, src)
    outs: list = []
    fills: dict = {}
    casts: dict = {}  # Python-number sides meeting a tensor (`scalar_merge`)
    unbound: dict = {}  # index -> whether the true branch leaves it unbound (`unbound`)
    raised: list = []  # per traced branch: whether it ends in a run-time `raise`
    stand_in: list = []  # the other branch's values, for a branch that raises ...
    settled: list = []  # ... once known (non-empty then)
    raw: list = []  # each traced branch's values as it returned them
    full: list = []  # ... and with the objects it changed (the mutation log's extra outputs)
    log = mutation.begin((true_fn, false_fn), args, names, src)  # state found by object

    arrays: dict = {}  # (state index, path) -> dtype: lists that are tensor arrays
    given: list = []  # each branch's values as given to cond (filled, converted)
    flags: dict = {}  # state index -> (name, at): values with read checks, whose bound
    # flags are extra outputs (`unbound.branch_flags`)

    def branch(fn):
        def run():
            with branch_frame() as frame:
                try:
                    out = _as_list(fn(*args), len(names))
                except LookupError as e:
                    if not _raised_by_user_code(e):
                        raise
                    # Python's own IndexError / KeyError on this path (a list popped empty,
                    # a missing key): eager code raises it when, and only when, the branch
                    # is taken, so the program does (the other branch's values stand in)
                    _raise_when_run(e)
                    out = [args[i] if i < len(args) else Undefined(name)
                           for i, name in enumerate(names)]
                except Exception as e:  # (re-raised: the same exception)
                    raise note_traced_branch(e, where(src))
            for (i, path), dtype in arrays.items():
                if i < len(out):  # (the changed objects' values are converted below)
                    out[i] = _array_at(out[i], path, dtype)
            raised.append(frame.raised)
            raw.append(out)
            full.append(out)
            if outs and not frame.raised and not (raised[0] and settled):
                _check_bound(names, outs[0], out, src, unbound)
            out = mutation.branch_end(log, out)  # + changed objects; the snapshot restored
            full[-1] = out
            k = len(names)
            if frame.raised and settled:
                out = [_stand_in(v) for v in (outs[0] if outs else stand_in)]
            elif outs and not (raised[0] and settled):
                out = _promote_numbers(outs[0][:k], out[:k]) + out[k:]
            outs.append(out)
            out = [cast_scalar(_fill(v, fills.get(i)), casts.get(i))
                   for i, v in enumerate(out)]
            for (i, path), dtype in arrays.items():
                out[i] = _array_at(out[i], path, dtype)
            given.append(out)
            return tuple(out) + tuple(unbound_mod.branch_flags(raw[-1], len(names), flags))
        return run

    pred = to_bool(pred)
    builder = current_builder()
    program = builder.program
    mark = len(program.blocks)
    here, op_mark = builder.block, len(builder.block.ops)

    def reset():  # trace both branches again (with every changed object)
        log.restore()  # a branch that failed midway may have left its values in them
        del program.blocks[mark:]
        del here.ops[op_mark:]  # a cond op of the attempt before, if it was built
        outs.clear()
        given.clear()
        raised.clear()
        raw.clear()
        full.clear()

    def one_raises() -> bool:
        return len(raised) == 2 and raised[0] != raised[1] and not settled

    for _ in range(5):
        try:
            before = len(flags)
            result = rt.static.nn.cond(pred, branch(true_fn), branch(false_fn))
            if len(flags) != before:  # a branch value unbound on some paths: its flag too
                reset()
                continue
            if not one_raises():
                break
            # One branch raises at run time: the other one's values are the `if`'s results.
            stand_in.extend(full[1] if raised[0] else full[0])
            settled.append(True)
        except Exception as e:
            if len(flags) != before:  # (the other branch had no flag output yet)
                reset()
                continue
            if one_raises():
                stand_in.extend(full[1] if raised[0] else full[0])
                settled.append(True)
            elif not isinstance(e, (ValueError, TypeError)):
                raise
            elif _array_lists(names, given, args, src, log, arrays) or mutation.cell_arrays(
                    log, given, len(names), arrays):
                pass  # lists whose length depends on the condition: traced again as arrays
            elif not mutation.grew(outs):
                # A return value set in one branch only (`_retval` is None in the other):
                # trace again with zeros of the returned type there. The return flag that
                # goes with it guarantees the zeros are never read.
                k = len(names)
                more = {i: v for i, v in _return_fills(names, outs).items() if i not in fills}
                if len(outs) == 2:  # a name bound in one branch only: zeros, read-checked
                    more.update({i: outs[1][i] if first else outs[0][i]
                                 for i, first in unbound.items() if i not in fills})
                new_casts = {i: c for i, c in scalar_casts([o[:k] for o in outs]).items()
                             if i not in casts}
                if not more and not new_casts:
                    mutation.explain_names(names, outs, src)
                    _explain_mismatch(names, outs, src)
                    mutation.explain(log, names, outs)
                    raise
                fills.update(more)
                casts.update(new_casts)
        reset()
    else:
        raise AssertionError(f"d2s bug: the tensor `if` at {where(src)} kept changing shape")
    if raised and all(raised):
        mark_raised()  # both branches raise: so does the code around this `if`
    result = list(result) if result is not None else []
    bound_flags = result[len(result) - len(flags):] if flags else []
    result = result[:len(result) - len(flags)]
    result = mutation.finish(log, result, len(names), outs)
    _mark_scalars(result, raw)
    _read_checks(result, raw, unbound, pred, names, src, skip=flags)
    unbound_mod.after_branches(result, flags, bound_flags)
    return _result(result)


def _refuse_gradient_flags(names, src) -> None:
    """`h.stop_gradient = ...` in a branch of a tensor `if`: eager stops the gradient through
    `h` for all its uses (earlier ones too) on the paths that set it, which one static
    backward cannot decide by data."""
    for name in names:
        if name.endswith(".stop_gradient"):
            from ..errors import ConversionError
            value = name[:-len(".stop_gradient")]
            raise ConversionError(
                f"`{name}` is set in a branch of an `if` whose condition is a tensor "
                f"({where(src)}): in eager code it stops the gradient through `{value}` for "
                "all its uses on the inputs that take that branch, which the program's "
                f"backward cannot decide by data. Write `{value} = {value}.detach()` in the "
                "branch (stops the uses after it), or set it before the `if`.", origin=src)


def _array_lists(names, given, args, src, log, arrays: dict) -> bool:
    """Find the lists of tensors (state, or inside a returned structure) that the two
    branches leave with different lengths, or as a list in one branch and a tensor array in
    the other: each becomes a tensor array in both; True if any new. A state list with
    another reference than its name cannot become an array (StateChangeError)."""
    if len(given) != 2:
        return False
    found = {}
    for i, (name, a, b) in enumerate(zip(names, given[0], given[1])):
        for path, dtype in _array_paths(a, b, ()):
            if (i, path) in arrays:
                continue
            if not path and i < len(args) and isinstance(args[i], list):
                if any(s.obj is args[i] for s in log.slots):  # changed in place (a branch
                    # rebinding the name to a new list leaves the old one as it was)
                    _refuse_aliased(args[i], name, "has a length that depends on a tensor "
                                    "condition, so it becomes a tensor array", src, log)
                log.carry_by_name(args[i])
            found[(i, path)] = dtype
    arrays.update(found)
    return bool(found)


def _read_checks(result, raw, unbound, pred, names, src, skip=()) -> None:
    """Names bound in one branch only get a read check; checks of branch values go on
    (those in `skip` by their flags, `unbound.after_branches`)."""
    if len(raw) != 2:
        return
    import runtime as rt
    for i, first in unbound.items():
        unbound_mod.mark(result[i], rt.logical_not(pred) if first else pred, names[i], src)
    for i, r in enumerate(result):
        if i in skip:
            continue
        for k, side in enumerate(raw):
            if i < len(side):
                unbound_mod.carry(side[i], r, pred, k == 0)


def _frames(e: BaseException) -> list:
    tb, out = e.__traceback__, []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def _raised_by_user_code(e: BaseException) -> bool:
    """Whether `e` was raised by the user's own code (its innermost frame is converted code,
    or d2s's list operators that stand for `lst.pop()` & co. there), not by d2s."""
    from ..pyct import loader
    from . import lists
    frames = _frames(e)
    if not frames:
        return False
    name = frames[-1].tb_frame.f_code.co_filename
    return loader.is_generated(name) or name == lists.__file__


def _raise_when_run(e: BaseException) -> None:
    """A `raise` op of `e` (its type and message, at the user's line) in the branch being
    traced."""
    from runtime.program.origin import forced

    from ..pyct import loader
    from .exceptions import raise_
    tb = next(tb for tb in reversed(_frames(e))  # the innermost line of the user's code
              if loader.is_generated(tb.tb_frame.f_code.co_filename))
    src = loader.lookup(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
    with forced(tb.tb_frame, tb.tb_lineno):  # the op reports that line
        raise_(type(e)(*e.args), src=src)


def _stand_in(v):
    """A value for a branch that raises at run time (never read): zeros like a tensor of the
    other branch, the same Python value otherwise."""
    from .lists import StructArray
    if isinstance(v, StructArray):  # (a list of tuples as arrays: empty ones)
        return v.empty()
    if isinstance(v, (list, tuple)):
        return _same_kind(v, [_stand_in(x) for x in v])
    if isinstance(v, dict):
        return {k: _stand_in(x) for k, x in v.items()}
    return _zeros_like(v) if is_variable(v) else v  # (an array: an empty one)


def _explain_mismatch(names, outs, src) -> None:
    """Name the variable when the branches of a tensor `if` left it with different structure
    (e.g. lists of different lengths): `cond` itself only knows output positions."""
    if len(outs) < 2:
        return
    for name, a, b in zip(names, outs[0], outs[1]):
        if isinstance(a, (list, tuple, dict)) and (type(a) is not type(b) or len(a) != len(b)):
            other = (f"one of length {len(b)}" if isinstance(b, (list, tuple, dict)) else
                     "a tensor" if is_variable(b) or _is_tensor(b) else type(b).__name__)
            kind = "list" if isinstance(a, list) else type(a).__name__  # (also an empty array)
            what = (f"a {kind} of length {len(a)} in the if branch and {other} "
                    "in the else branch")
            if _is_return_value(name):
                raise mutation.StateChangeError(
                    f"the returned value has a different structure depending on an if whose "
                    f"condition is a tensor ({where(src)}): {what}; one static program "
                    "returns one structure. Return values of the same structure on every path.")
            raise mutation.StateChangeError(
                f"'{name}' is {what} of an if whose condition is a tensor ({where(src)}); both "
                "branches must leave it with the same length. Append the same number of items "
                "in both branches, or use a tensor (rt.concat) instead of a list.")
    for name, a, b in zip(names, outs[0], outs[1]):
        found = _dtype_difference(a, b, "")
        if found is not None:
            from ..errors import ConversionError
            path, da, db = found
            what = ("the returned value" + path) if _is_return_value(name) else \
                "the conditional expression's value" if name.startswith("_ifexp") else \
                f"'{name}{path}'"
            raise ConversionError(
                f"{what} is a {da} tensor in the if branch and a {db} tensor in the else "
                f"branch of an if whose condition is a tensor ({where(src)}): eager code keeps "
                "each path's dtype, so the dtype after the if would depend on data. Cast one "
                "side (`rt.cast(v, ...)`) so both paths give one dtype.", origin=src)


def _dtype_difference(a, b, path):
    """(path, dtype a, dtype b) of the first tensors of one structure whose dtypes differ."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            found = _dtype_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if _is_tensor(a) and _is_tensor(b) and str(a.dtype) != str(b.dtype):
        return (path, getattr(a.dtype, "name", str(a.dtype)),
                getattr(b.dtype, "name", str(b.dtype)))
    return None


def _promote_numbers(first: list, second: list) -> list:
    """Python numbers that differ between the two branches (`1` and `2.5`, `2.0` and `3.0`):
    the second becomes a tensor of Python's precision (bool, int64, float64; the wider type
    when they differ), which `cond` then gives the first one too."""
    return [_promote_number(a, b) for a, b in zip(first, second)]


def _promote_number(a, b):
    if isinstance(a, (list, tuple)) and type(a) is type(b) and len(a) == len(b):
        return _same_kind(b, [_promote_number(x, y) for x, y in zip(a, b)])
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
        pending = any(isinstance(v, Pending) for v in values)  # (a flag: `found = True`)
        known = [v for v in values if not isinstance(v, Undefined) and (
            _has_tensor(v) or mutation.tensor_tree(v) or (
                isinstance(v, (int, float)) and (pending or not isinstance(v, bool))))]
        placeholder = _is_return_value(name) or pending
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


def _same_kind(like, items: list):
    """A list or tuple of `like`'s type holding `items` (a namedtuple takes them as its
    fields)."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


def _zeros_like(like):
    """Zeros like `like`: a tensor's dtype and shape (unknown dims as 1), a Python number's
    precision (a value standing for a Python number), the same structure for lists/tuples/dicts; other Python values as they are."""
    if isinstance(like, (list, tuple)):
        return _same_kind(like, [_zeros_like(x) for x in like])
    if isinstance(like, dict):
        return {k: _zeros_like(x) for k, x in like.items()}
    import runtime as rt
    if isinstance(like, (bool, int, float)) and not _is_tensor(like):
        dtype = "bool" if isinstance(like, bool) else "int64" if isinstance(
            like, int) else "float64"  # Python's precision, standing for a Python number
        return _scalar(rt.full([], 0, dtype))
    if not _is_tensor(like):
        return like
    if is_variable(like) and like.is_array:  # an empty array of the same element type
        out = rt.static.create_array(like.dtype)
        out._static_shape = like._static_shape
        return out
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
    from runtime.core import active_builder
    b = active_builder()
    if b is None:
        return fn(*args)
    with b.scratch():
        value = fn(*args)
    return value

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
            r.mixed_number = mixed_number_types(a, b)  # (returned as a tensor)


def _refuse_aliased(lst: list, name: str, why: str, src, log) -> None:
    """A list about to become a tensor array (its name is rebound to the array) must have no
    other reference: that one would keep the old list and miss the appends."""
    from .aliases import other_references
    others = other_references(lst, name, (log,))
    if others:
        raise mutation.StateChangeError(
            f"the list '{name}' {why} ({where(src)}), but it is also reachable as "
            f"{', '.join(others[:3])}, which would keep the old list. Use one name for the "
            "list while it grows (or rt.concat a tensor instead of a list).", src)
