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

import contextlib
import os

import runtime as rt
from runtime.core import is_tensor
from runtime.program.builder import current_builder

from .. import report
from ..errors import ConversionError, note_traced_branch
from . import branch_callables, branch_keys, branch_strs, mutation, none_or_tensor
from . import branch_dtypes, loop_numpy_values, number_or_tensor
from . import unbound as unbound_mod
from .block_values import (
    Pending,
    args_by_name,
    as_list,
    check_return_none,
    fill_placeholder,
    has_tensor,
    mark_python_number,
    raise_when_run,
    raised_by_user_code,
    refuse_aliased,
    result_of,
    same_kind,
    skipped_in_try,
    stand_in,
)
from .branch_arrays import array_at, array_paths
from .exceptions import branch_frame, mark_raised
from .lists import StructArray
from .logical import to_bool
from .loop_initial import plain_inside_tuples
from .mutation_explain import explain_mismatch, explain_names, explain_none
from .mutation_loop import cell_arrays
from .trace_state import current
from .scalar_merge import (
    WIDE_NUMBER,
    cast_scalar,
    merged_bool_flag,
    merged_float_flag,
    mixed_number_types,
    number_kind_flags,
    number_rank,
    scalar_casts,
)
from .variables import (
    RunSizedList,
    Undefined,
    UndefinedNameError,
    is_return_value,
    is_variable,
    marked_returns,
    user_origin,
    where,
)

# ---- if --------------------------------------------------------------------------------------

def ifelse(pred, true_fn, false_fn, args: tuple, names: tuple, read_after=(), dead=()):
    """`if pred: true_fn(*args) else: false_fn(*args)`; returns the new state. `read_after`:
    names of sets the branches change in place that code after the `if` reads; `dead`: names
    of the state no code after the `if` reads (unbound after a tensor `if`: no output)."""
    report.record("if", pred)
    if isinstance(pred, RunSizedList) or not is_variable(pred):  # (`if pairs:` of a list
        pred = to_bool(pred)  # the run sizes, `if seen:` of a set a tensor `if` decides)
    if not is_variable(pred):
        return (true_fn if pred else false_fn)(*args)
    src, names = user_origin(), marked_returns(names)
    _refuse_gradient_flags(names, src)
    graph_if = _GraphIf((true_fn, false_fn), args, names, src)
    graph_if.log.read_after, graph_if.log.pred = read_after, to_bool(pred)  # (`branch_sets`)
    graph_if.guard = getattr(pred, "d2s_try_guard", False)  # (`try_guard`: `Guarded`)
    if dead:  # (not a list, dict or set passed in: a branch may change it in place, and
        # one that becomes a tensor array stays state)
        given = args_by_name(true_fn, args, names)
        graph_if.dead = frozenset(i for i, n in enumerate(names)
                                  if n in dead and not _holds_containers(given[i]))
    return result_of(graph_if.build(graph_if.log.pred))


