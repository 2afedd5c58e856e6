"""`Program` -> ONNX `ModelProto`: blocks become graphs, `cond` an `If`, `while` a `Loop`,
tensor arrays ONNX sequences; every other op goes through the table in `ops.py`."""
from __future__ import annotations

from onnx import TensorProto, helper

from runtime.ops import registry
from runtime.program.ir import used_names

from . import ops as _ops
from . import ops_nn, ops_shape  # noqa: F401  (register their converters)
from .graph import ELEM, Exporter, Graph, OnnxExportError, OpArgs, _Missing, op_error, \
    value_info

OPSET = 18
PRODUCER = "d2s"


def mapped_ops() -> list:
    """The registered ops the exporter maps, sorted."""
    return sorted(n for n in set(_ops.TABLE) | set(CONTROL) if n in registry.OPS)


def emit_block(g: Graph, block) -> None:
    for op in block.ops:
        emit_op(g, op, block)


def emit_op(g: Graph, op, block) -> None:
    prev, g.op = g.op, op
    try:
        special = CONTROL.get(op.type)
        if special is not None:
            outs = special(g, op, block)
        else:
            conv = _ops.TABLE.get(op.type)
            if conv is None:
                raise op_error(g.exp.program, op, "ONNX has no equivalent that this exporter "
                               "maps (ops it maps: " + ", ".join(mapped_ops()) + ")")
            outs = conv(OpArgs(g, op, block))
            if isinstance(outs, str):
                outs = [outs]
    except OnnxExportError:
        raise
    except (ValueError, TypeError, KeyError, IndexError) as e:
        raise op_error(g.exp.program, op, f"cannot be exported: {type(e).__name__}: {e}") \
            from None
    finally:
        g.op = prev
    if len(outs) != len(op.outputs):
        raise op_error(g.exp.program, op, f"the converter gave {len(outs)} outputs for "
                       f"{len(op.outputs)}")
    for name, out in zip(op.outputs, outs):
        g.env[name] = out if out is not None else _Missing(op, "not computed")


def _result(g: Graph, r, var) -> str:
    """A block result (a name or a literal) as a fresh ONNX value of the subgraph."""
    if r.__class__ is str:
        args = OpArgs(g, g.op, None)
        return g.one("Identity", [args.resolve(r)], hint=r)
    return g.one("Identity", [g.const(getattr(r, "value", r), var.dtype.np)])


def _subgraph(g: Graph, block, result_vars, name: str) -> tuple:
    """(GraphProto, its Graph) for `block`, a graph without inputs (it reads the enclosing
    graphs' values by name) whose outputs are the block's results."""
    sub = Graph(g.exp, parent=g)
    sub.op = g.op
    emit_block(sub, block)
    outs = [_result(sub, r, v) for r, v in zip(block.results, result_vars)]
    out_infos = [value_info(o, v, shape=False) for o, v in zip(outs, result_vars)]
    return helper.make_graph(sub.nodes, g.exp.fresh(name), [], out_infos), sub


def _scalar_bool(g: Graph, name: str, var) -> str:
    if var.dtype.name != "bool":
        name = g.one("Cast", [name], to=TensorProto.BOOL)
    return g.one("Reshape", [name, g.ints([])])  # a [1] predicate is legal in the IR


def emit_cond(g: Graph, op, block) -> list:
    args = OpArgs(g, op, block)
    pred = _scalar_bool(g, args.name(0), args.var(op.inputs[0]))
    out_vars = [block.var(n) for n in op.outputs]
    then_b, else_b = (g.exp.program.blocks[i] for i in op.blocks)
    then_g, _ = _subgraph(g, then_b, out_vars, "then")
    else_g, _ = _subgraph(g, else_b, out_vars, "else")
    return g.node("If", [pred], len(op.outputs), hint="if", then_branch=then_g,
                  else_branch=else_g)


