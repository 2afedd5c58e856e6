"""Sequence decoding ops with no gradient: `gather_tree` (backtracking beam-search parents into
whole sequences) and `crf_decoding` (Viterbi decoding of a linear-chain CRF). Their kernels
loop over time steps on the host side of the array module (each step is one vector op)."""
from __future__ import annotations

from ..dtypes import int64
from . import infer as I
from .registry import Meta, OpError, OpTypeError, bind, register


# ---- gather_tree ----------------------------------------------------------------------------

def _gather_tree_kernel(xp, ids, parents):
    steps = ids.shape[0]
    out = xp.empty_like(ids)
    if steps == 0:
        return out
    batch = xp.arange(ids.shape[1])[:, None]
    out[steps - 1] = ids[steps - 1]
    parent = parents[steps - 1]
    for t in range(steps - 2, -1, -1):
        out[t] = ids[t][batch, parent]
        parent = parents[t][batch, parent]
    return out


def _gather_tree_infer(ids, parents):
    I.check_tensor("gather_tree", "ids", ids)
    I.check_tensor("gather_tree", "parents", parents)
    if len(ids.shape) != 3:
        raise OpError(f"gather_tree: ids must be 3-D [max_time, batch, beam], got shape "
                      f"{I.fmt(ids.shape)}")
    if len(parents.shape) != 3 or any(a != b and -1 not in (a, b)
                                      for a, b in zip(ids.shape, parents.shape)):
        raise OpError(f"gather_tree: ids has shape {I.fmt(ids.shape)} but parents has shape "
                      f"{I.fmt(parents.shape)}; they must be equal")
    for arg, m in (("ids", ids), ("parents", parents)):
        if m.dtype.name not in ("int32", "int64"):
            raise OpTypeError(f"gather_tree: {arg} must be int32 or int64, got {m.dtype.name}")
    return Meta(ids.shape, ids.dtype)


GATHER_TREE = register("gather_tree", kernel=_gather_tree_kernel, infer=_gather_tree_infer,
                       amp="keep", nondiff=True,
                       doc="Whole beam-search sequences from per-step ids and parent beams.")


def gather_tree(ids, parents):
    """The full sequences of a beam search: `ids` and `parents` are [max_time, batch, beam]
    (the token and the parent beam chosen at each step); the result follows the parents back
    from the last step (Paddle's `F.gather_tree`).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> ids = rt.to_tensor([[[2, 3]], [[4, 5]]])
    >>> parents = rt.to_tensor([[[0, 0]], [[1, 0]]])
    >>> F.gather_tree(ids, parents).tolist()
    [[[3, 2]], [[4, 5]]]
    """
    return bind(GATHER_TREE, (ids, parents), {})


# ---- crf_decoding (Viterbi) -----------------------------------------------------------------

def _viterbi_kernel(xp, emission, transition, length, label=None):
    batch, steps, tags = emission.shape
    if tuple(transition.shape) != (tags + 2, tags):
        raise ValueError("transition shape")  # the infer rule words the error
    start, stop, trans = transition[0], transition[1], transition[2:]
    length = length.reshape(-1).astype("int64")
    score = start[None, :] + emission[:, 0]  # [B, N]
    back = xp.zeros((batch, max(steps, 1), tags), "int64")
    for t in range(1, steps):
        cand = score[:, :, None] + trans[None]  # [B, from, to]
        best = cand.argmax(axis=1)
        new = cand.max(axis=1) + emission[:, t]
        live = (t < length)[:, None]
        score = xp.where(live, new, score)
        back[:, t] = xp.where(live, best, xp.arange(tags)[None, :])  # past the end: stay
    last = (score + stop[None, :]).argmax(axis=1)
    path = xp.zeros((batch, steps), "int64")
    rows = xp.arange(batch)
    for t in range(steps - 1, -1, -1):
        path[:, t] = last
        if t > 0:
            last = back[rows, t, last]
    valid = xp.arange(steps)[None, :] < length[:, None]
    path = xp.where(valid, path, 0)
    if label is not None:
        label = label.reshape(batch, steps).astype("int64")
        return xp.where(valid, (path == label).astype("int64"), 0)
    return path


def _viterbi_infer(emission, transition, length, label=None):
    for arg, m in (("input", emission), ("transition", transition), ("length", length)):
        I.check_tensor("crf_decoding", arg, m)
    if len(emission.shape) != 3:
        raise OpError(f"crf_decoding: input must be [batch, time, num_tags], got shape "
                      f"{I.fmt(emission.shape)}")
    tags = emission.shape[2]
    if len(transition.shape) != 2 or (tags != -1 and transition.shape[1] not in (-1, tags)) or (
            tags != -1 and transition.shape[0] not in (-1, tags + 2)):
        raise OpError(f"crf_decoding: transition must have shape [num_tags + 2, num_tags] = "
                      f"[{tags + 2}, {tags}], got {I.fmt(transition.shape)}")
    return Meta(emission.shape[:2], int64)


CRF_DECODING = register("crf_decoding", kernel=_viterbi_kernel, infer=_viterbi_infer,
                        amp="keep", nondiff=True,
                        doc="Viterbi path of a linear-chain CRF (rows 0/1 of transition: "
                            "start/end scores).")


def viterbi(emission, transition, length, label=None):
    """The op call behind `F.crf_decoding` (`length` a [batch] tensor)."""
    inputs = (emission, transition, length) if label is None else (
        emission, transition, length, label)
    return bind(CRF_DECODING, inputs, {})


METHODS: dict = {}