class _GraphIf:
    """One tensor `if` being built into a `cond` op. Tracing both branches may show what they
    need to be one op's outputs (lists that become tensor arrays, zeros where a value is
    unbound on one path, Python numbers cast to tensors, a branch that raises at run time
    whose values the other branch's stand in for): then they are traced again with it, up to
    five times. (A plain object, not `__slots__`: `aliases` reads d2s's objects' fields.)"""

    def __init__(self, fns, args: tuple, names: tuple, src):
        self.fns, self.args, self.names, self.src = fns, args, names, src
        # state found by object, each value under its own name (the converter passes only
        # the names bound before the `if`)
        self.log = mutation.begin(fns, args_by_name(fns[0], args, names), names, src)
        self.fills: dict = {}  # state index -> a value like which zeros fill a placeholder
        self.casts: dict = {}  # Python-number sides meeting a tensor (`scalar_merge`)
        self.unbound: dict = {}  # index -> whether the true branch leaves it unbound
        self.unbound_errors: dict = {}  # index -> what reading it raises there (or None)
        self.arrays: dict = {}  # (state index, path) -> dtype: lists that are tensor arrays
        self.flags: dict = {}  # state index -> (name, at): values with read checks, whose
        # bound flags are extra outputs (`unbound.branch_flags`)
        self.kinds: dict = {}  # (kind, path) of numbers whose type flags are extra outputs too
        self.numpy: set = set()  # state indices a NumPy scalar differs at (graph values there)
        self.keys: dict = {}  # dict keys one branch leaves unset: zeros there (`branch_keys`)
        self.key_flags: dict = {}  # ... and keys flagged in a branch: their flags, outputs
        self.key_orders: dict = {}  # ... the dicts' key orders in the if branch
        self.strs: set = set()  # (state index, path) of strs the branches differ on: ids
        self.callables: dict = {}  # ... of callables they differ on: the tables of those
        self.standing: list = []  # the other branch's values, for a branch that raises ...
        self.settled = False  # ... once known
        self.dead: frozenset = frozenset()  # indices of state no code after the `if` reads
        self._new_attempt()

    def _new_attempt(self) -> None:
        self.outs: list = []  # each traced branch's values (numbers promoted, + objects)
        self.given: list = []  # ... as given to cond (filled, converted)
        self.raised: list = []  # per traced branch: whether it ends in a run-time `raise`
        self.raw: list = []  # each traced branch's values as it returned them
        self.full: list = []  # ... and with the objects it changed (the log's extra outputs)

    def build(self, pred) -> list:
        """Trace the branches into a `cond` op (again while they need it); the new state."""
        builder = current_builder()
        self.marks = (len(builder.program.blocks), builder.block, len(builder.block.ops))
        for _ in range(12):  # (each attempt that adds flag outputs makes progress: nested
            try:             # ifs' keys, number kinds and flags may each need one)
                before = self._extra_outputs()
                result = rt.static.nn.cond(pred, self._branch(self.fns[0]),
                                           self._branch(self.fns[1]))
                if self._extra_outputs() != before:  # (a new flag output)
                    self._reset()
                    continue
                if not self._one_raises():
                    break
                self._settle()  # the other branch's values are the `if`'s results
            except Exception as e:
                if self._extra_outputs() != before:  # (the other had no flag output yet)
                    self._reset()
                    continue
                if self._one_raises():
                    self._settle()
                elif not self._fixed_by_tracing_again(e):
                    raise
            self._reset()
        else:
            raise AssertionError(
                f"d2s bug: the tensor `if` at {where(self.src)} kept changing shape")
        return self._finish(pred, result)

    def _extra_outputs(self) -> int:
        return len(self.flags) + len(self.kinds) + len(self.key_flags) + len(self.numpy)

    def _reset(self) -> None:
        """Before both branches are traced again (with every changed object)."""
        self.log.restore()  # a branch that failed midway may have left its values in them
        mark, here, op_mark = self.marks
        current_builder().program.drop_blocks(mark)
        del here.ops[op_mark:]  # a cond op of the attempt before, if it was built
        self._new_attempt()

    def _one_raises(self) -> bool:
        return len(self.raised) == 2 and self.raised[0] != self.raised[1] and not self.settled

    def _settle(self) -> None:
        """One branch raises at run time: the other one's values stand in for its values."""
        self.standing.extend(self.full[1] if self.raised[0] else self.full[0])
        self.settled = True

    def _branch(self, fn):
        def run():
            return self._trace_branch(fn)
        return run

    def _call(self, fn) -> list:
        """The branch's values (inside its `branch_frame`)."""
        args, names = self.args, self.names
        try:
            out = [plain_inside_tuples(v) for v in as_list(fn(*args), len(names))]
            return [Undefined(names[i]) if i in self.dead else v for i, v in enumerate(out)]
        except UndefinedNameError as e:
            eager = getattr(e, "d2s_eager", None)
            if eager is None or is_return_value(e.d2s_name):
                raise note_traced_branch(e, where(self.src))
            if e.d2s_probe:  # (a graph loop's probe: the loop carries whether it is bound,
                current().probe_reads.add(e.d2s_name)  # and the read checks it: `loop_bound`)
            # the branch reads a name unbound on every path here (the first trip of a loop
            # unrolled over a tensor's rows: `if v == values[0]: run = 0` / `else: run += 1`):
            # eager raises it if the program takes the branch, and so does the program
            raise_when_run(eager.with_traceback(e.__traceback__))
            return args_by_name(fn, args, names)
        except LookupError as e:
            if not raised_by_user_code(e):
                raise
            # Python's IndexError / KeyError here (a list popped empty, a missing key): eager
            # raises it when the branch is taken, so does the program (the other's values)
            raise_when_run(e)
            return args_by_name(fn, args, names)
        except Exception as e:  # noqa: BLE001  (re-raised: the same exception)
            raise note_traced_branch(e, where(self.src))

    def _trace_branch(self, fn) -> tuple:
        """Trace one branch: its values as `cond` takes them (and the bound flags)."""
        k, outs = len(self.names), self.outs
        with branch_frame() as frame, unbound_mod.guarding(self.guard, not self.raw):
            branch_keys.enter_branch(self.log)
            out = self._call(fn)
            out = skipped_in_try(out, self.raw[0]) if self.guard and self.raw else out
            out = loop_numpy_values.numpy_scalars(out, self.numpy)  # (`np.float32(2)`)
            branch_keys.fill(self.keys, len(self.raw), self.key_orders, self.log, out)
        key_flags = branch_keys.branch_flags(self.log, self.keys, self.key_flags, len(self.raw))
        for (i, path), dtype in self.arrays.items():
            if i < len(out):  # (the changed objects' values are converted below)
                out[i] = array_at(out[i], path, dtype)
        self.raised.append(frame.raised)
        self.raw.append(out)
        self.full.append(out)
        if outs and not frame.raised and not (self.raised[0] and self.settled):
            _check_bound(self.names, outs[0], out, self.src, self.unbound,
                         self.unbound_errors)
        out = mutation.branch_end(self.log, out)  # + changed objects; the snapshot restored
        out = loop_numpy_values.numpy_scalars(out, self.numpy, self.full)  # (+ objects')
        self.full[-1] = out
        if len(self.full) == 2 and not any(self.raised):  # (a number on one path only)
            places = [*self.names, *(sl.path for sl in self.log.slots)]
            number_or_tensor.find(self.full[0], out, places, self.kinds, self.src)
            none_or_tensor.find(self.full[0], out, places, self.kinds)  # (None on one)
            branch_dtypes.find(self.full[0], out, places, self.kinds)  # (a dtype on one)
        elif len(self.full) == 2 and self.settled:  # (one raises: the other's values
            kept = self.full[1] if self.raised[0] else self.full[0]  # keep their flags)
            none_or_tensor.find(kept, kept, [*self.names, *(
                sl.path for sl in self.log.slots)], self.kinds)
        if frame.raised and self.settled:
            out = [stand_in(v) for v in (outs[0] if outs else self.standing)]
        elif outs and not (self.raised[0] and self.settled):
            n = min(len(outs[0]), len(out))  # (state, then the changed objects' values)
            out = _promote_numbers(outs[0][:n], out[:n]) + out[n:]
        outs.append(out)
        out = [cast_scalar(fill_placeholder(v, self.fills.get(i)), self.casts.get(i))
               for i, v in enumerate(out)]
        out = branch_strs.as_ids(branch_dtypes.fill(none_or_tensor.fill(
            out, self.kinds), self.kinds), self.strs)
        out = branch_callables.as_ids(out, self.callables)
        for (i, path), dtype in self.arrays.items():
            out[i] = array_at(out[i], path, dtype)
        self.given.append(out)
        values = self.full[-1]  # (frozen: a list the branch changed is restored by now;
        # and the changed objects' values)
        return tuple(out) + tuple(unbound_mod.branch_flags(self.raw[-1], k, self.flags)) + \
            tuple(number_kind_flags(values, k, self.kinds, self.marks[1],
                                    branch_dtypes.here)) + key_flags

    def _fixed_by_tracing_again(self, e: Exception) -> bool:
        """Whether `cond` refusing the branches' values (`e`) is fixed by tracing them again:
        lists whose length depends on the condition become arrays, objects the second
        branch changed are traced in both, placeholders get zeros, numbers casts. Otherwise
        the state that differs is explained (StateChangeError), or False."""
        if not isinstance(e, (ValueError, TypeError)):
            return False
        names, given, log = self.names, self.given, self.log
        _drop_runtime_locals(e)
        passed = args_by_name(self.fns[0], self.args, names)
        if _array_lists(names, given, passed, self.src, log, self.arrays) or cell_arrays(
                log, given, len(names), self.arrays) or branch_keys.find(
                    log, names, self.outs, passed, self.keys):
            return True
        return mutation.grew(self.outs) or self._fill_placeholders()

    def _fill_placeholders(self) -> bool:
        """A return value set in one branch only (`_retval` is unbound in the other): zeros of
        the returned type there (the return flag that goes with it guarantees they are never
        read); a name bound in one branch only: zeros, read-checked; Python numbers meeting
        tensors: casts. False (after explaining the difference) when none is new."""
        names, outs = self.names, self.outs
        more = {i: v for i, v in _return_fills(names, outs).items() if i not in self.fills}
        if len(outs) == 2:
            more.update({i: outs[1][i] if first else outs[0][i]
                         for i, first in self.unbound.items() if i not in self.fills})
        new_casts = {i: c for i, c in scalar_casts(outs).items()
                     if i not in self.casts}
        strs = branch_strs.find(names, outs) - self.strs  # (`mode = "a"` / `"b"`)
        funcs = branch_callables.find(names, outs, self.callables)  # (`act = F.relu` / ...)
        if not more and not new_casts and not strs and not funcs:
            explain_names(names, outs, self.src)
            explain_mismatch(names, outs, self.src)
            mutation.explain(self.log, names, outs)
            explain_none(names, outs, self.src)
            return False
        self.fills.update(more)
        self.casts.update(new_casts)
        self.strs |= strs
        return True

    def _finish(self, pred, result) -> list:
        """`cond`'s outputs as the new state: changed objects written, read checks."""
        if self.raised and all(self.raised):
            mark_raised()  # both branches raise: so does the code around this `if`
        flags = self.flags
        result = list(result) if result is not None else []
        present = result[len(result) - len(self.key_flags):]  # (dict keys' flags)
        result = result[:len(result) - len(self.key_flags)]
        kinds = dict(zip(sorted(self.kinds), result[len(result) - len(self.kinds):]))
        result = result[:len(result) - len(self.kinds)]
        bound_flags = result[len(result) - len(flags):] if flags else []
        result = result[:len(result) - len(flags)]
        result = branch_strs.as_items(result, self.strs, self.outs[-2:])
        result = branch_callables.as_items(result, self.callables, self.src)
        k = len(self.names)
        if len(self.full) == 2:  # (numbers the branches put into changed objects: a list
            # item appended as an int by one branch and a float by the other)
            _mark_scalars(result[k:], [f[k:] for f in self.full], pred, self.src, {},
                          ("objects",))
            number_or_tensor.mark_all(result[k:], kinds, k)  # (`b = 1` ... `d["b"] = t`)
        for i in range(min(k, len(result))):  # (`tuple(array)` on every path: a tuple)
            if is_variable(result[i]) and result[i].is_array and all(
                    i < len(f) and is_variable(f[i]) and getattr(f[i], "_d2s_tuple", False)
                    for f in self.raw):
                result[i]._d2s_tuple = True
        branch_dtypes.mark_all(result, kinds, [*self.names, *(  # (and None on some runs)
            sl.path for sl in self.log.slots)], self.src)
        result = mutation.finish(self.log, result, k, self.outs)
        branch_keys.after(self.key_flags, present, self.log, self.keys, self.key_orders)
        _mark_scalars(result, self.raw, pred, self.src, kinds)
        _read_checks(result, self.raw, self.unbound, pred, self.names, self.src, skip=flags,
                     errors=self.unbound_errors)
        unbound_mod.after_branches(result, flags, bound_flags)
        return result