def _inline_cond(g: Graph, cblk, values: list) -> str:
    """Run the loop-condition block in `g` with its params bound to `values`."""
    for p, v in zip(cblk.params, values):
        g.env[p] = v
    emit_block(g, cblk)
    r = cblk.results[0]
    if r.__class__ is not str:
        return g.const(bool(r), bool)
    return _scalar_bool(g, OpArgs(g, g.op, cblk).resolve(r), cblk.var(r))


def emit_while(g: Graph, op, block) -> list:
    args = OpArgs(g, op, block)
    program = g.exp.program
    cblk, bblk = (program.blocks[i] for i in op.blocks)
    n = len(bblk.params)
    if len(op.outputs) != n:
        raise args.error("this loop saves per-iteration values for a gradient (a training "
                         "program); export the inference program (eval mode, no backward)")
    init = [args.tensor(i) if args.is_tensor(i) else
            args.tensor(i, bblk.var(bblk.params[i]).dtype) for i in range(n)]
    cond0 = _inline_cond(g, cblk, init)
    body = Graph(g.exp, parent=g)
    body.op = op
    it = helper.make_tensor_value_info(g.exp.fresh("iter"), TensorProto.INT64, [])
    cin = helper.make_tensor_value_info(g.exp.fresh("cond_in"), TensorProto.BOOL, [])
    carried = []
    for p in bblk.params:
        info = value_info(g.exp.fresh(p), bblk.var(p), shape=False)
        body.env[p] = info.name
        carried.append(info)
    emit_block(body, bblk)
    new = []
    for r, p in zip(bblk.results, bblk.params):
        new.append(OpArgs(body, op, bblk).resolve(r) if r.__class__ is str
                   else body.const(getattr(r, "value", r), bblk.var(p).dtype.np))
    cond = _inline_cond(body, cblk, new)
    outs = [body.one("Identity", [cond], hint="cond_out")]
    outs += [body.one("Identity", [v], hint=p) for v, p in zip(new, bblk.params)]
    out_infos = [helper.make_tensor_value_info(outs[0], TensorProto.BOOL, [])]
    out_infos += [value_info(o, bblk.var(p), shape=False) for o, p in zip(outs[1:], bblk.params)]
    graph = helper.make_graph(body.nodes, g.exp.fresh("loop_body"), [it, cin] + carried,
                              out_infos)
    return g.node("Loop", ["", cond0] + init, n, hint="loop", body=graph)


def emit_switch(g: Graph, op, block) -> list:
    args = OpArgs(g, op, block)
    index = g.scalar_int64(args.name(0), args.dtype(0))
    out_vars = [block.var(n) for n in op.outputs]
    blocks = [g.exp.program.blocks[i] for i in op.blocks]
    cases = list(op.attrs["cases"])

    def chain(graph: Graph, k: int) -> list:
        """The outputs of `if index == cases[k]: block k else chain(k + 1)` in `graph`."""
        if k == len(cases):
            sub, _ = _subgraph(graph, blocks[k], out_vars, "default")
            return _inline(graph, sub, len(out_vars))
        hit = graph.one("Equal", [index, graph.const(int(cases[k]), "int64")])
        then_g, _ = _subgraph(graph, blocks[k], out_vars, f"case_{cases[k]}")
        rest = Graph(graph.exp, parent=graph)
        rest.op = op
        outs = chain(rest, k + 1)
        infos = [value_info(rest.one("Identity", [o]), v, shape=False)
                 for o, v in zip(outs, out_vars)]
        else_g = helper.make_graph(rest.nodes, graph.exp.fresh("else"), [], infos)
        return graph.node("If", [hit], len(out_vars), hint="switch", then_branch=then_g,
                          else_branch=else_g)

    return chain(g, 0)


def _inline(graph: Graph, sub, n: int) -> list:
    """The nodes of a subgraph with no inputs appended to `graph`; its outputs' names."""
    graph.nodes.extend(sub.node)
    return [o.name for o in sub.output][:n]


# ---- tensor arrays as ONNX sequences ---------------------------------------------------------

