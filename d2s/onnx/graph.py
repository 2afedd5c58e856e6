"""Building ONNX graphs from a `Program`: one `Graph` per ONNX graph (the model's, and one
per `If` branch / `Loop` body), IR names mapped to ONNX value names, constants as
initializers of the top graph, and `OpArgs`, the view of one IR op a converter works from.

Every ONNX value name is unique in the whole model (ONNX requires it across nested graphs),
so a block emitted twice (a `while` condition, before the loop and inside its body) gets fresh
names the second time.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from runtime.program import origin as _origin

# runtime dtype name -> ONNX element type
ELEM = {"float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
        "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "int8": TensorProto.INT8,
        "int16": TensorProto.INT16, "int32": TensorProto.INT32, "int64": TensorProto.INT64,
        "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL}


class OnnxExportError(ValueError):
    """A program (or one of its ops) that ONNX cannot express; names the op and user line."""


def op_error(program, op, message: str) -> OnnxExportError:
    where = _origin.format_origin(program.origin_of(op))
    return OnnxExportError(f"ONNX export: op `{op.type}`: {message}\n{where}")


class _Missing:
    """An IR output that has no ONNX value (e.g. max_pool2d's argmax indices)."""

    def __init__(self, op, why: str):
        self.op, self.why = op, why


class Exporter:
    """State shared by all graphs of one model."""

    def __init__(self, program, used: set):
        self.program = program
        self.used = used  # IR names read anywhere (op inputs, block results, fetches)
        self.names: set = set()
        self.initializers: list = []
        self._consts: dict = {}
        self.seq_of_length: dict = {}  # ONNX name of SequenceLength(s) -> s

    def fresh(self, hint: str) -> str:
        base = hint or "v"
        name, n = base, 0
        while name in self.names:
            n += 1
            name = f"{base}#{n}"
        self.names.add(name)
        return name

    def const(self, value, dtype) -> str:
        a = np.asarray(value, dtype=dtype)
        key = (a.dtype.str, a.shape, a.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self._consts[key] = self.fresh("const")
            self.initializers.append(numpy_helper.from_array(a, name))
        return name

    def initializer(self, name: str, array: np.ndarray) -> str:
        self.names.add(name)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name


class Graph:
    """The nodes of one ONNX graph, and IR name -> ONNX name for the values it sees."""

    def __init__(self, exp: Exporter, parent: Graph | None = None):
        self.exp = exp
        self.parent = parent
        self.nodes: list = []
        self.env: dict = {}
        self.op = None  # the IR op being converted (node names and errors)

    def lookup(self, name: str):
        g = self
        while g is not None:
            v = g.env.get(name)
            if v is not None:
                return v
            g = g.parent
        raise OnnxExportError(f"ONNX export: the program reads {name!r} before defining it")

    def node(self, op_type: str, inputs: list, n_out: int = 1, hint: str | None = None,
             domain: str = "", **attrs) -> list:
        outs = [self.exp.fresh(hint or op_type.lower()) for _ in range(n_out)]
        label = self.exp.fresh(f"{self.op.type if self.op is not None else 'graph'}/{op_type}")
        n = helper.make_node(op_type, list(inputs), outs, name=label, domain=domain, **attrs)
        if self.op is not None:
            o = self.exp.program.origin_of(self.op)
            if o is not None:
                n.doc_string = f"{o[0]}:{o[1]}"
        self.nodes.append(n)
        return outs

    def one(self, op_type: str, inputs: list, hint: str | None = None, **attrs) -> str:
        return self.node(op_type, inputs, 1, hint, **attrs)[0]

    def const(self, value, dtype) -> str:
        return self.exp.const(value, dtype)

    def ints(self, values) -> str:
        return self.exp.const(np.asarray(values, np.int64).reshape(-1), np.int64)

    def scalar_int64(self, name: str, dtype) -> str:
        """`name` (a one-element integer tensor) as an int64 scalar."""
        if dtype.name != "int64":
            name = self.one("Cast", [name], to=TensorProto.INT64)
        return self.one("Reshape", [name, self.ints([])])


def value_info(name: str, var, shape: bool = True, dim_prefix: str | None = None):
    """A ValueInfoProto for an IR variable: element type, and its static shape (unknown dims as
    named dims `dim_prefix_k` when given, else left unknown)."""
    elem = ELEM[var.dtype.name]
    if var.kind == "array":
        return helper.make_tensor_sequence_value_info(name, elem, None)
    if not shape or var.static_shape is None:
        return helper.make_tensor_value_info(name, elem, None)
    dims = [d if d >= 0 else (f"{dim_prefix}_{k}" if dim_prefix else None)
            for k, d in enumerate(var.static_shape)]
    return helper.make_tensor_value_info(name, elem, dims)


class OpArgs:
    """One IR op as its converter sees it: ONNX names of its inputs, their IR types, literals."""

    def __init__(self, graph: Graph, op, block):
        self.g, self.op, self.block = graph, op, block
        self.attrs = op.attrs

    # -- inputs --
    def __len__(self):
        return len(self.op.inputs)

    def ir(self, i: int):
        return self.op.inputs[i] if i < len(self.op.inputs) else None

    def is_tensor(self, i: int) -> bool:
        return self.ir(i).__class__ is str

    def name(self, i: int) -> str:
        x = self.ir(i)
        if x.__class__ is not str:
            raise self.error(f"input {i} must be a tensor, got the constant {x!r}")
        return self.resolve(x)

    def resolve(self, irname: str) -> str:
        v = self.g.lookup(irname)
        if isinstance(v, _Missing):
            raise op_error(self.g.exp.program, self.op, f"reads {irname!r}, output of "
                           f"`{v.op.type}` that ONNX export does not produce ({v.why})")
        return v

    def var(self, irname: str):
        return self.block.var(irname)

    def dtype(self, i: int):
        x = self.ir(i)
        return self.var(x).dtype if x.__class__ is str else None

    def shape(self, i: int):
        """The static shape of tensor input i (-1 for unknown dims)."""
        return self.var(self.ir(i)).static_shape

    def rank(self, i: int) -> int:
        s = self.shape(i)
        if s is None:
            raise self.error(f"input {i} has an unknown rank")
        return len(s)

    def tensor(self, i: int, dtype=None) -> str:
        """Input i as an ONNX value of `dtype` (a runtime DType; default: its own): tensors are
        cast when their dtype differs, literals become constants."""
        x = self.ir(i)
        if x.__class__ is str:
            name = self.resolve(x)
            if dtype is not None and self.var(x).dtype is not dtype:
                name = self.g.one("Cast", [name], to=ELEM[dtype.name])
            return name
        if dtype is None:
            raise self.error(f"input {i} is the constant {x!r} and its dtype is not known")
        if isinstance(x, list):
            raise self.error(f"input {i} is a list; a tensor was expected")
        value = getattr(x, "value", x)
        return self.g.const(value, dtype.np)

    def names(self, i: int) -> list:
        """Input i, a list of tensors, as ONNX names."""
        return [self.resolve(t) for t in self.ir(i)]

    # -- outputs --
    def out_var(self, k: int = 0):
        return self.block.var(self.op.outputs[k])

    def out_dtype(self, k: int = 0):
        return self.out_var(k).dtype

    def out_shape(self, k: int = 0):
        return self.out_var(k).static_shape

    def out_used(self, k: int) -> bool:
        return self.op.outputs[k] in self.g.exp.used

    def error(self, message: str) -> OnnxExportError:
        return op_error(self.g.exp.program, self.op, message)
