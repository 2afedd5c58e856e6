"""`Print`, `Assert` and `raise`: ops that act when the program runs (eagerly: right away)."""
from __future__ import annotations

import io

import numpy as np

from .. import backend, core
from ..dtypes import convert_dtype
from ..ops import array_number_kinds as kinds
from ..ops import array_number_kinds as kinds_mod  # (`kinds` is a kernel attribute)
from ..ops import registry
from ..ops.registry import STATE, Meta, bind

# Ops whose effect is not their outputs: passes must never remove or reorder them.
SIDE_EFFECTS = {"print", "py_print", "py_warn", "py_log", "assert", "raise", "write_persistable", "grad_hook",
                "grad_read", "grad_expect_none", "grad_accumulate", "grad_write", "grad_clear",
                "backward_cut_check", "param_updated",
                "lr_schedule_step"}


def _print_kernel(xp, x, message="", name="", summarize=20):
    a = backend.to_numpy(x)
    flat = a.reshape(-1)
    shown = flat if summarize < 0 else flat[:summarize]
    print(f"{message}{' ' if message else ''}Variable: {name}\n"
          f"  - shape: {list(a.shape)}\n  - dtype: {a.dtype}\n"
          f"  - data: {np.array2string(shown, separator=' ')}", flush=True)
    return x


def _assert_kernel(xp, cond, data, held=(), message="", summarize=20, parts=None,
                   stop_gradient=(), as_int=(), state=-1, kinds=(), lists=(), formats=(),
                   error="AssertionError"):
    if not bool(xp.all(cond)):
        if parts is not None:  # (the message is a text with values, as `print` shows them)
            text = io.StringIO()
            _py_print_kernel(xp, data, parts, "", "", stop_gradient, text, as_int, formats,
                             kinds, lists)
            raise _holding(AssertionError(text.getvalue()) if error == "AssertionError" else
                           _made(error, text.getvalue()), state, held)
        shown = "".join(f"\n  {np.array2string(backend.to_numpy(d).reshape(-1)[:summarize])}"
                        for d in data)
        raise _holding(AssertionError((message or "Assert failed: the condition is False")
                                      + shown), state, held)


# While d2s traces a call, `STATE_AT_RAISE[0]()` gives `(key, values)` for an op being built
# that may raise: what the traced call has changed so far, which the raised exception carries
# (`_holding`), or None. d2s sets it (`d2s/operators/state_at_raise.py`); runtime never imports
# d2s.
STATE_AT_RAISE = [lambda: None]


def _holding(exc: BaseException, state: int, held) -> BaseException:
    """`exc` carrying `(state, held)` as `exc.state_at_raise` when the op was given a `state`
    key: the values (`held`) of the state the traced code had changed where it raised, which
    d2s writes back as eager code would have left it (`d2s/operators/state_at_raise.py`)."""
    if state >= 0:
        try:
            exc.state_at_raise = (state, list(held))
        except AttributeError:  # (an exception class with __slots__: no state written back)
            pass
    return exc


def _py_print_kernel(xp, values, parts=(), sep=" ", end="\n", stop_gradient=(), file=None,
                     as_int=(), formats=(), kinds=(), lists=()):
    shown = _shown(values, parts, stop_gradient, as_int, formats, kinds, lists)
    print(*shown, sep=sep, end=end, file=_stream(file), flush=True)
    return ()


def _py_format_kernel(xp, values, parts=(), stop_gradient=(), as_int=(), formats=(), kinds=(),
                      lists=()):
    text = "".join(_shown(values, parts, stop_gradient, as_int, formats, kinds, lists))
    return np.asarray(kinds_mod.string_id(text), dtype=kinds_mod.STR_DTYPE)