def _holds_containers(v) -> bool:
    """Whether `v` holds a list, dict or set (also one an enclosing tensor `if` or loop made a
    tensor array: that `if` keeps it as state, so this one must give it back too)."""
    if isinstance(v, RunSizedList) or is_variable(v) and v.is_array:
        return True
    if isinstance(v, tuple):
        return any(map(_holds_containers, v))
    return isinstance(v, (list, dict, set))


def _drop_runtime_locals(e: BaseException) -> None:
    """The finished runtime frames (`cond`'s) in the traceback of `e` hold the branch values,
    which the alias check of a list becoming an array would find as other references to it:
    their locals are dropped (d2s's frames, which say how to show the error, are kept)."""
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_RUNTIME_DIR):
            with contextlib.suppress(RuntimeError):  # (a frame still running)
                tb.tb_frame.clear()
        tb = tb.tb_next


_RUNTIME_DIR = os.path.dirname(rt.__file__) + os.sep


def _refuse_gradient_flags(names, src) -> None:
    """`h.stop_gradient = ...` in a branch of a tensor `if`: eager stops the gradient through
    `h` for all its uses (earlier ones too) on the paths that set it, which one static
    backward cannot decide by data."""
    for name in names:
        if name.endswith(".stop_gradient"):
            value = name[:-len(".stop_gradient")]
            raise ConversionError(
                f"`{name}` is set in a branch of an `if` whose condition is a tensor "
                f"({where(src)}): in eager code it stops the gradient through `{value}` for "
                "all its uses on the inputs that take that branch, which the program's "
                f"backward cannot decide by data. Write `{value} = {value}.detach()` in the "
                "branch (stops the uses after it), or set it before the `if`.", origin=src)


