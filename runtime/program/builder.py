"""Building programs: what `registry.bind` does while a program is being built.

Static mode means "a builder is active" (`registry.STATE.builder`). `program_guard` and
`enable_static` install one. `Builder.bind` runs the op's shape/dtype inference, appends an
`Op` to the current block and returns new `Variable`s. Eager Tensors met as inputs
(parameters, buffers, constants) become persistable variables that refer to that very Tensor
object, so the executor reads `tensor._data` when it runs and eager and static training share
the same arrays.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import backend, core
from ..dtypes import promote_scalar
from ..ops import registry
from ..ops.logic import logical_and, logical_or
from ..ops.math import cast
from ..ops.registry import STATE, Meta, OpDef
from . import freed_graph, leaf_reads
from .bind_inputs import plain as _plain
from .bind_inputs import stop_when as _stop_when
from .bind_inputs import stops_gradient as _stops_gradient
from . import origin as _origin
from . import zero_division
from .debug_ops import raise_error
from .ir import Block, Literal, Op, Program
from .variable import Variable

_SCALARS = (int, float, bool)


class Training(NamedTuple):
    """What training does while a program is built, installed from the layer above
    (`train_step.py`): each is called with the builder active."""

    gradients: Callable  # (targets, inputs, target_gradients=None) -> [Variable | None]
    grad_of: Callable  # (tensor) -> its gradient at this point of the program
    set_grad: Callable  # (tensor, value or None) -> None
    backward: Callable  # (loss, grad_tensor, retain_graph) -> None


_TRAINING: list = [None]


def install_training(training: Training) -> None:
    """Set what `Builder.gradients`, `tensor_grad`, `set_tensor_grad` and `backward` do."""
    _TRAINING[0] = training


def _training() -> Training:
    training = _TRAINING[0]
    if training is None:
        raise RuntimeError("internal error: no training layer installed in the builder "
                           "(runtime.program imports train_step, which installs it)")
    return training


class Builder:
    """Appends ops to `block` (the current block of `program`)."""

    def __init__(self, program: Program):
        self.program = program
        self.block: Block = program.global_block()
        # Backward passes read forward values across sibling blocks (a grad branch reads the
        # forward branch's values); plain user code may not.
        self.cross_block_reads = False
        # Whether ops built now record gradients: `rt.no_grad()` / `rt.enable_grad()` entered
        # while this builder is active set it, whatever the caller's eager mode was (a
        # program traced under an eager `no_grad` still trains).
        self.grad_enabled = True

    # ---- the bind hook --------------------------------------------------------------------
    def bind(self, op: OpDef, inputs, attrs: dict):
        for x in inputs:  # a value with a read check (`Variable.on_read`) runs it first,
            # when user code reads it (a backward pass reading the forward value does not)
            if isinstance(x, Variable) and x.on_read is not None and not self.cross_block_reads:
                x.on_read()
        if op.name in zero_division.OPS:  # (Python's ZeroDivisionError, before dividing)
            inputs = zero_division.check(op.name, inputs)
        plain = _plain(inputs) if STATE.amp is None else None
        given, weak = inputs, False  # (given: before numbers are cast to a tensor's dtype)
        if plain is None:
            if STATE.amp is not None:
                inputs = given = STATE.amp.cast_inputs(op, inputs)
            scalars = [getattr(x, "python_scalar", False) for x in inputs]
            if any(scalars):
                inputs, weak = _scalar_inputs(op, inputs, scalars)
            out = op.infer(*[registry.meta_of(x) for x in inputs], **attrs)
        else:
            out = op.infer(*plain[0], **attrs)
        multi = isinstance(out, tuple) and not isinstance(out, Meta)
        metas = out if multi else (out,)
        refs = [self.ref(x) for x in inputs]
        stop = op.nondiff or not self.grad_enabled or (
            plain[1] if plain is not None else all(_stops_gradient(x) for x in inputs))
        block = self.block
        # (an integer or bool result has no gradient path, as in eager mode)
        outs = tuple(block.new_var(self.program.fresh_name(), m.shape, m.dtype,
                                   stop_gradient=stop or m.dtype.kind in "iub")
                     for m in metas)
        self.append(op.name, refs, [o.name for o in outs], attrs)
        flag = None if stop else _stop_when(inputs)
        if flag is not None:  # (inputs with a gradient path on some runs only)
            for o in outs:
                if not o.stop_gradient:
                    o.stop_when = flag
        if weak:
            note = next((x.python_number_note for x in inputs
                         if getattr(x, "python_number_note", None)), None)
            flag = _float_when(op, inputs, outs)
            unknown = any(getattr(x, "number_type_unknown", False) for x in inputs)
            for o in outs:
                o.python_scalar = True
                o.python_number_note = note
                o.number_type_unknown = unknown
                if flag is not None:
                    o.float_when = flag
                    o.float_arrays = tuple(a for x in inputs for a in getattr(
                        x, "float_arrays", ()))
        if not self.grad_enabled:
            for o in outs:  # built under `no_grad`: a constant for backward, as in eager
                o.stop_gradient = True
        if not multi and (plain[2] if plain is not None else any(
                getattr(x, "number_when", None) is not None for x in inputs)):
            self._number_or_tensor(op, given, attrs, outs[0])
        return outs if multi else outs[0]

    def _number_or_tensor(self, op: OpDef, inputs, attrs: dict, out) -> None:
        """Python arithmetic on a value that is a Python number on some runs only
        (`Variable.number_when`: `b = 1`, then `b = b + x` under a tensor `if`) and Python
        numbers: on those runs eager code computes a Python number, which the op computed on
        the number (`number_value`) gives; the result carries the and of the flags."""
        tensors = [x for x in inputs if isinstance(x, Variable) and x.number_when is None
                   and not x.python_scalar]
        if tensors and op.name in _PROMOTING:  # (eager's result: a tensor on every run,
            _same_dtype_as_number(tensors[0], inputs, out)  # of this dtype on all?)
        if op.name not in _NUMBER_OPS or tensors:
            return
        flags = [x.number_when for x in inputs if getattr(x, "number_when", None) is not None]
        numbers = [x.number_value if getattr(x, "number_when", None) is not None else x
                   for x in inputs]
        value = self.bind(op, numbers, attrs)
        flag = flags[0]
        for f in flags[1:]:
            flag = logical_and(flag, f)
        out.number_when, out.number_value = flag, value

    # ---- training, built from above ------------------------------------------------------
    # Autograd and Tensor sit below this layer and reach the program being built through the
    # active builder; what they ask for (`rt.grad`, `tensor.grad`, `loss.backward()`) is built
    # on this class's public API by `backward.py` and `train_step.py`, which install it here
    # (`install_training`) when `runtime.program` is imported.
    def gradients(self, targets, inputs, target_gradients=None, allow_unused=True) -> list:
        """Append the backward ops of `rt.grad` called while this program is built."""
        return _training().gradients(targets, inputs, target_gradients=target_gradients,
                                     allow_unused=allow_unused)

    def check_not_freed(self, targets, error: BaseException) -> None:
        """`rt.grad` while building: where the graph behind `targets` holds a value that a
        gradient taken before it in this block (or a block around it) freed, `error` is
        raised as eager code raises it: now at the top level, where the block runs
        otherwise (its branch is taken, its loop runs a trip)."""
        program, idx = self.program, self.block.idx
        walked = freed_graph.walked(program, targets)
        origin = _origin.capture(2)
        # (a later trip's or branch's gradient may walk what this one frees: the program's
        # runs tell, `freed_loops`)
        program.gradient_walks.append(freed_graph.GradientWalk(
            idx, len(self.block.ops), walked, origin, False))
        if not freed_graph.frees_again(program, walked, idx):
            return
        if idx == 0:
            raise error
        raise_error(error, at=_origin.short(origin))

    def free_graph(self, targets) -> None:
        """`rt.grad` without `retain_graph` while building: the graph behind `targets` is
        freed, as eager autograd frees it, on the runs that take it (`freed_graph.py`)."""
        freed_graph.free_graph(self.program, targets, self.block.idx)
        walks = self.program.gradient_walks
        if walks and walks[-1].block == self.block.idx:  # (the gradient just checked)
            walks[-1] = walks[-1]._replace(frees=True)

    def overwrote(self, handle, writer=None) -> None:
        """`handle`'s value is about to be written in place (`x[i] = v` by the op that makes
        `writer`, `rt.assign(v, output=x)`): ops that read it before give no gradient, as
        eager's version check says (`freed_graph.overwrite`)."""
        freed_graph.overwrite(self.program, handle.name, self.block.idx,
                              None if writer is None else writer.name)

    def tensor_grad(self, tensor):
        """`tensor.grad` read while building."""
        return _training().grad_of(tensor)

    def set_tensor_grad(self, tensor, value) -> None:
        """`tensor.grad = value` / `tensor.clear_grad()` while building."""
        _training().set_grad(tensor, value)

    def backward(self, loss: Variable, grad_tensor=None, retain_graph: bool = False) -> None:
        """`loss.backward()` on a Variable while building (a converted training step)."""
        _training().backward(loss, grad_tensor, retain_graph)

    def made_parameter(self, tensor) -> None:
        """Note a Parameter made while this program is built, with the user's line that
        made it (`Program.made_parameters`)."""
        self.program.made_parameters[tensor.name] = _origin.capture(2)

    def append(self, type: str, inputs: list, outputs: list, attrs: dict,
               blocks: tuple = ()) -> Op:
        """Append an op to the current block, stamped with the user's source location."""
        op = Op(type, inputs, outputs, attrs, blocks,
                self.program.add_origin(_origin.capture(2)))
        self.block.ops.append(op)
        self.program.version += 1
        return op

    # ---- inputs ---------------------------------------------------------------------------
    def ref(self, x):
        """The op-input form of `x`: a variable name, a literal, or a list of those."""
        cls = x.__class__
        if cls is Variable:
            self._check_visible(x)
            return x.name
        if cls in _SCALARS or x is None:
            return x
        if isinstance(x, (list, tuple)):
            return [self.ref(t) for t in x]
        if isinstance(x, core.TensorBase):
            return self.capture(x)
        if isinstance(x, Variable):
            self._check_visible(x)
            return x.name
        if isinstance(x, (np.ndarray, np.generic)):
            # a constant lives on the current device, like an eager to_tensor
            return self.capture(core.wrap(backend.XP.asarray(x)))
        return Literal(x)

    def _check_visible(self, v: Variable) -> None:
        vb = v.block
        if vb is self.block or vb.idx == 0 and vb.program is self.program:
            return
        if vb.program is not self.program:
            raise ValueError(
                f"Variable '{v.name}' belongs to another program than the one being built; "
                "build each program inside its own program_guard and do not mix their values")
        if self.cross_block_reads or vb in self.block.ancestors():
            return
        raise ValueError(
            f"Variable '{v.name}' ({v.type_str()}) was created inside a cond/while/switch_case "
            "block and is not visible here; return it from that branch or loop body to use "
            "it outside")

    def capture(self, tensor) -> str:
        """The variable a read of an eager Tensor reads: its persistable (created on first
        use), or the newest value the program wrote into it (`leaf_reads`: of a trainable)."""
        name = self._persistable(tensor)
        latest = self.program._latest.get((self.block.idx, name))
        if latest is None:
            return name
        if self.block.idx == 0 and not tensor.stop_gradient and (
                latest not in self.program.leaf_reads):
            return leaf_reads.leaf_read(self, name, latest)
        return latest

    def _persistable(self, tensor) -> str:
        prog = self.program
        name = prog._captured.get(id(tensor))
        if name is None or prog.tensors.get(name) is not tensor:
            base = tensor.name
            name = base if base and base not in prog._names else prog.fresh_name(
                (base or "const") + "_")
            prog.tensors[name] = tensor
            prog._captured[id(tensor)] = name
            prog.global_block().new_var(name, tuple(tensor._data.shape), tensor.dtype,
                                        persistable=True, stop_gradient=tensor.stop_gradient)
        return name

    def variable_of(self, x) -> Variable:
        """`x` as a Variable of this program (capturing a Tensor or literal as a constant)."""
        if isinstance(x, Variable):
            return x
        if not isinstance(x, core.TensorBase):
            x = core.constant(x)
        return self.block.var(self.capture(x))

    def reads(self, tensor) -> bool:
        """Whether the program built so far reads the eager Tensor `tensor` (captured it)."""
        prog = self.program
        name = prog._captured.get(id(tensor))
        return name is not None and prog.tensors.get(name) is tensor

    def recapture(self, tensor, private) -> None:
        """The program reads `private` (of the same shape and dtype) where it read the
        captured `tensor`."""
        prog = self.program
        name = prog._captured.pop(id(tensor))
        prog.tensors[name] = private
        prog._captured[id(private)] = name

    # ---- persistable writes ---------------------------------------------------------------
    def wrote(self, tensor) -> bool:
        """Whether the program built so far overwrites `tensor` (`write_persistable`) before
        the point being built, on the same path (`_runs_before_here`). Its eager array still
        holds the value from before."""
        prog = self.program
        name = prog._captured.get(id(tensor))
        if name is None or prog.tensors.get(name) is not tensor:
            return False
        chain = {b.idx for b in self.block.ancestors()}
        return any(key[1] == name and _runs_before_here(prog.block(key[0]), chain)
                   for key in prog._latest)

    def write_persistable(self, tensor, value) -> None:
        """`tensor.set_value(value)` while building: an op that overwrites the tensor's array
        when the program runs (optimizer updates, BatchNorm running statistics)."""
        target = self.program.global_block().vars[self._persistable(tensor)]
        value = self.variable_of(value)
        if value.dtype != target.dtype:
            value = value.astype(target.dtype)
        _check_same_shape(target, value)
        self.append("write_persistable", [target.name, value.name], [], {})
        self.program._latest[(self.block.idx, target.name)] = value.name

    # ---- blocks ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def sub_block(self):
        """Build into a new child block of the current one (a branch or loop body)."""
        blk = self.program.new_block(self.block.idx)
        latest = self.program._latest
        if latest:  # a discarded scratch block had this index: forget its persistable writes
            for key in [k for k in latest if k[0] == blk.idx]:
                del latest[key]
        prev, self.block = self.block, blk
        try:
            yield blk
        finally:
            self.block = prev

    @contextlib.contextmanager
    def scratch(self):
        """Trace into a new child block, then discard it with every block, variable, name,
        capture and origin it made (what a probe trace needs: learn the types a body gives,
        leave the program as it was).

        >>> import runtime as rt
        >>> from runtime.program.builder import current_builder
        >>> main = rt.static.Program()
        >>> with rt.static.program_guard(main):
        ...     x = rt.static.data('x', [2], 'float32')
        ...     with current_builder().scratch():
        ...         probe = rt.tanh(x)
        ...     y = rt.tanh(x)
        >>> probe.dtype.name, y.name, main.num_ops(), len(main.blocks)
        ('float32', 't0', 1, 1)
        """
        program = self.program
        saved = (len(program.blocks), set(program._names), dict(program._counters),
                 dict(program.tensors), dict(program._captured), dict(program._latest),
                 len(program.origins), program.version)
        outer = self.block
        try:
            with self.sub_block() as blk:
                yield blk
        finally:
            self.block = outer
            mark, names, counters, tensors, captured, latest, n_origins, version = saved
            program.drop_blocks(mark)
            program._names, program._counters = names, counters
            program.tensors, program._captured, program._latest = tensors, captured, latest
            for origin in program.origins[n_origins:]:
                program._origin_ids.pop(origin, None)
            del program.origins[n_origins:]
            program.version = version + 1