def _shown(values, parts, stop_gradient, as_int, formats, kinds, lists) -> list:
    """The text of each of `parts` (a str, or None for the next of `values`) as eager code
    shows it."""
    wrap = core.wrap
    n = len(stop_gradient)  # (after the printed values: the type flags of `kinds`)
    it = iter(zip(values[:n], stop_gradient, as_int or [False] * n, formats or [None] * n,
                  kinds or [None] * n, lists or [None] * n))
    shown = []
    for p in parts:
        if p is None:
            a, stop, whole, how, kind, listed = next(it)
            if listed is not None:  # (a list whose length the run decided: its items)
                v = _list_items([a], "strs", stop)[0] if listed[0] == "str" else _ListText(
                    _list_items(a, listed[0], stop), listed[1])
            elif kind is not None:  # (a Python number whose type the run decides)
                v = _number_of_run(a.item(), *(None if i < 0 else bool(values[i])
                                               for i in kind))
            elif whole:  # (a dim, a length, `loss.item()`: a Python number in eager code)
                v = a.item()
            else:
                v = wrap(a)
                v.stop_gradient = stop
            shown.append(str(v) if how is None else _formatted(v, *how))
        else:
            shown.append(p)
    return shown


class _ListText:
    """A printed list (or tuple) of items: its text as Python's print shows it."""

    def __init__(self, items: list, is_tuple: bool):
        self.items, self.is_tuple = items, is_tuple

    def __str__(self) -> str:
        return str(tuple(self.items) if self.is_tuple else self.items)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _list_items(items, kind: str, stop: bool) -> list:
    """The items eager code's list holds, of a tensor array's value (`list_kind`)."""
    if kind == "strs":
        return [kinds.STRINGS[int(a)] for a in items]
    if kind == "pairs":
        return [kinds.number_of_pair(a) for a in items]
    if kind == "numbers":
        return [kinds.number_type_np(np.asarray(a).dtype)(np.asarray(a).item()) for a in items]
    out = []
    for a in items:
        if kind == "items" and a[1] != kinds.TENSOR_CODE:
            out.append(kinds.code_type(a[1], a.dtype)(a[0].item()))
            continue
        t = core.wrap(a[0] if kind == "items" else a)
        t.stop_gradient = stop
        out.append(t)
    return out


def list_kind(t):
    """How `py_print` shows the tensor array `t` as eager's list: its items' kind ("strs",
    "pairs", "numbers", "items": Python numbers and tensors, "tensors"); None where it cannot
    (numbers whose types only the run knows, items of differing stop_gradient)."""
    if getattr(t, "mixed_numbers", False) or getattr(t, "number_sums", False) or getattr(
            t, "item_stops", None) is not None:
        return None
    if kinds.holds_strs(t):
        return "strs"
    if kinds.holds_number_kinds(t):
        return "pairs"
    if kinds.holds_tensor_items(t):
        return "items"
    return "numbers" if getattr(t, "python_items", False) else "tensors"


def _shown_as_eager(tensors: list) -> dict:
    """The attributes of `py_print` (or an assert's text) that show the lists among the
    `tensors` shown (arrays) and the numbers whose type the run decides as eager shows them;
    the type flags those need are appended to `tensors`."""
    attrs = {}
    lists = [[list_kind(t), bool(getattr(t, "_d2s_tuple", False))]
             if getattr(t, "kind", "") == "array" else ["str", False] if getattr(
                 t, "str_item", False) else None for t in tensors]  # (a str's id: the str)
    if any(k is not None for k in lists):
        if any(k is not None and k[0] is None for k in lists):
            raise TypeError("print() of a list of Python numbers whose length a tensor "
                            "decides and whose items' types (or stop_gradient flags) only the "
                            "run knows: print its items in a loop, or return the list and "
                            "print it after the call")
        attrs["lists"] = lists
    run_kinds = _run_kinds(tensors)
    if any(k is not None for k in run_kinds):
        attrs["kinds"] = run_kinds
    return attrs


def _number_of_run(v, is_float, is_bool):
    """The Python number `v` as the type the run decided (`Variable.float_when`, `bool_when`;
    None: the type its value has)."""
    return bool(v) if is_bool else v if is_float is None else float(v) if is_float else int(v)


