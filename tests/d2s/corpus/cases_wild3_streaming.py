"""Streaming and iterative code as 2025-era speech / agents / solver repos write it: a voice
activity detector whose plain-object state changes under tensor conditions, a `with
no_grad()` block that returns early, temporaries deleted in one branch, stats dicts filled in
a loop over a tensor count, comprehensions over `range` of a tensor, clipping by tensor
bounds, a Python flag with `for ... else` around a tensor `break`, and a loss history list
that starts with a Python number and grows in a tensor `while`."""
import runtime as paddle

from .registry import case, f32, i64


class _VADState:
    def __init__(self, threshold=0.5, hangover=2):
        self.threshold = threshold
        self.max_hangover = hangover
        self.hangover = 0
        self.active = False

    def step(self, frame):
        if frame.abs().mean() > self.threshold:
            self.active = True
            self.hangover = self.max_hangover
        else:
            self.hangover = self.hangover - 1
            if self.hangover <= 0:
                self.active = False
        return self.active


@case(args=[(f32([[0.9, 0.8], [0.1, 0.0], [0.0, 0.1], [0.0, 0.0]]),),
            (f32([[0.1, 0.1], [0.0, 0.0]]),)])
def voice_activity_frames(frames):
    """A VAD over the frames of a tensor: plain-object state with a hangover counter."""
    vad = _VADState()
    flags = []
    for frame in frames:
        flags.append(vad.step(frame))
    return paddle.stack([paddle.to_tensor(f) if isinstance(f, bool) else f
                         for f in flags]), vad.hangover


@case(args=[(f32([1.0, 2.0]), 10.0), (f32([20.0, 2.0]), 10.0)])
def early_return_inside_no_grad(x, limit):
    """An evaluation helper returning from inside `with paddle.no_grad()` when the input is
    out of range."""
    with paddle.no_grad():
        if x.max() > limit:
            return paddle.zeros_like(x)
        y = x * 2.0
    return y + 1.0


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
def delete_temporary_in_branch(x):
    """A large temporary freed with `del` in the branch that made it."""
    out = x
    if x.sum() > 0:
        tmp = x * x
        out = tmp + 1.0
        del tmp
    return out


@case(args=[(f32([0.5, 1.5, 2.5, 3.5]), i64(3)), (f32([0.5, 1.5, 2.5, 3.5]), i64(0))])
def stats_dict_in_tensor_loop(values, n):
    """Running stats kept in a dict whose keys are first set inside a loop over a tensor
    count (`range(n)` with a tensor `n`)."""
    stats = {"sum": paddle.zeros([])}
    for i in range(n):
        stats["sum"] = stats["sum"] + values[i]
        stats["last"] = values[i]
    return stats["sum"], "last" in stats


@case(args=[(f32([1.0, 2.0, 3.0]), i64(2)), (f32([1.0, 2.0, 3.0]), i64(3))])
def comprehension_over_tensor_range(x, n):
    """Prefix sums listed by a comprehension over `range` of a tensor."""
    prefix = [x[:i + 1].sum() for i in range(n)]
    return paddle.stack(prefix) if len(prefix) > 0 else x[:0]


@case(args=[(f32([-3.0, 0.5, 3.0]), f32(-1.0), f32(1.0)),
            (f32([-3.0, 0.5, 3.0]), f32(-4.0), f32(4.0))])
def clip_by_tensor_bounds(x, lo, hi):
    """PPO value clipping with bounds that are tensors."""
    clipped = paddle.clip(x, lo, hi)
    if (clipped != x).any():
        return clipped, True
    return x, False


@case(args=[(f32([[0.1, 0.2], [0.9, 0.1], [0.2, 0.2]]), 0.5),
            (f32([[0.1, 0.2], [0.3, 0.1]]), 0.5)])
def first_row_over_threshold_flag(rows, thr):
    """`found` is a Python flag set before a tensor `break`, reset in the `else` of the
    `for`."""
    found = False
    index = -1
    for i in range(rows.shape[0]):
        if rows[i].max() > thr:
            found = True
            index = i
            break
    else:
        found = False
    return found, index


@case(args=[(f32(8.0), 0.5), (f32(0.1), 0.5)])
def loss_history_while(loss, tol):
    """A history that starts with a Python number and gets tensors in a `while` on a
    tensor (a list of mixed numbers and tensors)."""
    history = [1.0]
    while loss > tol:
        loss = loss * 0.5
        history.append(loss)
    return paddle.stack([paddle.to_tensor(h) if isinstance(h, float) else h
                         for h in history])