def emit_create_array(g: Graph, op, block) -> list:
    dtype = block.var(op.outputs[0]).dtype
    return g.node("SequenceEmpty", [], hint="array", dtype=ELEM[dtype.name])


def emit_array_write(g: Graph, op, block) -> list:
    args = OpArgs(g, op, block)
    x, arr = args.name(0), args.name(2)
    i = args.name(1)
    if g.exp.seq_of_length.get(i) == arr:  # arr[len(arr)] = x: an append
        return g.node("SequenceInsert", [arr, x], hint="array")
    i = g.scalar_int64(i, args.dtype(1))
    length = g.one("SequenceLength", [arr])
    append = g.one("Equal", [i, length])
    dtype = ELEM[block.var(op.outputs[0]).dtype.name]
    a_name, b_name = g.exp.fresh("appended"), g.exp.fresh("replaced")
    then_g = helper.make_graph(
        [helper.make_node("SequenceInsert", [arr, x, i], [a_name])], g.exp.fresh("append"),
        [], [helper.make_tensor_sequence_value_info(a_name, dtype, None)])
    erased = g.exp.fresh("erased")
    else_g = helper.make_graph(
        [helper.make_node("SequenceErase", [arr, i], [erased]),
         helper.make_node("SequenceInsert", [erased, x, i], [b_name])], g.exp.fresh("replace"),
        [], [helper.make_tensor_sequence_value_info(b_name, dtype, None)])
    return g.node("If", [append], hint="array", then_branch=then_g, else_branch=else_g)


def emit_array_length(g: Graph, op, block) -> list:
    arr = OpArgs(g, op, block).name(0)
    out = g.one("SequenceLength", [arr], hint="length")
    g.exp.seq_of_length[out] = arr
    return [out]


def emit_array_read(g: Graph, op, block) -> list:
    args = OpArgs(g, op, block)
    return g.node("SequenceAt", [args.name(0), g.scalar_int64(args.name(1), args.dtype(1))])


def emit_array_stack(g: Graph, op, block) -> list:
    args = OpArgs(g, op, block)
    return g.node("ConcatFromSequence", [args.name(0)], axis=int(op.attrs.get("axis", 0)),
                  new_axis=1)


def emit_array_concat(g: Graph, op, block) -> list:
    args = OpArgs(g, op, block)
    return g.node("ConcatFromSequence", [args.name(0)], axis=int(op.attrs.get("axis", 0)))


CONTROL = {"cond": emit_cond, "while": emit_while, "switch_case": emit_switch,
           "create_array": emit_create_array, "array_write": emit_array_write,
           "array_length": emit_array_length, "array_read": emit_array_read,
           "array_stack": emit_array_stack, "array_concat": emit_array_concat}


# ---- the model -------------------------------------------------------------------------------

def program_to_onnx(program, feeds: list, fetches: list, graph_name: str = "d2s"):
    """A `ModelProto` computing `fetches` from `feeds` (IR names); None dims become named
    dynamic axes `INPUT_k`."""
    exp = Exporter(program, used_names(program, fetches))
    g = Graph(exp)
    gblk = program.global_block()
    inputs = []
    for name in feeds:
        exp.names.add(name)
        g.env[name] = name
        inputs.append(value_info(name, gblk.vars[name], dim_prefix=name))
    for name, tensor in program.tensors.items():
        if name in exp.used and name in gblk.vars:
            g.env[name] = exp.initializer(name, tensor.numpy())
    emit_block(g, gblk)
    outputs = []
    for k, name in enumerate(fetches):
        src = g.lookup(name)
        if isinstance(src, _Missing):
            raise op_error(program, src.op, "its output is fetched but not exported")
        out = exp.fresh(f"output_{k}")
        g.nodes.append(helper.make_node("Identity", [src], [out], name=exp.fresh("fetch")))
        outputs.append(value_info(out, gblk.var(name), dim_prefix=f"output_{k}"))
    graph = helper.make_graph(g.nodes, graph_name, inputs, outputs, exp.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name=PRODUCER)
    model.ir_version = min(model.ir_version, 9)
    return model