def _run_kinds(tensors: list) -> list:
    """Per printed value, None, or the positions among the values printed and the flags
    appended after them (which `tensors` gets) of its `float_when` and `bool_when` (-1: none):
    a 0-d value standing for a Python number whose type the run decides (an item of a list of
    Python numbers of several types)."""
    kinds, n = [], len(tensors)
    for t in tensors[:n]:
        flags = [getattr(t, f, None) if prints_as_run_number(t) else None
                 for f in ("float_when", "bool_when")]
        if all(f is None for f in flags):
            kinds.append(None)
            continue
        kind = []
        for f in flags:
            kind.append(-1 if f is None else len(tensors))
            if f is not None:
                tensors.append(f)
        kinds.append(kind)
    return kinds


def _formatted(v, spec: str, conv: str) -> str:
    """`f"{v!conv:spec}"` of a Python number or a tensor (`!r` / `!s`: of its text; `!j`: a
    Python number as `json.dumps` writes it, `NaN`, `true`)."""
    if conv == "j":
        return _json.dumps(v)
    return format(repr(v) if conv == "r" else ascii(v) if conv == "a" else str(v) if conv ==
                  "s" else v, spec)


def _py_warn_kernel(xp, message="", category="UserWarning", filename="", lineno=0, module=""):
    """`warnings.warn(message, category)` as raised at the user's line (`warn_explicit`, with
    the registry of the user's module, so the filters' "default" and "module" actions show it
    as often as eager code's)."""
    globs = getattr(_sys.modules.get(module), "__dict__", None)
    registry = globs.setdefault("__warningregistry__", {}) if globs is not None else None
    _warnings.warn_explicit(message, error_class(category) or UserWarning, filename, lineno,
                            module=module or None, registry=registry)
    return ()


def _py_log_kernel(xp, values, logger="", level=20, items=(), slots=(), numbers=(),
                   stop_gradient=(), filename="", lineno=0, func=""):
    """`logging.getLogger(logger).log(level, *items)` as logged at the user's line: the items
    at `slots` are the values (`numbers`: as the Python numbers eager code has)."""
    log = _logging.getLogger(logger or None)
    if not log.isEnabledFor(level):
        return ()
    items = list(items)
    for i, a, number, stop in zip(slots, values, numbers, stop_gradient):
        if number:
            items[i] = a.item()
        else:
            items[i] = core.wrap(a)
            items[i].stop_gradient = stop
    log.handle(log.makeRecord(log.name, level, filename, lineno, items[0], tuple(items[1:]),
                              None, func))
    return ()


def _grad_hook_kernel(xp, g, hook=None, where=""):
    """Call a `register_hook` hook with the gradient as an eager Tensor, as eager backward
    does; what it returns (None: the gradient as it is) goes on back."""
    out = hook(core.wrap(g))
    if out is None:
        return g
    a = out._data if core.is_eager_tensor(out) else xp.asarray(out)
    if tuple(a.shape) != tuple(g.shape):
        raise ValueError(f"a gradient hook returned a tensor of shape {list(a.shape)} for a "
                         f"gradient of shape {list(g.shape)}:\n{where}")
    return a.astype(g.dtype, copy=False)


def _grad_hook_second_order(ins, outs, gs, attrs):
    raise NotImplementedError(
        "a second-order gradient through a tensor with a register_hook hook in converted "
        f"code:\n{attrs.get('where', '')}\nthe hook runs on gradient values when the "
        "program runs, not on traced values; compute the higher-order gradient eagerly")


def _stream(file):
    """The `file=` of a `py_print` op: None (stdout), "stdout"/"stderr" (looked up when the op
    runs, as eager `print` would, so redirections apply), or the user's own file object (such
    a program runs in this process but cannot be saved)."""
    if file is None or file == "stdout":
        return _sys.stdout
    return _sys.stderr if file == "stderr" else file


