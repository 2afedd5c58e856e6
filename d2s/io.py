"""`d2s.save` / `d2s.load`: a converted function or Layer as an inference model that needs no
Python source (the program as JSON plus its parameters, see `rt.static.save_inference_model`
and `runtime.program.model_file` for the format).

Saving creates missing folders and is atomic (a save that dies part-way never leaves a model
that loads with the wrong content). Loading checks both files and the whole program first: a
missing, truncated, damaged or edited file, or a parameter file of another save, raises
`d2s.ModelFormatError` naming the file, before anything runs. See docs/deployment.md.

    >>> import os, tempfile, runtime as rt, d2s
    >>> @d2s.to_static
    ... def f(x):
    ...     return rt.tanh(x) * 2 if rt.mean(x) > 0 else x
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'f')
    >>> d2s.save(f, prefix, input_spec=[d2s.InputSpec([None, 2])])
    >>> g = d2s.load(prefix)
    >>> g(rt.to_tensor([[-1.0, -2.0]])).tolist()
    [[-1.0, -2.0]]
"""
from __future__ import annotations

import os

import runtime as rt
from runtime import core, pytree
from runtime.program import model_structure, serialize
from runtime.program.executor import rewrite_error, with_cause
from runtime.program.passes import fold_batch_norm
from runtime.tensor import wrap

from . import errors, saved_outputs
from .program_cache import has_hooks
from .running import ConcreteProgram
from .save_spec import any_batch_spec, inference_mode
from .static_function import StaticFunction, to_static
from .tracing import trace
from .writeback import WithState


def as_static_function(obj):
    """The StaticFunction that saving/exporting `obj` (a Layer, a function or a
    StaticFunction) traces."""

    if isinstance(obj, rt.nn.Layer):
        forward = obj.__dict__.get("forward", getattr(obj, "forward", None))
        if isinstance(forward, StaticFunction):
            return forward
        return StaticFunction(type(obj).forward, instance=obj)
    return obj if isinstance(obj, StaticFunction) else to_static(obj)


def inference_program(layer_or_function, input_spec=None, training: bool = False,
                      what: str = "d2s.save"):
    """The ConcreteProgram that `save` (and `d2s.onnx.export`) writes: traced for `input_spec`
    (default: the latest call's, batch dimension unknown; see `save_spec`) with a Layer in
    eval mode unless `training` (`save_spec.inference_mode`). Its `.outputs` are the tensors
    the function returns, once each, and `.structure` nests the inputs and outputs
    (`runtime.program.model_structure`)."""
    sf = as_static_function(layer_or_function)
    with inference_mode(sf.instance, training, what):
        if input_spec is None:  # the batch dimension is saved as unknown (Paddle's behaviour)
            input_spec = any_batch_spec(sf)
        if input_spec is None:  # a plain function's latest program, as it was traced
            entry = sf.program_cache.last_entry
            return _with_structure(entry.concrete.main_program, entry.concrete.inputs,
                                   pytree.unflatten(entry.tree, entry.leaves), None)
        return _traced(sf, list(input_spec))


def _traced(sf, specs: list):
    try:  # (the Layer's own forward hooks traced in, as `layer(x)` runs them)
        traced = trace(sf.trace_target(), tuple(specs), {}, has_hooks(sf.instance),
                       state=False)
    except Exception as e:  # noqa: BLE001  (re-raised at the user's line, as a call does)
        raise errors.for_user(e)
    return _with_structure(traced.program, traced.feeds,
                           pytree.unflatten(traced.tree, traced.leaves), specs)


def _with_structure(program, feeds: list, out, args):
    """The ConcreteProgram of `program` whose outputs are the tensors in the returned `out`,
    with the structure of `args` (None: flat tensors) and of `out`."""

    if isinstance(out, WithState):  # (lists and dicts written back to the caller: not saved)
        out = out[0]
    outputs, node = saved_outputs.encode(out)
    inputs = [0]

    def argument(leaf):
        if core.is_eager_tensor(leaf) or hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            inputs[0] += 1
            return {"input": inputs[0] - 1}
        return {"value": leaf if leaf is None or isinstance(leaf, (bool, int, float, str))
                else repr(leaf)}

    structure = {"inputs": None, "outputs": node}
    nested = args is not None and any(pytree.is_container(a) for a in args)
    if nested:
        structure["inputs"] = [model_structure.encode(a, argument) for a in args]
        if inputs[0] != len(feeds):  # (a tensor given twice is fed once): flat inputs
            structure["inputs"] = None
    params = [t for t in program.tensors.values() if not t.stop_gradient]
    concrete = ConcreteProgram(program, list(feeds), outputs, params)
    concrete.structure = structure
    return concrete