def _array_lists(names, given, passed, src, log, arrays: dict) -> bool:
    """Find the lists of tensors (state, or inside a returned structure) that the two
    branches leave with different lengths, or as a list in one branch and a tensor array in
    the other: each becomes a tensor array in both; True if any new. A state list passed in
    (`passed`: per name) with another reference than its name cannot become an array
    (StateChangeError)."""
    if len(given) != 2:
        return False
    found = {}
    for i in range(min(len(names), len(given[0]), len(given[1]))):
        # (lists, not iterators: a suspended one holds the branch values, which the alias
        # check would find as other references to the list)
        name, a, b = names[i], given[0][i], given[1][i]
        for path, dtype in list(array_paths(a, b, ())):
            if (i, path) in arrays:
                continue
            arg = passed[i] if i < len(passed) else None
            if not path and isinstance(arg, list):
                if any(s.obj is arg for s in log.slots):  # changed in place (a branch
                    # rebinding the name to a new list leaves the old one as it was)
                    refuse_aliased(arg, name, "has a length that depends on a tensor "
                                   "condition, so it becomes a tensor array", src, log)
                log.carry_by_name(arg)
            found[(i, path)] = dtype
    for i in range(len(names), min(len(given[0]), len(given[1]))):  # (a changed object: an
        a, b = given[0][i], given[1][i]  # array an inner loop holds as pairs in one branch)
        if is_variable(a) and a.is_array and is_variable(b) and b.is_array:
            found.update({(i, path): dtype for path, dtype in array_paths(a, b, ())
                          if (i, path) not in arrays})
    arrays.update(found)
    return bool(found) | _arrays_made_inside(names, given, passed, src, log)