PY_PRINT = registry.register(
    "py_print", kernel=_py_print_kernel, infer=lambda values, **a: (), nondiff=True,
    amp="keep", doc="Python's print(*objects, sep, end) when the op runs, tensors shown as "
                    "eager mode shows them.")
PY_FORMAT = registry.register(
    "py_format", kernel=_py_format_kernel, infer=lambda values, **a: Meta((), convert_dtype(kinds.STR_DTYPE)),
    nondiff=True, amp="keep",
    doc="The text an f-string makes of its pieces when the op runs (tensors and Python "
        "numbers shown as eager mode shows them): its id in the table of strs a program's "
        "strs index (`array_number_kinds.STRINGS`).")
PY_WARN = registry.register(
    "py_warn", kernel=_py_warn_kernel, infer=lambda **a: (), nondiff=True, amp="keep",
    doc="Python's warnings.warn(message, category) when the op runs, as raised at `filename`:"
        "`lineno` of `module`. Put it in a cond/while block so it runs on that branch only.")
PY_LOG = registry.register(
    "py_log", kernel=_py_log_kernel, infer=lambda values, **a: (), nondiff=True, amp="keep",
    doc="A logging call (logger name, level, message and arguments, tensors among them) when "
        "the op runs, as logged at `filename`:`lineno` in `func`.")
GRAD_HOOK = registry.register(
    "grad_hook", kernel=_grad_hook_kernel, infer=lambda g, **a: Meta(g.shape, g.dtype),
    grad=_grad_hook_second_order, amp="keep",
    doc="Call a register_hook hook (a Python callable) with the gradient when the op runs; "
        "its result, if not None, replaces the gradient.")
PRINT = registry.register(
    "print", kernel=_print_kernel, infer=lambda x, **a: Meta(x.shape, x.dtype),
    grad=lambda ins, outs, gs, a: [gs[0]], amp="keep",
    doc="Print a tensor's name, shape, dtype and values when the op runs; returns it.")
ASSERT = registry.register(
    "assert", kernel=_assert_kernel, infer=lambda cond, data, held=(), **a: (), nondiff=True,
    amp="keep",
    doc="Raise AssertionError with `message` when the op runs and `cond` is not all true.")


def Print(input, first_n=-1, message=None, summarize=20, print_tensor_name=True,
          print_tensor_type=True, print_tensor_shape=True, print_tensor_lod=True,
          print_phase="both"):
    """Print `input` (name, shape, dtype, the first `summarize` values) when it is computed;
    returns `input`.

    >>> import runtime as rt
    >>> _ = rt.static.Print(rt.ones([2]), message='ones')  # doctest: +ELLIPSIS
    ones Variable: ...
    """
    name = getattr(input, "name", None) or ""
    return bind(PRINT, (input,), {"message": message or "", "name": name,
                                  "summarize": summarize})


def py_print(*objects, sep: str = " ", end: str = "\n", file=None, formats=None) -> None:
    """`print(*objects, sep=sep, end=end)` with the same output as eager mode; in a static
    program tensors are printed when the program runs (Python values are formatted now).
    `formats`: per object, None or the (spec, conversion) of an f-string's `{v!c:spec}`, for
    values standing for Python numbers (`loss.item()`), formatted when the program runs.

    >>> import runtime as rt
    >>> rt.static.py_print('n =', 3, sep=' ', end='!\\n')
    n = 3!
    """
    if STATE.builder is None:
        print(*objects, sep=sep, end=end, file=file)
        return
    tensors, attrs = _text_attrs(objects, formats)
    attrs.update(sep=sep, end=end)
    if file is not None:
        attrs["file"] = ("stdout" if file is _sys.stdout else "stderr" if file is _sys.stderr
                         else file)
    bind(PY_PRINT, (tensors,), attrs)


