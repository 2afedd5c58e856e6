"""`to_static` and `StaticFunction`: convert once, trace once per input signature, run the
program; in an eager training loop a call is one autograd op.

    >>> import runtime as rt, d2s
    >>> @d2s.to_static
    ... def f(x):
    ...     if rt.mean(x) > 0:
    ...         return x * 2
    ...     return -x
    >>> f(rt.to_tensor([1.0, 2.0])).tolist(), f(rt.to_tensor([-1.0, -2.0])).tolist()
    ([2.0, 4.0], [1.0, 2.0])
    >>> len(f.program_cache)
    1

The cache key is: for each tensor argument its shape (or its InputSpec's shape, with -1 for
dynamic dims), dtype and stop_gradient; the values of the other arguments; the Layer instance
and its training flag.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import types
import warnings
import weakref

import runtime as rt
from runtime.static import InputSpec

from . import errors, fallback, fast_call, report, transpile
from .call_policy import ENABLED as _ENABLED  # (the switch converted calls read too)
from .function_spec import FunctionSpec, TraceTarget
from .program_cache import ConcreteProgram, ProgramCache, build_program, has_hooks


def enable_to_static(flag: bool) -> None:
    """Globally switch conversion on or off; off, StaticFunctions run the original eager code
    (for debugging with ordinary tools).

    >>> import d2s
    >>> d2s.enable_to_static(False); d2s.enable_to_static(True)
    """
    _ENABLED[0] = bool(flag)


def to_static_enabled() -> bool:
    return _ENABLED[0]


class StaticFunction:
    """A function (or a Layer's forward) converted to a static program on first call.

    Decorating a method works per instance: each object gets its own StaticFunction (and
    programs), created when the method is looked up on it.
    """

    __d2s_static_function__ = True  # (what converted calls recognise it by)

    def __init__(self, function, input_spec=None, full_graph: bool = True,
                 build_strategy=None, instance=None):
        if isinstance(function, StaticFunction):
            function = function._function
        _check_convertible(function)
        self._function = getattr(function, "__func__", function)
        self._instance = instance if instance is not None else getattr(function, "__self__",
                                                                        None)
        self._input_spec = list(input_spec) if input_spec is not None else None
        self.full_graph = full_graph
        self.build_strategy = build_strategy
        self.spec = FunctionSpec(self._function, self._input_spec, self._instance is not None,
                                 self.function_reads)
        self._cache = ProgramCache()
        self._targets: dict = {}  # training flag -> the TraceTarget of calls in that mode
        self._converted = None
        self._training = True
        self._restore = None  # (layer, its own `forward` before to_static(layer)): rollback()
        self._owners = weakref.WeakSet()  # classes it was read from or defined in: rollback()
        # where a method's per-instance StaticFunction is kept on its instance
        self._slot = f"__d2s_static_{self._function.__name__}_{id(self)}"
        self._classes = None  # class -> its StaticFunction (`@classmethod` over `@to_static`)
        self.__name__ = getattr(self._function, "__name__", "static_function")
        self.__qualname__ = getattr(self._function, "__qualname__", self.__name__)
        self.__doc__ = getattr(self._function, "__doc__", None)
        self.__wrapped__ = self._function

    # ---- binding to instances -------------------------------------------------------------
    def __set_name__(self, owner, name):
        self._owners.add(owner)

    def __get__(self, instance, owner=None):
        if instance is None or self._instance is not None:
            if instance is None and owner is not None:
                self._owners.add(owner)  # (`Net.forward.rollback()` restores it there)
            return self
        try:
            store = instance.__dict__
        except AttributeError:
            raise TypeError(
                f"d2s: cannot convert {self.__qualname__} for a {type(instance).__name__} "
                "object: it has no __dict__ (its class sets __slots__), so d2s has nowhere "
                "to keep its programs. Add '__dict__' to __slots__, or convert a plain "
                "function that takes the object as an argument.") from None
        if not isinstance(store, dict):  # a class: `@classmethod` over `@to_static`
            if self._classes is None:  # (a class's __dict__ is read-only)
                self._classes = weakref.WeakKeyDictionary()
            store = self._classes
            bound = store.get(instance)
        else:
            bound = store.get(self._slot)
        if bound is None or bound._instance is not instance:  # (a copy.copy of the object)
            bound = StaticFunction(self._function, self._input_spec, self.full_graph,
                                   self.build_strategy, instance=instance)
            # freed with the instance (no registry keeps it)
            store[instance if store is self._classes else self._slot] = bound
        return bound

    # ---- calling --------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        last = self._cache.last_entry
        if last is not None and not kwargs:
            fast = last.fast  # the latest signature's own call path (`fast_call.py`)
            if fast is not None:
                try:
                    out = fast(args)
                except Exception as e:  # noqa: BLE001  (re-raised, see below)
                    raise errors.for_user(e)
                if out is not fast_call.MISS:
                    return out
        if not _ENABLED[0] or not self.full_graph and fallback.runs_eagerly(self._function):
            return self.dygraph_function(*args, **kwargs)
        try:
            entry, tensors = self._cache.find(self._target(), args, kwargs)
        except Exception as e:  # noqa: BLE001  (re-raised, or full_graph=False runs eagerly)
            if self.full_graph:
                raise errors.for_user(e)
            failed = e
        else:
            if entry.fast is None and not kwargs:
                fast_call.prepare(self, entry, args)
            try:
                return entry.run(tensors)
            except Exception as e:  # noqa: BLE001  (re-raised: the same exception, at user lines)
                raise errors.for_user(e)
        return fallback.fall_back(self, failed, args, kwargs)

    def _converted_function(self):
        converted = self._converted
        if converted is None:
            converted = self._converted = transpile.convert(self._function)
        return converted

    def function_reads(self):
        """What the function reads from outside its arguments (`pyct/reads.py`)."""
        self._converted_function()
        return transpile.reads_of(self._function)

    def converted_callable(self):
        """The converted Python function (bound to the instance): what converted code calls
        when it calls this StaticFunction, so the call is traced inline."""
        fn = self._converted_function()
        if self._instance is not None:
            return fn.__get__(self._instance)
        return fn

    def trace_target(self) -> TraceTarget:
        """What a trace of a call needs to know of this function (`function_spec.py`): the
        converted function (recording the conversion report), what it reads, its mode."""
        return TraceTarget(
            spec=self.spec, function=self._function, instance=self._instance,
            qualname=self.__qualname__,
            converted=report.recording(self, self.converted_callable()),
            reads=self.function_reads(), training=self.training(),
            effect_places=self._cache.effect_places, number=len(self._cache) + 1)

    def _target(self) -> TraceTarget:
        """The TraceTarget of a call in the current mode, made (and the function converted)
        on the first such call: what it holds does not change after that."""
        training = self.training()
        target = self._targets.get(training)
        if target is None:
            target = self._targets[training] = self.trace_target()
        return target

    def training(self) -> bool:
        inst = self._instance
        return getattr(inst, "training", self._training) if inst is not None else \
            self._training

    # ---- public API -----------------------------------------------------------------------
    @property
    def instance(self):
        """The object a converted method is bound to (a Layer), or None."""
        return self._instance

    @property
    def function(self):
        """The plain (unbound) Python function that is converted."""
        return self._function

    @property
    def dygraph_function(self):
        """The original (eager) function, bound to the instance for methods."""
        if self._instance is not None:
            return self._function.__get__(self._instance)
        return self._function

    @property
    def code(self) -> str:
        """The converted Python source (str)."""
        return transpile.converted_source(self._function)

    @property
    def program_cache(self) -> ProgramCache:
        """The programs traced so far, one per input signature: `len()`,
        `.concrete_programs()`, `.last()` (key, ConcreteProgram of the latest call)."""
        return self._cache

    def get_traced_count(self) -> int:
        """How many programs have been traced (evicted ones included; `len(program_cache)`
        counts those kept)."""
        return self._cache.traces

    @property
    def concrete_program(self) -> ConcreteProgram:
        """The program of the latest call (or of the InputSpec when one was given)."""
        if self._cache.last_entry is None:
            if self._input_spec is None:
                raise RuntimeError(f"{self.__name__} has not been called yet and has no "
                                   "input_spec: call it or use get_concrete_program(...)")
            return self.get_concrete_program(*self._input_spec)
        return self._cache.last_entry.concrete

    def concrete_program_specify_input_spec(self, input_spec=None,
                                            with_hook: bool = False) -> ConcreteProgram:
        """The program for `input_spec` (a list of InputSpecs), as Paddle's method: where
        the function was converted with its own input_spec, that one is used (and `input_spec`
        must agree with it, else ValueError); with neither, the latest call's program.
        `with_hook=True` traces a Layer's forward hooks into it (what `d2s.save` writes).
        """
        spec = input_spec
        if self._input_spec is not None:
            if input_spec is not None:
                _respecified(self, input_spec)  # (raises where the two disagree)
                if list(input_spec) != self._input_spec:
                    warnings.warn(
                        f"d2s: {self.__qualname__} was converted with input_spec "
                        f"{self._input_spec}, which is used; {list(input_spec)} is ignored",
                        stacklevel=2)
            spec = self._input_spec
        if with_hook:
            return self.inference_program(spec)
        if spec is None:
            return self.concrete_program
        return self.get_concrete_program(*spec)

    @property
    def inputs(self) -> list:
        """The InputSpecs (shape, dtype, feed name) of the latest program's tensor arguments
        (not the Python numbers it keeps as program state, which are fed too)."""
        feeds = self.concrete_program.inputs
        state = {name for name, _, _ in self._cache.last_entry.numbers}
        return [InputSpec(v.shape, v.dtype, v.name) for v in feeds if v.name not in state]

    @property
    def outputs(self) -> list:
        """The latest program's output Variables (shape, dtype, name), in return order."""
        return list(self.concrete_program.outputs)

    def get_concrete_program(self, *args, **kwargs) -> ConcreteProgram:
        """The program for these arguments (tensors or InputSpecs), traced if needed."""
        try:
            return self._cache.lookup(self._target(), args, kwargs).concrete
        except Exception as e:  # noqa: BLE001  (re-raised, see __call__)
            raise errors.for_user(e)

    def inference_program(self, input_spec=None) -> ConcreteProgram:
        """The program `d2s.save` writes: the one for `input_spec` (or the latest call's), and
        for a Layer with forward hooks, the hooks that `layer(x)` runs around `forward` traced
        into it, so the saved model computes what the live Layer does."""
        if not has_hooks(self._instance):
            if input_spec is not None:
                return self.get_concrete_program(*input_spec)
            return self.concrete_program
        if input_spec is None:
            input_spec = self.inputs
        try:
            return build_program(self.trace_target(), tuple(input_spec), {}, with_hooks=True)
        except Exception as e:  # noqa: BLE001  (re-raised, see __call__)
            raise errors.for_user(e)

    def report(self, *args, **kwargs) -> report.ConversionReport:
        """The user's source with each if/while/for/and/or/assert/print/list marked by what
        it became while tracing, and why. With arguments (tensors or InputSpecs) it traces for
        them; without, it reports the latest trace (or traces the input_spec).

        >>> import runtime as rt, d2s
        >>> @d2s.to_static
        ... def f(x):
        ...     return x * 2 if rt.mean(x) > 0 else x
        >>> 'graph op (cond)' in str(f.report(rt.ones([2])))
        True
        """
        rec = report.latest(self)
        if args or kwargs or rec is None:
            if not (args or kwargs) and self._input_spec is None:
                raise RuntimeError(f"{self.__name__} has not been traced yet: call it, or pass "
                                   "example inputs (tensors or InputSpecs) to report()")
            try:
                build_program(self.trace_target(), args or tuple(self._input_spec), kwargs)
            except Exception as e:  # noqa: BLE001  (re-raised, see __call__)
                raise errors.for_user(e)
            rec = report.latest(self)
        return report.render(self._function, rec)

    def report_html(self, *args, layout: str = "auto", **kwargs) -> str:
        """`report(...)` as one self-contained HTML page, with the converted code, the program
        drawn, the program cache and timings (`d2s/report_html.py`; loaded on first use)."""
        from .report_html import render_page
        return render_page(self, args or tuple(self._input_spec or ()), kwargs, layout)

    def rollback(self):
        """Undo the conversion where this StaticFunction is stored and return the eager
        function (bound to the instance for a method), as Paddle's `rollback()` does:

        - on an instance (`net.infer = to_static(net.infer)`, `to_static(net)`): the
          instance's attribute is the plain bound method again;
        - a method converted in its class body, rolled back through an instance
          (`net.forward.rollback()`): that instance's method is plain, others stay converted;
        - on a class (`Net.forward = to_static(Net.forward)`, then `Net.forward.rollback()`):
          the class holds the plain function again, for every instance.

        A plain function is not rebound where it is stored: `f = f.rollback()`.

        >>> import runtime as rt, d2s
        >>> class Net(rt.nn.Layer):
        ...     def infer(self, x):
        ...         return x * 2
        >>> net = Net()
        >>> net.infer = d2s.to_static(net.infer)
        >>> net.infer.rollback()(rt.ones([1])).tolist(), type(net.infer).__name__
        ([2.0], 'method')
        """
        instance = self._instance
        if instance is None:
            for owner in list(self._owners):
                for name, value in list(vars(owner).items()):
                    if value is self:
                        setattr(owner, name, self._function)
            return self._function
        store = getattr(instance, "__dict__", None)
        if isinstance(store, dict):
            self._restore_on(instance, store)
        return self.dygraph_function

    def _restore_on(self, instance, store: dict) -> None:
        """`rollback()` of a method: each attribute of `instance` holding this
        StaticFunction goes back to what was there (the class's plain method shows through),
        or to the eager bound method where the class has nothing plain under that name."""
        eager = self.dygraph_function
        for name in [k for k, v in store.items() if v is self]:
            del store[name]
            if name == self._slot:
                continue
            if self._restore is not None and name == "forward":  # to_static(layer)
                if self._restore[1] is not None:
                    store[name] = self._restore[1]
            elif inspect.getattr_static(type(instance), name, None) is not self._function:
                store[name] = eager
        self._restore = None
        name = self._function.__name__  # converted in the class body: shadow it here
        in_class = inspect.getattr_static(type(instance), name, None)
        if isinstance(in_class, StaticFunction) and in_class._function is self._function \
                and name not in store:
            store[name] = eager

    def train(self):
        self._training = True
        if self._instance is not None and hasattr(self._instance, "train"):
            self._instance.train()
        return self

    def eval(self):
        self._training = False
        if self._instance is not None and hasattr(self._instance, "eval"):
            self._instance.eval()
        return self

    def __repr__(self):
        return f"<StaticFunction {self.__qualname__}>"

    def __reduce__(self):
        # Pickled as what it converts (the function by its module and name), its options,
        # instance and mode; programs, compiled code and caches are not: the copy traces again
        # on its first call (as a deep copy does).
        return (_unpickled, (_reference(self._function), self._input_spec, self.full_graph,
                             self.build_strategy, self._instance),
                {"_training": self._training, "_restore": self._restore})

    def __deepcopy__(self, memo):
        # A deep copy of an object holding its converted method: a fresh StaticFunction for
        # the copy (programs are traced again, for the copy's own parameters).
        instance = memo.get(id(self._instance), self._instance)
        return StaticFunction(self._function, self._input_spec, self.full_graph,
                              self.build_strategy, instance=instance)


def _reference(function):
    """(module, qualified name) of a function defined at a module's or class's top level (its
    name may now hold its StaticFunction), else the function itself."""
    qualname = getattr(function, "__qualname__", "<locals>")
    module = getattr(function, "__module__", None)
    return function if module is None or "<locals>" in qualname else (module, qualname)


def _unpickled(reference, input_spec, full_graph, build_strategy, instance):
    function = reference
    if isinstance(reference, tuple):
        function = importlib.import_module(reference[0])
        for part in reference[1].split("."):
            function = getattr(function, part)
    if isinstance(function, StaticFunction):
        if instance is None and function._instance is None:
            return function  # a module's decorated function: that one, like a pickled function
        function = function._function
    return StaticFunction(function, input_spec, full_graph, build_strategy, instance=instance)


def to_static(function=None, input_spec=None, full_graph: bool = True, build_strategy=None,
              backend=None):
    """Convert a function, a method or a Layer to a static program (see the module doc).

    Works as `@to_static`, `@to_static(input_spec=[...])`, `to_static(fn)` and
    `to_static(layer)` (converts the layer's forward in place and returns the layer).
    `backend` is Paddle 3's compiler choice: only None (d2s's own executor) is provided.
    """
    if backend is not None:
        raise NotImplementedError(
            f"d2s.to_static: backend={backend!r} is not provided; programs run on d2s's own "
            "executor (backend=None)")
    def decorate(fn):
        if isinstance(fn, rt.nn.Layer):
            own = fn.__dict__.get("forward")
            converted = own if isinstance(own, StaticFunction) else None
            if converted is not None and input_spec is None:
                return fn
            method = converted or inspect.getattr_static(type(fn), "forward")
            sf = StaticFunction(type(fn).forward, _respecified(method, input_spec), full_graph,
                                build_strategy, instance=fn)
            sf._restore = converted._restore if converted is not None else (fn, own)
            fn.__dict__["forward"] = sf
            return fn
        if isinstance(fn, StaticFunction):
            if input_spec is None:
                return fn
            return StaticFunction(fn._function, _respecified(fn, input_spec), full_graph,
                                  build_strategy, instance=fn._instance)
        return StaticFunction(fn, input_spec, full_graph, build_strategy)

    if function is None:
        return decorate
    return decorate(function)


def _respecified(converted, input_spec) -> list | None:
    """The input_spec of `converted` converted again with `input_spec`: the new one where
    the two agree (the same dtype and rank per argument, each dim equal or dynamic in one),
    else a ValueError saying which argument differs."""
    old = converted._input_spec if isinstance(converted, StaticFunction) else None
    if input_spec is None or old is None:
        return old if input_spec is None else list(input_spec)
    new = list(input_spec)
    for i in range(min(len(old), len(new))):
        why = _spec_conflict(old[i], new[i])
        if why is not None:
            raise ValueError(
                f"d2s.to_static: {converted.__qualname__} was converted with input_spec "
                f"{old}; the new input_spec {new} cannot replace it: argument {i} {why}. "
                "Roll the conversion back first (f.rollback()), or convert the eager "
                "function with the new spec (d2s.to_static(f.dygraph_function, "
                "input_spec=...)).")
    return new


def _spec_conflict(old, new) -> str | None:
    """Why two specs of one argument cannot both describe it (None when they can)."""
    if not (isinstance(old, InputSpec) and isinstance(new, InputSpec)):
        return None if old == new else f"was {old!r}, now {new!r}"
    if old.dtype != new.dtype:
        return f"was {old.dtype.name}, now {new.dtype.name}"
    if len(old.shape) != len(new.shape):
        return f"had {len(old.shape)} dims, now {len(new.shape)}"
    for k, (a, b) in enumerate(zip(old.shape, new.shape)):
        if a != b and a >= 0 and b >= 0:
            return f"had {a} in dim {k}, now {b}"
    return None


def _check_convertible(fn) -> None:
    """Refuse at decoration what has no Python source of its own to convert."""
    target = getattr(fn, "__func__", fn)
    if isinstance(target, types.FunctionType):
        return
    what = ("a built-in function" if isinstance(target, (types.BuiltinFunctionType,
                                                         types.BuiltinMethodType))
            else "a functools.partial" if isinstance(target, functools.partial)
            else "a class" if isinstance(target, type)
            else f"a callable {type(target).__name__} object" if callable(target)
            else f"a {type(target).__name__}")
    hint = ("convert the function it wraps and bind the arguments inside it"
            if isinstance(target, functools.partial)
            else "decorate its __call__ / forward method, or pass a Layer instance"
            if callable(target) and not isinstance(target, type)
            else "decorate the method (forward) instead, or pass an instance of a Layer"
            if isinstance(target, type) else "decorate a Python function or method")
    raise TypeError(f"d2s.to_static: cannot convert {what} ({target!r}): only Python "
                    f"functions and methods have source to convert; {hint}.")


__all__ = ["StaticFunction", "build_program", "enable_to_static", "to_static"]
