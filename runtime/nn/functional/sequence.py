"""Sequence helpers with Paddle's names: `label_smooth`, `sequence_mask`, `gather_tree`, and a
linear-chain CRF (`linear_chain_crf` for the training loss, `crf_decoding` for Viterbi).

CRF conventions (Paddle's): `transition` is [num_tags + 2, num_tags]; row 0 holds the start
scores, row 1 the end scores, rows 2.. the score of moving from tag i to tag j. Sequences are
padded ([batch, time, num_tags]) with their lengths in `length` ([batch] or [batch, 1]).
"""
from __future__ import annotations

from ...core import is_variable
from ...dtypes import convert_dtype
from ...ops import creation as _creation
from ...ops import gather as _gather
from ...ops import logic as _logic
from ...ops import math as _math
from ...ops import reduce as _reduce
from ...ops import shape as _shape
from ...ops.registry import STATE
from ...ops.sequence import gather_tree, viterbi


def label_smooth(label, prior_dist=None, epsilon: float = 0.1, name=None):
    """`(1 - epsilon) * label + epsilon * prior` (a uniform prior over the last axis by
    default).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.label_smooth(rt.to_tensor([[0.0, 1.0]], dtype="float64"), epsilon=0.2).tolist()
    [[0.1, 0.9]]
    """
    if is_variable(epsilon):  # (`float(t)` in converted code: known at run time)
        return _label_smooth_computed(label, prior_dist, epsilon)
    if not 0.0 <= float(epsilon) <= 1.0:
        raise ValueError(f"label_smooth: epsilon must be in [0, 1], got {epsilon}")
    kept = _math.scale(label, 1.0 - float(epsilon))
    if prior_dist is None:
        classes = label.shape[-1]
        if classes == -1:
            raise ValueError("label_smooth: the number of classes (last dim of label) is "
                             "unknown in this program; give it a fixed size or pass prior_dist")
        return _math.add(kept, float(epsilon) / classes)
    return _math.add(kept, _math.scale(prior_dist, float(epsilon)))

def _label_smooth_computed(label, prior_dist, epsilon):
    """label_smooth with an epsilon the program computes, from elementwise ops. Its range
    ([0, 1]) is checked when the program runs."""
    from ...program.debug_ops import assert_text
    assert_text((epsilon >= 0.0) & (epsilon <= 1.0),
                ["label_smooth: epsilon must be in [0, 1], got ", epsilon], error=ValueError)
    kept = label * (1.0 - epsilon)
    if prior_dist is None:
        classes = label.shape[-1]
        if classes == -1:
            raise ValueError("label_smooth: the number of classes (last dim of label) is "
                             "unknown in this program; give it a fixed size or pass prior_dist")
        return kept + epsilon / classes
    return kept + prior_dist * epsilon


def sequence_mask(x, maxlen=None, dtype="int64", name=None):
    """`mask[..., j] = j < x[...]`: x holds lengths; the new last axis has `maxlen` entries
    (the largest length when None, a run-time value in a program).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.sequence_mask(rt.to_tensor([1, 3]), maxlen=4).tolist()
    [[1, 0, 0, 0], [1, 1, 1, 0]]
    """
    if maxlen is None:  # eagerly a number; in a program a run-time value
        maxlen = _reduce.max(x)
        if STATE.builder is None:
            maxlen = int(maxlen)
    steps = _creation.arange(maxlen, dtype=x.dtype)
    mask = _logic.less_than(steps, _shape.unsqueeze(x, -1))
    return _math.cast(mask, convert_dtype(dtype))

def _lengths(length, batch_like):
    if length is None:
        steps = batch_like.shape[1]
        return _creation.full_like(_reduce.sum(batch_like, axis=[1, 2]), steps, dtype="int64")
    return _shape.reshape(length, [-1])

def _steps_of(fn, x):
    steps = x.shape[1]
    if steps == -1:
        raise ValueError(f"{fn}: the number of time steps (dim 1 of input) must be known when "
                         "the program is built; pad the sequences to a fixed length")
    return steps