def py_format(objects, formats=None):
    """The f-string made of `objects` (strs and tensors, `formats` as for `py_print`) when
    the program runs: a 0-d int32 tensor, the text's id in `array_number_kinds.STRINGS`.

    >>> import runtime as rt
    >>> from runtime.ops.array_number_kinds import STRINGS
    >>> STRINGS[int(rt.static.py_format(["n=", 3]))]
    'n=3'
    """
    if STATE.builder is None:
        formats = formats or [None] * len(objects)
        text = "".join(str(o) if f is None else _formatted(o, *f)
                       for o, f in zip(objects, formats))
        return core.wrap(np.asarray(kinds.string_id(text), dtype=kinds.STR_DTYPE))
    tensors, attrs = _text_attrs(objects, formats)
    return bind(PY_FORMAT, (tensors,), attrs)


def _text_attrs(objects, formats) -> tuple:
    """(the tensors among `objects`, the attrs of a `py_print` / `py_format` op showing them
    with the strs between them as eager code would)."""
    tensors = [o for o in objects if core.is_tensor(o)]
    attrs = {"parts": [None if core.is_tensor(o) else str(o) for o in objects],
             "stop_gradient": [bool(t.stop_gradient) for t in tensors]}
    numbers = [prints_as_number(t) for t in tensors]
    if any(numbers):
        attrs["as_int"] = numbers
    if formats is not None and any(f is not None for f in formats):
        attrs["formats"] = [f for o, f in zip(objects, formats) if core.is_tensor(o)]
    attrs.update(_shown_as_eager(tensors))
    return tensors, attrs


def py_warn(message, category=UserWarning, filename: str = "", lineno: int = 0,
            module: str = "") -> None:
    """`warnings.warn(message, category)` when the program runs this op (eagerly: now), shown
    as raised at `filename`:`lineno` (the user's line) of `module`."""
    if STATE.builder is None:
        _warnings.warn_explicit(message, category, filename, lineno, module=module or None)
        return
    bind(PY_WARN, (), {"message": message, "category": error_name(category),
                       "filename": filename, "lineno": lineno, "module": module})


def py_log(logger: str, level: int, items: list, filename: str = "", lineno: int = 0,
           func: str = "") -> None:
    """`logging.getLogger(logger).log(level, *items)` (the message, then its arguments, which
    may be tensors) when the program runs this op (eagerly: now), as logged at `filename`:
    `lineno` in `func`."""
    slots = [i for i, v in enumerate(items) if core.is_tensor(v)]
    if STATE.builder is None:
        _py_log_kernel(None, [core.array_of(items[i]) for i in slots], logger, level,
                       items, slots, [False] * len(slots),
                       [items[i].stop_gradient for i in slots], filename, lineno, func)
        return
    tensors = [items[i] for i in slots]
    bind(PY_LOG, (tensors,), {
        "logger": logger, "level": level, "filename": filename, "lineno": lineno,
        "func": func, "slots": slots, "items": [None if i in slots else v
                                                 for i, v in enumerate(items)],
        "numbers": [prints_as_number(t) for t in tensors],
        "stop_gradient": [bool(t.stop_gradient) for t in tensors]})


def prints_as_number(t) -> bool:
    """Whether `t` stands for what eager code holds as a Python number (a dim or length,
    `loss.item()`, `int(t)`), so printed as that number; not where only the run decides
    whether it is an int or a float."""
    return bool(getattr(t, "eager_int", False) or getattr(t, "python_scalar", False) and not
                t.shape and getattr(t, "float_when", None) is None and not getattr(
                    t, "mixed_number", False) and not getattr(t, "is_array", False))


def prints_as_run_number(t) -> bool:
    """Whether `t` stands for a Python number whose type the run decides (`float_when`,
    `bool_when`: an item of a list of numbers of several types), printed as that number."""
    return bool(getattr(t, "python_scalar", False) and not t.shape and getattr(
        t, "number_when", None) is None and not getattr(t, "is_array", False) and (
            getattr(t, "float_when", None) is not None or getattr(t, "bool_when", None)
            is not None))


