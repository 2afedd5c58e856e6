"""`DataParallel`: the same model on every rank, each on its share of the batch, gradients
averaged after backward so every rank takes the same optimizer step.

At construction every rank's parameters and buffers are compared (names, shapes, dtypes)
across ranks, then overwritten with rank 0's values, so training starts from one model.
"""
from __future__ import annotations

import contextlib
import json

import numpy as np

from .. import backend
from ..nn.layer import Layer
from ..ops.registry import STATE
from .env import engine
from .errors import DistributedError
from .reducer import GradientReducer


class DataParallel(Layer):
    """Train `layers` data-parallel over the ranks `init_parallel_env` joined.

    `comm_buffer_size` / `last_comm_buffer_size` (MB) size the gradient buckets;
    `find_unused_parameters=True` lets a step leave some parameters without a gradient (the
    forward's graph is walked each step to find them). In a world of one it is a plain
    wrapper.

    >>> import runtime as rt
    >>> rt.distributed.init_parallel_env()
    ParallelEnv(rank=0, world_size=1, backend='single', device='cpu')
    >>> model = rt.distributed.DataParallel(rt.nn.Linear(4, 2))
    >>> loss = model(rt.ones([3, 4])).sum()
    >>> loss.backward()
    >>> list(model.state_dict())
    ['weight', 'bias']
    """

    def __init__(self, layers: Layer, strategy=None, comm_buffer_size: float = 25,
                 last_comm_buffer_size: float = 1, find_unused_parameters: bool = False,
                 group=None):
        super().__init__()
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel wraps a Layer, got {type(layers).__name__}")
        if group is not None:
            raise DistributedError("DataParallel: groups are not supported (pass group=None)")
        self._layers = layers
        self.find_unused_parameters = bool(find_unused_parameters)
        eng = engine()
        self._reducer = None
        if eng.size > 1:
            check_same_model(layers, eng)
            sync_params_buffers(layers, eng)
            named = [(n, p) for n, p in layers.named_parameters() if p.trainable]
            self._reducer = GradientReducer(named, eng, comm_buffer_size,
                                            last_comm_buffer_size)

    def forward(self, *inputs, **kwargs):
        if STATE.builder is not None:
            raise DistributedError(
                "DataParallel cannot be converted or called inside a @to_static function: it "
                "averages gradients eagerly around each call. Convert the wrapped model "
                "instead: DataParallel(d2s.to_static(model)).")
        reducer = self._reducer
        if reducer is not None:
            reducer.check_previous_step()
        outputs = self._layers(*inputs, **kwargs)
        if reducer is not None and self.find_unused_parameters and STATE.grad_enabled \
                and reducer.sync:
            reducer.mark_unused(outputs)
        return outputs

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside keep their gradients local (gradient accumulation); the
        next backward outside averages everything accumulated."""
        reducer = self._reducer
        if reducer is None:
            yield
            return
        previous, reducer.sync = reducer.sync, False
        try:
            yield
        finally:
            reducer.sync = previous

    def state_dict(self, *args, **kwargs):
        return self._layers.state_dict(*args, **kwargs)

    def set_state_dict(self, *args, **kwargs):
        return self._layers.set_state_dict(*args, **kwargs)

    set_dict = set_state_dict
    load_dict = set_state_dict


def describe(layer: Layer) -> list:
    """[name, shape, dtype] of every parameter and buffer: what must match across ranks."""
    entries = [["param " + n, list(p.shape), p.dtype.name] for n, p in layer.named_parameters()]
    entries += [["buffer " + n, list(b.shape), b.dtype.name] for n, b in layer.named_buffers()]
    return entries


def check_same_model(layer: Layer, eng) -> None:
    """Raise on every rank, with the same message, if any rank's parameters differ from rank
    0's in names, shapes or dtypes (gathered as JSON text: no pickling)."""
    host = getattr(eng, "mpi", eng)  # metadata travels over MPI even when NCCL moves tensors
    mine = np.frombuffer(json.dumps(describe(layer)).encode(), dtype=np.uint8)
    lengths = host.all_gather(np.array([mine.size], dtype=np.int64))[:, 0]
    padded = np.zeros(int(lengths.max()), dtype=np.uint8)
    padded[:mine.size] = mine
    texts = host.all_gather(padded)
    models = [json.loads(texts[r, :int(n)].tobytes().decode()) for r, n in enumerate(lengths)]
    reference = models[0]
    for rank, model in enumerate(models[1:], start=1):
        if model == reference:
            continue
        ref = {e[0]: e for e in reference}
        other = {e[0]: e for e in model}
        for name, entry in ref.items():
            if name not in other:
                why = f"{name} exists on rank 0 but not on rank {rank}"
                break
            if entry != other[name]:
                why = (f"{name} has shape {entry[1]} ({entry[2]}) on rank 0 but "
                       f"{other[name][1]} ({other[name][2]}) on rank {rank}")
                break
        else:
            extra = [n for n in other if n not in ref] or ["(order)"]
            why = f"{extra[0]} exists on rank {rank} but not on rank 0"
        raise DistributedError(
            f"DataParallel: the ranks built different models: {why}. Every rank must construct "
            "the same model (same configuration and sizes) before wrapping it.")


def sync_params_buffers(layer: Layer, eng, src: int = 0) -> None:
    """Overwrite every parameter and buffer with rank `src`'s values, one broadcast per
    dtype."""
    tensors = [p for _, p in layer.named_parameters()] + [b for _, b in layer.named_buffers()]
    by_dtype: dict = {}
    for t in tensors:
        by_dtype.setdefault(t._data.dtype.str, []).append(t)
    xp = backend.XP
    for group in by_dtype.values():
        flat = xp.concatenate([xp.ascontiguousarray(t._data).reshape(-1) for t in group])
        flat = eng.broadcast(flat.view(np.uint8), src).view(flat.dtype)  # bytes: any dtype
        offset = 0
        for t in group:
            t.set_value(flat[offset:offset + t.size].reshape(t._data.shape).copy())
            offset += t.size