def _arrays_made_inside(names, given, passed, src, log) -> bool:
    """State lists that both branches leave as tensor arrays (an inner `if` or loop made
    them arrays, a list of tuples a `StructArray`) after a branch appended to or popped the
    list object in place first: the name carries those changes, so the list object is no
    changed place of its own (it was: 'a list of length 2 in the if branch and 1 in the else
    branch'). True if any new."""
    new = False
    for i in range(min(len(names), len(passed), *map(len, given))):
        arg = passed[i]
        if isinstance(arg, list) and any(s.obj is arg for s in log.slots) and all(
                isinstance(g[i], StructArray) or is_variable(g[i]) and g[i].is_array
                for g in given):
            refuse_aliased(arg, names[i], "has a length that depends on a tensor condition, "
                           "so it becomes a tensor array", src, log)
            log.carry_by_name(arg)
            new = True
    return new


def _read_checks(result, raw, unbound, pred, names, src, skip=(), errors=None) -> None:
    """Names bound in one branch only get a read check; checks of branch values go on
    (those in `skip` by their flags, `unbound.after_branches`)."""
    if len(raw) != 2:
        return
    for i, first in unbound.items():
        unbound_mod.mark(result[i], rt.logical_not(pred) if first else pred, names[i], src,
                         (errors or {}).get(i))
    for i, r in enumerate(result):
        if i in skip:
            continue
        for k, side in enumerate(raw):
            if i < len(side):
                unbound_mod.carry(side[i], r, pred, k == 0)