def Assert(cond, data=None, summarize=20, name=None, message=None):
    """Raise `AssertionError(message)` when `cond` is not all true (at run time in a static
    program), showing the values of the tensors in `data`."""
    if STATE.builder is None:
        _assert_kernel(backend.XP, cond._data if hasattr(cond, "_data") else cond,
                       [d._data for d in data or []], message=message or "",
                       summarize=summarize)
        return
    _bind_assert(cond, list(data or []), {"message": message or "", "summarize": summarize})


def _bind_assert(cond, data: list, attrs: dict) -> None:
    state = STATE_AT_RAISE[0]()
    if state is None:
        bind(ASSERT, (cond, data), attrs)
    else:
        bind(ASSERT, (cond, data, list(state[1])), {**attrs, "state": state[0]})


def assert_text(cond, objects, formats=None, error: type = AssertionError) -> None:
    """Raise `error` (AssertionError) whose message is the text of `objects` (strings, and
    tensors shown as `print` shows them when the program runs; `formats` as `py_print`'s)
    where `cond` is not all true: an `assert test, f"...{t}..."` of converted code, or a
    `raise E(f"...{t}...")` under a tensor condition (`cond` false)."""
    parts = [None if core.is_tensor(o) else str(o) for o in objects]
    tensors = [o for o in objects if core.is_tensor(o)]
    attrs = {"message": "", "summarize": 0, "parts": parts,
             "stop_gradient": [bool(t.stop_gradient) for t in tensors],
             "as_int": [prints_as_number(t) for t in tensors]}
    if formats is not None and any(f is not None for f in formats):
        attrs["formats"] = [f for o, f in zip(objects, formats) if core.is_tensor(o)]
    if error is not AssertionError:
        attrs["error"] = error_name(error)
    attrs.update(_shown_as_eager(tensors))
    _bind_assert(cond, tensors, attrs)


# ---- raise -----------------------------------------------------------------------------------

import builtins as _builtins  # noqa: E402
import json as _json  # noqa: E402
import logging as _logging  # noqa: E402
import sys as _sys  # noqa: E402
import warnings as _warnings  # noqa: E402

# Exception classes met while building programs in this process, by qualified name, so a
# `raise` op raises the user's own class. A program loaded elsewhere finds a user class only
# if its module is already imported (nothing is imported or executed on behalf of a file).
_ERROR_CLASSES: dict = {}


class ProgramRaisedError(RuntimeError):
    """A `raise` op whose exception class cannot be found in this process (a saved model
    that raised a user-defined exception, loaded where that class's module is not imported)."""


def error_name(cls: type) -> str:
    """'ValueError' for builtins, 'module:Qualified.Name' otherwise."""
    if getattr(_builtins, cls.__name__, None) is cls:
        return cls.__name__
    name = f"{cls.__module__}:{cls.__qualname__}"
    _ERROR_CLASSES[name] = cls
    return name


def error_class(name: str) -> type | None:
    if ":" not in name:
        cls = getattr(_builtins, name, None)
        return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None
    cls = _ERROR_CLASSES.get(name)
    if cls is not None:
        return cls
    module, _, qual = name.partition(":")
    obj = _sys.modules.get(module)
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


_TEXT = type("_Text", (), {"__repr__": lambda self: "<the message>"})()  # (no `value`)


def _raise_kernel(xp, held=(), error="RuntimeError", message="", at="", state=-1, cause="",
                  cause_message="", context="", context_message="", suppress=False,
                  value=_TEXT, value_at=-1):
    if value_at >= 0:  # (the argument: a held value's, the run's key)
        value, held = np.asarray(held[value_at]).item(), held[:value_at]
    exc = _made(error, message) if value is _TEXT else _made_with(error, value)
    if cause or suppress:  # (`raise E(...) from err`: a new `err` of its class and message,
        exc.__cause__ = _made(cause, cause_message) if cause else None  # as its cause)
    if context:  # (raised while handling an exception: that one, or the cause, its context)
        exc.__context__ = exc.__cause__ if context == "cause" else _made(context,
                                                                         context_message)
    try:  # (its cause, context and their flag are the user's, as `exc` is: kept)
        exc.program_cause = True
    except AttributeError:  # (an exception class with __slots__)
        pass
    raise _holding(exc, state, held)


