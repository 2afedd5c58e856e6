"""CUDA-graph capture of compiled programs (CuPy only; on with `D2S_CUDA_GRAPH=1`).

A small program on the GPU spends most of its time launching kernels from Python. Captured
once as a CUDA graph, each later call is a copy of its inputs into the graph's own buffers,
one launch, and a copy of its results out. `wrap(compiled, program)` puts the graph behind
`compiled.body` (which `compiled.fn` calls after checking its feeds) when the program can be
captured; every caller of a compiled program then uses it.

A replayed graph runs the kernels captured, on the buffers captured, and nothing else: the
Python code that issued them does not run again. So a program is captured only when that is
the whole of what it does:

- one block, no control flow (a tensor `if`/`while` reads its condition on the host), every
  shape static, not a whole training step (it writes the parameters) and not the backward
  part of a training call (it reads the values its forward saved, new arrays each call);
- no random op: a captured generator kernel (or upload of a host draw) would replay one draw;
- nothing in it copies to or from the host while capturing: CUDA refuses a synchronising
  call on a capturing stream, and `asarray`/`array` of host data (an upload, which a graph
  would replay from a staging buffer reused since) is refused here while capturing. A
  refused capture leaves the program running as it is, for good.

The program is run once as it is (a warm-up: kernels compile, cuBLAS starts, caches fill),
then captured on its own stream into a private memory pool, which no other allocation uses
while the graph lives (its intermediate buffers are the graph's). The parameters and
buffers the program reads are captured as the arrays they hold then: when one of them is
given a new array (not written in place), the graph is captured again. Results are copied
out on each call; the caller's current stream is ordered before and after the launch with
events, and a lock keeps threads from sharing the graph's buffers at once.
"""
from __future__ import annotations

import contextlib
import os
import threading

from .. import backend
from ..ops import registry
from .split import Slot

WARMUP_CALLS = 1  # calls run as they are before the capture
_REFUSED = object()  # a program whose capture failed
_CAPTURE_LOCK = threading.Lock()  # one capture at a time (the host-transfer guard is global)


def enabled() -> bool:
    """Whether programs are captured: `D2S_CUDA_GRAPH=1` and the array module is a CuPy
    with stream capture."""
    if os.environ.get("D2S_CUDA_GRAPH", "0") != "1":
        return False
    cuda = getattr(backend.XP, "cuda", None)
    stream = getattr(cuda, "Stream", None)
    return stream is not None and hasattr(stream, "begin_capture")


def refusal(program) -> str | None:
    """Why `program` cannot be captured (None: it can be tried)."""
    if len(program.blocks) != 1:
        return "it has control flow (a sub-block)"
    if getattr(program, "in_program_backward", False):
        return "it is a whole training step"
    block = program.global_block()
    for op in block.ops:
        opdef = registry.OPS.get(op.type)
        if opdef is None or opdef.random:
            return f"op {op.type!r} draws random numbers" if opdef else \
                f"op {op.type!r} is not a registered op"
    for v in block.vars.values():
        shape = getattr(v, "_static_shape", None)
        if shape is None or -1 in shape or getattr(v, "is_array", False):
            return f"{v.name} has no static shape"
    if any(isinstance(t, Slot) for t in program.tensors.values()):
        # a backward program: it reads the values its forward saved, new arrays each call
        return "it reads values saved by a forward call"
    return None


def wrap(compiled, program):
    """Put a graph behind `compiled.body` (and so `compiled.fn`) when capture is on and
    `program` can be captured; `compiled` as it was otherwise."""
    if not enabled() or compiled.body is None or refusal(program) is not None:
        return compiled
    body = GraphBody(compiled.body, list(program.tensors.values()))
    compiled.body = body
    compiled.fn.__globals__["_body"] = body  # `_run` calls `_body` by its global name
    return compiled