def _promote_numbers(first: list, second: list) -> list:
    """Python numbers that differ between the two branches (`1` and `2.5`, `2.0` and `3.0`):
    the second becomes a tensor of Python's precision (bool, int64, float64; the wider type
    when they differ), which `cond` then gives the first one too."""
    return [_promote_number(a, b) for a, b in zip(first, second)]


def _promote_number(a, b):
    if isinstance(a, (list, tuple)) and type(a) is type(b) and len(a) == len(b):
        return same_kind(b, [_promote_number(x, y) for x, y in zip(a, b)])
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        return {k: _promote_number(a[k], b[k]) for k in b}
    kinds = {type(a), type(b)}
    if kinds <= {bool, int, float} and (type(a) is not type(b) or a != b):
        dtype = "float64" if float in kinds else "bool" if kinds == {bool} else "int64"
        return mark_python_number(rt.full([], b, dtype))
    # a number graph value on one side, a Python number of a wider type on the other (an int
    # and 1.5, a bool and 3): both take the wider type (the first branch by the cast that
    # `scalar_casts` asks for), never the wider number a constant of the narrower dtype
    if number_rank(a) > number_rank(b) >= 0 and is_variable(b) and not is_variable(a):
        return mark_python_number(rt.cast(b, WIDE_NUMBER[number_rank(a)]))
    if number_rank(b) > number_rank(a) >= 0 and is_variable(a) and not is_variable(b):
        return mark_python_number(rt.full([], b, WIDE_NUMBER[number_rank(b)]))
    return b


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
        placeholder = is_return_value(name) or pending
        known = [v for v in values if _fillable(v, placeholder) or pending and type(v) is str]
        # (a str beside a `Pending` name: the same str stands in, never read there)
        if placeholder and known and any(isinstance(v, Undefined) for v in values):
            fills[i] = known[0]
    return fills


def _fillable(v, placeholder: bool) -> bool:
    """Whether zeros like `v` may stand in for an unbound placeholder beside it: a tensor, a
    structure of tensors and numbers, a number; of a placeholder (a return value, a flag),
    also a bool and a structure of numbers and bools (`return True` or `return [True, i]`
    under a tensor `if` in a loop: the return flag guards every read of the zeros)."""
    if isinstance(v, Undefined):
        return False
    if has_tensor(v) or mutation.tensor_tree(v):
        return True
    if isinstance(v, (int, float)):
        return placeholder or not isinstance(v, bool)
    if placeholder and type(v) in (list, tuple, dict):
        items = list(v.values()) if type(v) is dict else list(v)
        return bool(items) and all(_fillable(x, True) for x in items)
    return False


def _check_bound(names, first, second, src, unbound=None, errors=None) -> None:
    check_return_none(names, [(a, a) if none_or_tensor.convertible(a, b) else (a, b)
                              for a, b in zip(first, second)], src)
    for i, (name, a, b) in enumerate(zip(names, first, second)):
        if is_return_value(name) or isinstance(a, Pending) or isinstance(b, Pending):
            continue  # placeholders never read (`_return_fills`)
        if isinstance(a, Undefined) != isinstance(b, Undefined):
            if unbound is not None and is_tensor(b if isinstance(a, Undefined) else a):
                unbound[i] = isinstance(a, Undefined)  # checked when read (`unbound`)
                errors[i] = (a if unbound[i] else b).error
                continue
            branch = "if" if isinstance(b, Undefined) else "else"
            raise UndefinedNameError(
                f"'{name}' is bound in only one branch of an if whose condition is a tensor, "
                f"and is used after it ({where(src)}). Bind '{name}' before the if, or in "
                f"the {branch} branch too.")