def linear_chain_crf(input, label, transition, length=None, name=None):
    """The negative log-likelihood of each labelled sequence under a linear-chain CRF,
    shape [batch, 1] (Paddle's `linear_chain_crf` cost: minimise its mean). Differentiable
    in `input` (the emission scores) and `transition`.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> x = rt.zeros([1, 2, 3])
    >>> nll = F.linear_chain_crf(x, rt.to_tensor([[0, 1]]), rt.zeros([5, 3]))
    >>> round(float(nll), 4)  # log(3 * 3): every path scores the same
    2.1972
    """
    steps = _steps_of("linear_chain_crf", input)
    tags = input.shape[2]
    want = [tags + 2, tags]
    if len(transition.shape) != 2 or any(
            d not in (-1, w) for d, w in zip(transition.shape, want)) or tags == -1:
        raise ValueError(f"linear_chain_crf: transition must have shape [num_tags + 2, "
                         f"num_tags] = {want}, got {list(transition.shape)}")
    dtype = input.dtype
    length = _lengths(length, input)
    start = _shape.unsqueeze(transition[0], 0)
    stop = _shape.unsqueeze(transition[1], 0)
    trans = _shape.unsqueeze(transition[2:], 0)  # [1, from, to]
    onehot = _math.cast(_gather.one_hot(_shape.reshape(label, [-1, steps]), tags), dtype)
    # log partition function: the forward algorithm, frozen past each sequence's end
    alpha = _math.add(start, input[:, 0])
    for t in range(1, steps):
        new = _math.add(_reduce.logsumexp(_math.add(_shape.unsqueeze(alpha, -1), trans),
                                          axis=1), input[:, t])
        live = _shape.unsqueeze(_logic.less_than(_creation.full_like(length, t), length), -1)
        alpha = _logic.where(live, new, alpha)
    log_z = _reduce.logsumexp(_math.add(alpha, stop), axis=1)
    # the score of the gold path
    valid = _math.cast(sequence_mask(length, steps), dtype)  # [B, T]
    gold = _reduce.sum(_math.multiply(_math.multiply(input, onehot),
                                      _shape.unsqueeze(valid, -1)), axis=[1, 2])
    gold = _math.add(gold, _reduce.sum(_math.multiply(onehot[:, 0], start), axis=1))
    last = _math.cast(_logic.equal(
        _creation.arange(steps, dtype="int64"),
        _shape.unsqueeze(_math.subtract(_math.cast(length, "int64"), 1), -1)), dtype)
    last_tag = _reduce.sum(_math.multiply(onehot, _shape.unsqueeze(last, -1)), axis=1)
    gold = _math.add(gold, _reduce.sum(_math.multiply(last_tag, stop), axis=1))
    for t in range(1, steps):
        pair = _math.multiply(_shape.unsqueeze(onehot[:, t - 1], -1),
                              _shape.unsqueeze(onehot[:, t], 1))  # [B, from, to]
        moved = _reduce.sum(_math.multiply(pair, trans), axis=[1, 2])
        gold = _math.add(gold, _math.multiply(moved, valid[:, t]))
    return _shape.unsqueeze(_math.subtract(log_z, gold), -1)

def crf_decoding(input, transition, label=None, length=None, name=None):
    """The best tag sequence (Viterbi) for each sequence, int64 [batch, time] with 0 past each
    length; with `label`, 1 where the decoded tag equals the label and 0 elsewhere (Paddle's
    `crf_decoding`).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> x = rt.to_tensor([[[0.0, 2.0], [3.0, 0.0]]])
    >>> F.crf_decoding(x, rt.zeros([4, 2])).tolist()
    [[1, 0]]
    """
    _steps_of("crf_decoding", input)
    return viterbi(input, transition, _lengths(length, input), label)

__all__ = ["crf_decoding", "gather_tree", "label_smooth", "linear_chain_crf", "sequence_mask"]