class GraphBody:
    """`body(*arrays)` through a CUDA graph (see the module doc)."""

    def __init__(self, plain, tensors):
        self.plain = plain
        self.tensors = tensors
        self.graph = None  # the _Graph, _REFUSED, or None before the capture
        self.calls = 0  # calls run as they are so far
        self.lock = threading.Lock()

    def __call__(self, *arrays):
        if self.graph is _REFUSED:
            return self.plain(*arrays)
        ndarray = backend.XP.ndarray
        for a in arrays:
            if a.__class__ is not ndarray:
                return self.plain(*arrays)
        with self.lock:
            graph = self.graph
            if graph is not None and not graph.current():
                graph = None  # a parameter holds a new array: capture again
            if graph is None:
                if self.calls < WARMUP_CALLS:
                    self.calls += 1
                    return self.plain(*arrays)
                graph = self.graph = _Graph.capture(self.plain, arrays, self.tensors) or _REFUSED
                if graph is _REFUSED:
                    return self.plain(*arrays)
            if not graph.fits(arrays):  # (a program's feeds have one shape and dtype each)
                return self.plain(*arrays)
            return graph.replay(arrays)

    @property
    def captured(self) -> bool:
        """Whether the program runs as a graph."""
        return self.graph is not None and self.graph is not _REFUSED


class _Graph:
    """One captured signature: its graph, stream, memory pool and buffers."""

    def __init__(self, graph, stream, pool, inputs, outputs, held):
        self.graph, self.stream, self.pool = graph, stream, pool
        self.inputs, self.outputs = inputs, outputs
        self.held = held  # (tensor, the array it held when captured)
        self.done = None  # event: the last launch has finished with the buffers
        self.copied = None  # event: the results of the last launch are copied out

    @classmethod
    def capture(cls, plain, arrays, tensors):
        """The graph of `plain` on arrays like `arrays`, or None when it cannot be captured
        (the stream is left usable, nothing is changed)."""
        xp = backend.XP
        cuda = xp.cuda
        held = tuple((t, t._data) for t in tensors)
        pool = cuda.MemoryPool()
        stream = cuda.Stream(non_blocking=True)
        with _CAPTURE_LOCK, cuda.using_allocator(pool.malloc):
            inputs = tuple(xp.empty(a.shape, a.dtype) for a in arrays)
            for buf, a in zip(inputs, arrays):  # (what a capture reads is this call's values)
                buf[...] = a
            with stream, _no_host_transfers(xp):
                stream.begin_capture()
                try:
                    outputs = plain(*inputs)
                except Exception:  # noqa: BLE001  (the program runs uncaptured instead)
                    outputs = None
                finally:
                    try:
                        graph = stream.end_capture()
                    except Exception:  # noqa: BLE001  (an invalidated capture)
                        graph = None
        if graph is None or outputs is None or not all(
                o.__class__ is xp.ndarray for o in outputs):
            return None
        return cls(graph, stream, pool, inputs, tuple(outputs), held)

    def current(self) -> bool:
        """Whether every captured parameter still holds the array captured."""
        return all(t._data is data for t, data in self.held)

    def fits(self, arrays) -> bool:
        return all(a.shape == b.shape and a.dtype == b.dtype
                   for a, b in zip(arrays, self.inputs))

    def replay(self, arrays):
        cuda = backend.XP.cuda
        cur = cuda.get_current_stream()
        if self.done is not None:
            cur.wait_event(self.done)  # the last launch has read the inputs
        for buf, a in zip(self.inputs, arrays):
            buf[...] = a
        self.stream.wait_event(cur.record())
        if self.copied is not None:
            self.stream.wait_event(self.copied)  # the last results are copied out
        self.graph.launch(stream=self.stream)
        self.done = self.stream.record()
        cur.wait_event(self.done)
        out = tuple(o.copy() for o in self.outputs)
        self.copied = cur.record()
        return out


_GUARD = threading.local()  # .on: this thread is capturing
_GUARDED = ("asarray", "array", "asanyarray", "ascontiguousarray")


@contextlib.contextmanager
def _no_host_transfers(xp):
    """While this thread captures, `xp.asarray` & co. refuse anything but a device array of
    `xp` (a host array or a Python number would be an upload the graph replays from a staging
    buffer). Other threads call through unchanged. (Called under `_CAPTURE_LOCK`.)"""
    saved = {name: getattr(xp, name) for name in _GUARDED if hasattr(xp, name)}

    def guarded(name, fn):
        def call(a, *args, **kwargs):
            if getattr(_GUARD, "on", False) and a.__class__ is not xp.ndarray:
                raise RuntimeError(f"{name} of host data while capturing a CUDA graph")
            return fn(a, *args, **kwargs)
        return call

    for name, fn in saved.items():
        setattr(xp, name, guarded(name, fn))
    _GUARD.on = True
    try:
        yield
    finally:
        _GUARD.on = False
        for name, fn in saved.items():
            setattr(xp, name, fn)