def ifexp(pred, true_fn, false_fn):
    """`true_fn() if pred else false_fn()`."""
    report.record("if", pred)
    if isinstance(pred, RunSizedList) or not is_variable(pred):  # (and a set or dict a
        pred = to_bool(pred)  # tensor `if` decides: `x if seen else y`)
    if not is_variable(pred):
        return true_fn() if pred else false_fn()
    # (as an `if` statement: Python numbers of two types keep the type of the branch taken)
    return ifelse(pred, lambda: true_fn(), lambda: false_fn(), (), (_IFEXP,))


_IFEXP = "the value of the conditional expression"


# ---- while -----------------------------------------------------------------------------------


def _items(v, n: int) -> list:
    """The items of a structure, or n placeholders where a branch left it unbound."""
    return list(v) if isinstance(v, (list, tuple)) and len(v) == n else [v] * n


def _mark_scalars(result, raw: list, pred, src, kinds: dict, path=()) -> None:
    """Outputs of a tensor `if` whose branches both gave Python numbers (or values standing
    for them) stand for a Python number too (of the type of the branch a run takes; `kinds`:
    path -> the float flag `cond` gave out, where a branch's own lives in its block)."""
    if len(raw) != 2 or not isinstance(result, (list, tuple)):
        return
    for i, (r, a, b) in enumerate(zip(result, raw[0], raw[1])):
        if isinstance(r, (list, tuple)):  # structures (a returned tuple): item by item
            _mark_scalars(r, [_items(a, len(r)), _items(b, len(r))], pred, src, kinds,
                          (*path, i))
            continue
        if is_variable(r) and all((is_variable(v) and v.python_scalar) or isinstance(
                v, Undefined) or (isinstance(v, (int, float)) and not is_tensor(v))
                for v in (a, b)) and not all(isinstance(v, Undefined) for v in (a, b)):
            r.python_scalar = True
            r.mixed_number = mixed_number_types(a, b)  # (saved: returned as a tensor)
            at = (*path, i)
            r.float_when = kinds[("f", at)] if ("f", at) in kinds else \
                merged_float_flag(a, b, pred, src)
            r.bool_when = kinds[("b", at)] if ("b", at) in kinds else \
                merged_bool_flag(a, b, pred)
        elif is_variable(r) and _numpy_sides(a, b):  # (NumPy values on both, or beside a
            r.numpy_array, r.numpy_scalar = True, _numpy_sides(a, b)[0].numpy_scalar  # None)
            number_or_tensor.mark(r, kinds, (*path, i))  # (one a number on some runs too)
        else:
            number_or_tensor.mark(r, kinds, (*path, i))
            _numpy_where_no_number(r, a, b)


def _numpy_sides(a, b) -> list:
    """The branch values of NumPy's kind (`numpy_values`, all one kind: scalars or arrays),
    where every side that is not None is one; [] otherwise."""
    sides = [v for v in (a, b) if v is not None]
    if sides and all(is_variable(v) and v.numpy_array and v.numpy_scalar ==
                     sides[0].numpy_scalar for v in sides):
        return sides
    return []


def _numpy_where_no_number(r, a, b) -> None:
    """`r`, a Python number on some runs (`number_or_tensor`), is NumPy's value on the others
    where each branch that gives no number gives one (`total += a[i].sum()` under the `if`)."""
    sides = [v for v in (a, b) if is_variable(v) and not v.python_scalar]
    if is_variable(r) and r.number_when is not None and sides and all(
            v.numpy_array and v.numpy_scalar == sides[0].numpy_scalar for v in sides):
        r.numpy_array, r.numpy_scalar = True, sides[0].numpy_scalar


