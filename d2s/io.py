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

from runtime import core


def as_static_function(obj):
    """The StaticFunction that saving/exporting `obj` (a Layer, a function or a
    StaticFunction) traces."""
    import runtime as rt

    from .static_function import StaticFunction, to_static
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
    eval mode unless `training` (`save_spec.inference_mode`)."""
    from .save_spec import any_batch_spec, inference_mode
    sf = as_static_function(layer_or_function)
    with inference_mode(sf.instance, training, what):
        if input_spec is None:  # the batch dimension is saved as unknown (Paddle's behaviour)
            input_spec = any_batch_spec(sf)
        return sf.inference_program(input_spec)


def save(layer_or_function, path: str, input_spec=None, training: bool = False,
         **configs) -> None:
    """Write `path.json` (the program for `input_spec`, pruned to its outputs) and `path.npz`
    (the parameters), creating missing folders, atomically. Without `input_spec` the latest
    call's inputs are used, with the batch dimension unknown.

    A Layer is saved as an inference model: it (and every sublayer) is in eval mode for the
    trace and put back afterwards, with a warning when it was in training mode.
    `training=True` saves the training-mode program instead (Dropout random, BatchNorm on
    the batch's statistics)."""
    import runtime as rt
    from runtime.program.model_file import check_target
    check_target(os.fspath(path))  # an unusable path fails before the trace
    concrete = inference_program(layer_or_function, input_spec, training)
    rt.static.save_inference_model(path, concrete.inputs, concrete.outputs,
                                   program=concrete.main_program)


class TranslatedLayer:
    """A loaded inference model: call it with tensors (in the order of the saved inputs);
    eval only. `.program()` is the loaded Program and `.code` its printed form."""

    def __init__(self, program, feed_names: list, fetch_vars: list):
        import runtime as rt
        self._program = program
        self._feeds = list(feed_names)
        self._fetch = tuple(v.name for v in fetch_vars)
        self._compiled = rt.static.Executor().compiled(program, self._fetch)
        self.training = False

    @property
    def feed_names(self) -> list:
        """The names of the inputs, in call order."""
        return list(self._feeds)

    @property
    def fetch_names(self) -> tuple:
        return self._fetch

    def __call__(self, *inputs):
        from runtime.tensor import wrap
        if len(inputs) != len(self._feeds):
            raise TypeError(f"this model takes {len(self._feeds)} inputs "
                            f"({', '.join(self._feeds)}), got {len(inputs)}")
        feed = {n: core.array_of(x) if isinstance(x, core.TensorBase) else x
                for n, x in zip(self._feeds, inputs)}
        try:
            arrays = self._compiled.fn(feed)
        except Exception as e:
            from runtime.program.executor import rewrite_error
            raise rewrite_error(e, self._compiled, self._program) from e
        outs = [wrap(a) for a in arrays]
        return outs[0] if len(outs) == 1 else outs

    forward = __call__

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


def load(path: str, **configs) -> TranslatedLayer:
    """Load what `save` wrote (reads data only; nothing from the files is executed). Any
    problem with `path.json` or `path.npz` raises `d2s.ModelFormatError` (a ValueError)."""
    import runtime as rt
    program, feeds, fetches = rt.static.load_inference_model(path)
    return TranslatedLayer(program, feeds, fetches)