def save(layer_or_function, path: str, input_spec=None, training: bool = False, *,
         optimize: bool = True, **configs) -> None:
    """Write `path.json` (the program for `input_spec`, pruned to its outputs) and `path.npz`
    (the parameters), creating missing folders, atomically. Without `input_spec` the latest
    call's inputs are used, with the batch dimension unknown.

    A Layer is saved as an inference model: it (and every sublayer) is in eval mode for the
    trace and put back afterwards, with a warning when it was in training mode.
    `training=True` saves the training-mode program instead (Dropout random, BatchNorm on
    the batch's statistics). `optimize` (the default) folds each eval-mode BatchNorm that
    follows a convolution or linear layer into that layer's weight and bias
    (`rt.static.passes.fold_batch_norm`); `optimize=False` saves the program as traced."""
    # (model_file takes ~50 ms to import: save and load load it)
    from runtime.program.model_file import check_target
    check_target(os.fspath(path))  # an unusable path fails before the trace
    concrete = inference_program(layer_or_function, input_spec, training)
    program = concrete.main_program
    if optimize:
        program = fold_batch_norm(program, keep=concrete.outputs)
    rt.static.save_inference_model(path, concrete.inputs, concrete.outputs, program=program,
                                   structure=stored_structure(concrete))


def stored_structure(concrete) -> dict | None:
    """What the model file records: nothing for flat tensors in and one tensor out."""
    inputs, outputs = concrete.structure["inputs"], concrete.structure["outputs"]
    if inputs is None and outputs == {"output": 0}:
        return None
    flat = [{"input": k} for k in range(len(concrete.inputs))]
    return {"inputs": flat if inputs is None else inputs, "outputs": outputs}


class TranslatedLayer:
    """A loaded inference model: call it as the saved function was called (tensors, and the
    lists, tuples and dicts of tensors it took), and it returns what the function returned
    (the same nesting); eval only. `.program()` is the loaded Program and `.code` its printed
    form."""

    def __init__(self, program, feed_names: list, fetch_vars: list, structure=None):
        self._program = program
        self._feeds = list(feed_names)
        self._fetch = tuple(v.name if not isinstance(v, str) else v for v in fetch_vars)
        self._structure = structure
        self._compiled = rt.static.Executor().compiled(program, self._fetch)
        self.training = False

    @property
    def feed_names(self) -> list:
        """The names of the inputs, in call order."""
        return list(self._feeds)

    @property
    def fetch_names(self) -> tuple:
        return self._fetch

    @property
    def structure(self) -> dict | None:
        """How the inputs and outputs nest (`runtime.program.model_structure`), or None for
        flat tensors in and one tensor (or a list of them) out."""
        return self._structure

    def __call__(self, *inputs):
        arrays = self.run_flat(*self._flat_inputs(inputs))
        outs = [wrap(a) if type(a) is not list else [wrap(x) for x in a] for a in arrays]
        if self._structure is not None:
            return model_structure.build(self._structure["outputs"], outs)
        return outs[0] if len(outs) == 1 else outs

    def _flat_inputs(self, inputs: tuple) -> list:
        """The call's tensors in feed order."""
        if self._structure is None:
            return list(inputs)
        nodes = self._structure["inputs"]
        if len(inputs) != len(nodes):
            raise TypeError(f"this model takes {len(nodes)} arguments, got {len(inputs)}")
        found: dict = {}
        for k, (node, value) in enumerate(zip(nodes, inputs)):
            model_structure.pick(node, value, f"argument {k}", found)
        return [found[k] for k in range(len(self._feeds))]

    def run_flat(self, *inputs) -> list:
        """The output arrays, in fetch order, for the inputs in feed order (tensors or
        arrays)."""
        if len(inputs) != len(self._feeds):
            raise TypeError(f"this model takes {len(self._feeds)} inputs "
                            f"({', '.join(self._feeds)}), got {len(inputs)}")
        feed = {n: core.array_of(x) if isinstance(x, core.TensorBase) else x
                for n, x in zip(self._feeds, inputs)}
        try:
            return self._compiled.fn(feed)
        except Exception as e:
            raise with_cause(rewrite_error(e, self._compiled, self._program), e)

    forward = __call__

    def __getstate__(self) -> dict:
        # the program as its saved form (its compiled code is rebuilt on unpickling)
        return {"program": serialize.program_to_dict(self._program),
                "tensors": dict(self._program.tensors), "feeds": self._feeds,
                "fetch": list(self._fetch), "structure": self._structure}

    def __setstate__(self, state: dict) -> None:
        program = serialize.program_from_dict(state["program"], state["tensors"])
        self.__init__(program, state["feeds"], state["fetch"], state["structure"])

    def program(self):
        return self._program

    @property
    def code(self) -> str:
        return str(self._program)

    def eval(self):
        return self

    def train(self):
        raise RuntimeError("a TranslatedLayer (a loaded inference model) runs in eval mode "
                           "only")


def load(path: str, max_result_bytes: int | None = None, **configs) -> TranslatedLayer:
    """Load what `save` wrote (reads data only; nothing from the files is executed). Any
    problem with `path.json` or `path.npz` raises `d2s.ModelFormatError` (a ValueError), as
    does an op whose result would take more than `max_result_bytes` (default
    `runtime.program.model_check.MAX_RESULT_BYTES`, 1 GiB)."""
    from runtime.program import model_file  # (~50 ms to import: see `save`)
    program, feeds, fetches, structure = model_file.load_structured(os.fspath(path),
                                                                    max_result_bytes)
    return TranslatedLayer(program, feeds, fetches, structure)