def _made(error: str, message: str) -> BaseException:
    """A new exception of the class named `error` (`error_name`) with `message`."""
    cls = error_class(error)
    if cls is None:
        return ProgramRaisedError(f"{error}: {message}")
    try:
        return cls(message) if message else cls()
    except Exception:  # noqa: BLE001  (unusual constructors: the message as a note)
        return ProgramRaisedError(f"{error}: {message}")


def _made_with(error: str, value) -> BaseException:
    """A new exception of the class named `error` whose one argument is `value` (a number, a
    bool, None or a tuple of those: a `KeyError`'s key as eager code raised it)."""
    cls = error_class(error)
    try:
        return cls(value)
    except Exception:  # noqa: BLE001  (unusual constructors: the text, as `_made` makes it)
        return _made(error, str(value))


def _message(exc: BaseException) -> str:
    args = exc.args
    return "" if not args else str(args[0]) if len(args) == 1 else str(exc)


def _plain(v) -> bool:
    return v is None or type(v) in (int, float, bool) or (
        type(v) is tuple and len(v) <= 16 and all(_plain(x) for x in v))


def _argument(exc: BaseException) -> dict:
    """`{"value": the one argument}` of an exception raised with a number, bool, None or a
    tuple of those (`KeyError(1)`: the message would make it the str '1'); else {}."""
    args = exc.args
    if len(args) == 1 and _plain(args[0]) and error_class(error_name(type(exc))) is not None:
        return {"value": args[0]}
    return {}


RAISE = registry.register(
    "raise", kernel=_raise_kernel, infer=lambda held=(), **a: (), nondiff=True, amp="keep",
    doc="Raise the exception named by `error` (a builtin name or 'module:Qualname') with "
        "`message` when the op runs; `at` is the user line that raised it. Put it in a "
        "cond/while block so it runs only when that branch is taken. Given a `state` key, "
        "the exception carries it with the values of `held` (`state_at_raise`). With "
        "`cause` (a class name as `error`) and `cause_message`, its `__cause__` is a new "
        "exception of that class and message (`raise E(...) from err`); with `context` "
        "(and `context_message`), its `__context__` ('cause': the cause; `suppress`: "
        "`from None`).")


def raise_error(exc: BaseException, at: str = "", value=None) -> None:
    """Raise `exc` when the program runs this op (eagerly: now). The class and message are
    kept (`str(exc)`), and those of its `__cause__`; `at` ('model.py:12') is shown in the
    printed program. `value`: a 0-d tensor whose Python value, when the op runs, is the
    exception's one argument (`KeyError(7)` of the run's key)."""
    if STATE.builder is None:
        raise exc if value is None else type(exc)(value.item())
    attrs = {"error": error_name(type(exc)), "message": _message(exc), "at": at,
             **_argument(exc)}
    cause, context = exc.__cause__, exc.__context__
    if cause is not None:  # (`raise E(...) from err`: err's class and message)
        attrs.update(cause=error_name(type(cause)), cause_message=_message(cause))
    if context is not None:  # (and the exception it was raised while handling)
        attrs.update(context="cause") if context is cause else attrs.update(
            context=error_name(type(context)), context_message=_message(context))
    if cause is None and exc.__suppress_context__:  # (`raise E(...) from None`)
        attrs["suppress"] = True
    state = STATE_AT_RAISE[0]()
    held = [] if state is None else list(state[1])
    if value is not None:  # (the argument, the run's: held last, after the state's values)
        attrs["value_at"] = len(held)  # (`exc` made without it: no message)
        held.append(value)
    if state is None and not held:
        bind(RAISE, (), attrs)
    else:
        bind(RAISE, (held,), {**attrs, **({} if state is None else {"state": state[0]})})