_INDEXING = frozenset({"getitem", "getitem_grad", "setitem"})
# ops where `tensor <op> python_number` takes eager's scalar promotion; elsewhere (`reshape`,
# `full`, `arange`, `expand`...) an integer standing for a Python int is a size or an index
_ARITHMETIC = frozenset({
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "maximum",
    "minimum", "equal", "not_equal", "less_than", "less_equal", "greater_than",
    "greater_equal", "where", "clip", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor"})
# ops Python numbers have (their results on numbers: `Builder._number_or_tensor`)
_NUMBER_OPS = _ARITHMETIC | {"neg", "abs", "logical_not", "scale"}
# ... of those, the ones whose result has the promoted dtype of the operands
_PROMOTING = frozenset({"add", "subtract", "multiply", "floor_divide", "remainder", "pow",
                        "maximum", "minimum"})


def _same_dtype_as_number(tensor, inputs, out) -> None:
    """A tensor combined with a value that is a Python number on some runs only: eager code
    gives the tensor's dtype with a number (`int64 tensor * 2`) and the promoted one with a
    tensor there; a TypeError where the two differ (one program value has one dtype)."""
    for x in inputs:
        if getattr(x, "number_when", None) is None:
            continue
        kind = x.number_value.dtype
        number = {"b": "bool", "i": "int", "u": "int"}.get(kind.kind, "float")
        on_number = promote_scalar(tensor.dtype, True if number == "bool" else
                                   0 if number == "int" else 0.0)
        if on_number != out.dtype:
            def a(d):
                return ("an " if d.name[0] in "aeiou" else "a ") + d.name
            raise TypeError(
                f"a value that is a Python {number} on some runs and {a(x.dtype)} tensor on "
                f"others (a tensor `if`, or a loop whose condition is a tensor, decided "
                f"which) is combined with {a(tensor.dtype)} tensor: eager code gives "
                f"{a(on_number)} tensor on the runs where it is the number and "
                f"{a(out.dtype)} one on the others, which one program value cannot give. "
                f"Cast the {tensor.dtype.name} tensor (`rt.cast(t, '{out.dtype.name}')`), or "
                f"make the value {a(x.dtype)} tensor on every path.")
# ops that make a real tensor of a Python number (`rt.cast`, `rt.to_tensor(n)`, `rt.full`,
# `rt.zeros_like`...): their output does not stand for a Python number
# (and ops that build a tensor of sizes or items: `rt.arange(n)`, `rt.stack([a, b])`...)
_MAKES_TENSOR = frozenset({
    "cast", "assign", "full", "full_like", "arange", "linspace", "eye", "reshape", "expand",
    "tile", "stack", "concat", "one_hot", "randint", "uniform_random", "gaussian_random",
    "randperm", "unsqueeze"})


# `[0] * i` with `i` standing for a Python int is a list repetition in eager code
_REPEATED_SEQUENCE = (
    "a Python list or tuple repeated by a number known only when the program runs (`[0] * i` "
    "where i is the counter of a loop over a tensor range, or a size read from a tensor): "
    "its length would be a run-time value, which a Python list cannot have. Make a tensor of "
    "that length instead (rt.full([i], 0) or rt.zeros([i])), or give the loop a Python int "
    "bound so that i stays a Python int")


def _scalar_inputs(op: OpDef, inputs, scalars: list):
    """Inputs standing for Python numbers (`Variable.python_scalar`) combined with real
    tensors take the dtype eager mode gives `tensor <op> python_number`; the outputs of an op
    whose tensor inputs all stand for Python numbers stand for one too (not `_MAKES_TENSOR`: an
    explicit cast or `to_tensor` makes a real tensor)."""
    if op.name == "multiply" and any(isinstance(x, (list, tuple)) for x in inputs):
        raise TypeError(_REPEATED_SEQUENCE)
    tensors = [x for x, w in zip(inputs, scalars)
               if not w and hasattr(x, "dtype") and not isinstance(x, (list, tuple))]
    if not tensors:
        # int scalar <op> float, and int / int: a float64, as Python's (not a size:
        # `rt.full([i], 1.0)` keeps `i` an int)
        if op.name not in _MAKES_TENSOR and (op.name == "divide" or any(
                isinstance(x, float) for x in inputs)):
            inputs = [cast(x, "float64") if w and x.dtype.kind != "f" and not (
                op.name == "where" and i == 0) else x  # (`where`'s condition selects)
                for i, (x, w) in enumerate(zip(inputs, scalars))]
        return inputs, op.name not in _MAKES_TENSOR
    other = tensors[0].dtype
    out = list(inputs)
    for i, (x, w) in enumerate(zip(inputs, scalars)):
        if w and op.name not in _ARITHMETIC and x.dtype.kind in "iub":
            continue  # an index or a size standing for a Python int stays one
        if w and op.name == "where" and i == 0:
            continue  # a Python bool as the condition (`'k' in d`) selects, it is no operand
        if w:
            sample = True if x.dtype.kind == "b" else 0.0 if x.dtype.kind == "f" else 0
            target = promote_scalar(other, sample)
            if target != x.dtype:
                out[i] = cast(x, target)
    return out, False


def _float_when(op: OpDef, inputs, outs):
    """Arithmetic on Python numbers one of which is a float on some runs only
    (`Variable.float_when`): the result is a float where any operand is (`/`: always)."""
    flags = [getattr(x, "float_when", None) for x in inputs]
    if all(f is None for f in flags) or op.name == "divide" or len(outs) != 1 or \
            not outs[0].dtype.is_floating:
        return None
    known = [f if f is not None else x.dtype.kind == "f" if hasattr(x, "dtype") else
             isinstance(x, float) for f, x in zip(flags, inputs)]
    if any(f is True for f in known):
        return None
    flag = None
    for f in known:
        if f is not False:
            flag = f if flag is None else logical_or(flag, f)
    return flag


def _runs_before_here(block, chain: set) -> bool:
    """Whether the ops of `block` run before the point being built (whose block and enclosing
    blocks have the indices `chain`) on the same path: `block` encloses that point, or it is
    a branch or loop body of a construct already appended (not a sibling branch of one still
    being traced, which another run takes)."""
    inner = None
    for b in block.ancestors():
        if b.idx in chain:
            return inner is None or any(inner.idx in op.blocks for op in b.ops)
        inner = b
    return False


def _check_same_shape(target: Variable, value: Variable) -> None:
    a, b = target._static_shape, value._static_shape
    if len(a) != len(b) or any(x != y and x != -1 and y != -1 for x, y in zip(a, b)):
        raise ValueError(f"set_value: value has shape {list(b)} but the persistable "
                         f"'{target.name}' has shape {list(a)}")


# ---- mode switches --------------------------------------------------------------------------

_default_main = [Program()]
_default_startup = [Program()]


def default_main_program() -> Program:
    """The program ops are appended to: the one of the innermost `program_guard`, else the
    global default program (used by `enable_static`)."""
    b = STATE.builder
    return b.program if b is not None else _default_main[0]


def default_startup_program() -> Program:
    return _default_startup[0]


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None):
    """Build ops into `main_program` inside the `with` block (static mode).

    Parameters are created eagerly (initialised at creation), so `startup_program` is accepted
    for Paddle compatibility and stays empty.

    >>> import runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [2], 'float32')
    ...     y = x * 3.0
    >>> main.num_ops()
    1
    """
    if not isinstance(main_program, Program):
        raise TypeError(f"program_guard: main_program must be a Program, got "
                        f"{type(main_program).__name__}")
    prev = STATE.builder
    prev_main = _default_main[0]
    STATE.builder = Builder(main_program)
    _default_main[0] = main_program
    try:
        yield
    finally:
        STATE.builder = prev
        _default_main[0] = prev_main


def enable_static() -> None:
    """Switch to static mode: ops build into `default_main_program()` until
    `disable_static()`."""
    if STATE.builder is None:
        STATE.builder = Builder(_default_main[0])


def disable_static() -> None:
    """Back to eager (dynamic) mode."""
    STATE.builder = None


def in_dynamic_mode() -> bool:
    return STATE.builder is None


def current_builder() -> Builder:
    """The active builder; raises when no program is being built."""
    b = STATE.builder
    if b is None:
        raise RuntimeError("no static program is being built: use `with "
                           "rt.static.program_guard(program):` or rt.enable_static()")
    return b
