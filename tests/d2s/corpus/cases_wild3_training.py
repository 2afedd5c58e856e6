"""Training and RL code as 2025-era repos write it (CleanRL, minGPT/nanoGPT trainers, HF
Trainer pieces): a GradScaler-like plain object updated under a tensor `if`, gradient
accumulation with clipping, a plateau scheduler with Python counters, warmup-cosine rates,
PPO minibatch epochs that stop early on the KL, V-trace and TD(lambda) over reversed time,
prioritized replay sampling, and dice / SigLIP losses."""
import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


class _LossScaler:
    """A dynamic loss scaler as a plain Python object (not a Layer)."""

    def __init__(self, init_scale=8.0, growth_interval=2):
        self.scale = init_scale
        self.growth_interval = growth_interval
        self.growth_tracker = 0

    def update(self, found_inf):
        if found_inf:
            self.scale = self.scale * 0.5
            self.growth_tracker = 0
        else:
            self.growth_tracker += 1
            if self.growth_tracker == self.growth_interval:
                self.scale = self.scale * 2.0
                self.growth_tracker = 0


@case(args=[([f32([1.0, 2.0]), f32([3.0, 4.0])],), ([f32([1.0, np.inf]), f32([3.0, 4.0])],),
            ([f32([np.nan, 2.0])],)])
def amp_unscale_and_update(grads):
    """The scaler's state changes under `found_inf`, a tensor: an `if` on a tensor inside a
    method of a plain object."""
    scaler = _LossScaler()
    scales = []
    for g in grads:
        found_inf = paddle.logical_not(paddle.isfinite(g).all())
        scaler.update(found_inf)
        scales.append(scaler.scale)
    return scales[-1], scaler.growth_tracker


def _np_clip_accum(xs, ys, w, max_norm):
    g = np.zeros_like(w)
    for x, y in zip(xs, ys):
        r = x @ w - y
        g += 2 * x.T @ r / r.size / len(xs)
    norm = np.sqrt((g ** 2).sum())
    if norm > max_norm:
        g = g * (max_norm / (norm + 1e-6))
    return w - 0.1 * g


class AccumulateAndClip(nn.Layer):
    """Gradient accumulation over micro-batches, then clipping by global norm by hand and an
    SGD step with `paddle.no_grad()`; returns the updated weight."""

    def __init__(self):
        super().__init__()
        self.w = self.create_parameter(
            [3, 1], default_initializer=nn.initializer.Assign(np.array([[0.5], [-1.0], [2.0]])))

    def forward(self, xs, ys, max_norm):
        self.w.clear_grad()
        accum = len(xs)
        for x, y in zip(xs, ys):
            loss = F.mse_loss(x @ self.w, y) / accum
            loss.backward()
        grad = self.w.grad
        total_norm = paddle.sqrt((grad ** 2).sum())
        if total_norm > max_norm:
            grad = grad * (max_norm / (total_norm + 1e-6))
        with paddle.no_grad():
            new_w = self.w - 0.1 * grad
        return new_w


case(args=[([rand(2, 3), rand(2, 3)], [rand(2, 1), rand(2, 1)], 0.01),
           ([rand(2, 3)], [rand(2, 1)], 100.0)], rtol=1e-4, atol=1e-5)(AccumulateAndClip)


@case(args=[(f32([1.0, 0.9, 0.95, 0.96, 0.97, 0.5]), 0.1, 2),
            (f32([1.0, 0.8, 0.6, 0.4]), 0.1, 2)])
def reduce_lr_on_plateau(val_losses, lr, patience):
    """ReduceLROnPlateau over a tensor of epoch losses: Python counters and a float rate
    changed under tensor conditions, a history of rates kept in a list."""
    best = float("inf")
    num_bad_epochs = 0
    history = []
    for loss in val_losses:
        if loss < best * (1 - 1e-4):
            best = loss
            num_bad_epochs = 0
        else:
            num_bad_epochs += 1
        if num_bad_epochs > patience - 1:
            lr = lr * 0.5
            num_bad_epochs = 0
        history.append(lr)
    return best, history


def _np_lr(step, warmup, total, base):
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


@case(args=[(rand(2), 2, 3, 10), (rand(2), 7, 3, 10), (rand(2), 12, 3, 10)],
      ref=lambda g, s, w, t: (g * _np_lr(s, w, t, 0.1)).astype(np.float32))
def warmup_cosine_step(grad, step, warmup_steps, total_steps):
    """nanoGPT's get_lr, applied to an update."""
    base_lr = 0.1
    if step < warmup_steps:
        lr = base_lr * (step + 1) / warmup_steps
    else:
        decay_ratio = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        lr = base_lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, decay_ratio)))
    return grad * lr


@case(args=[(f32([0.1, 0.2, 0.3, 0.4]), f32([0.1, 0.2, 0.3, 0.4]), f32([1, -1, 1, -1]), 0.02),
            (f32([0.1, 0.2, 0.3, 0.4]), f32([-1.0, 0.5, 1.0, -0.7]), f32([1, -1, 1, -1]), 0.02)])
def ppo_epochs_with_kl_stop(old_logp, new_logp, advantages, target_kl):
    """CleanRL's PPO update loop: minibatches of 2 over 3 epochs; approx KL above 1.5x the
    target stops the epochs (a tensor break out of the outer loop through a flag)."""
    clip_coef = 0.2
    n = old_logp.shape[0]
    losses = []
    stop = False
    for epoch in range(3):
        for start in range(0, n, 2):
            mb = slice(start, start + 2)
            logratio = new_logp[mb] * (epoch + 1) / 3 - old_logp[mb]
            ratio = logratio.exp()
            approx_kl = ((ratio - 1) - logratio).mean()
            adv = advantages[mb]
            pg1 = -adv * ratio
            pg2 = -adv * paddle.clip(ratio, 1 - clip_coef, 1 + clip_coef)
            losses.append(paddle.maximum(pg1, pg2).mean())
            if approx_kl > 1.5 * target_kl:
                stop = True
                break
        if stop:
            break
    return paddle.stack(losses).mean(), len(losses)


def _np_vtrace(log_rhos, discounts, rewards, values, bootstrap):
    rhos = np.minimum(np.exp(log_rhos), 1.0)
    values_t1 = np.concatenate([values[1:], [bootstrap]])
    deltas = rhos * (rewards + discounts * values_t1 - values)
    acc, out = 0.0, []
    for t in reversed(range(len(deltas))):
        acc = deltas[t] + discounts[t] * rhos[t] * acc
        out.append(acc)
    return (np.array(out[::-1]) + values).astype(np.float32)


@case(args=[(rand(4), f32([0.9, 0.9, 0.0, 0.9]), rand(4), rand(4), f32(0.5)),
            (rand(2), f32([0.9, 0.9]), rand(2), rand(2), f32(-0.5))],
      ref=_np_vtrace, rtol=1e-5, atol=1e-5)
def vtrace_targets(log_rhos, discounts, rewards, values, bootstrap_value):
    """IMPALA's V-trace over reversed time steps of a tensor (`range(x.shape[0])`)."""
    rhos = paddle.minimum(log_rhos.exp(), paddle.ones_like(log_rhos))
    values_t1 = paddle.concat([values[1:], bootstrap_value.reshape([1])])
    deltas = rhos * (rewards + discounts * values_t1 - values)
    acc = paddle.zeros([])
    vs_minus_v = []
    for t in reversed(range(deltas.shape[0])):
        acc = deltas[t] + discounts[t] * rhos[t] * acc
        vs_minus_v.append(acc)
    vs_minus_v.reverse()
    return paddle.stack(vs_minus_v) + values


@case(args=[(f32([1.0, 0.0, 2.0]), f32([0.5, 0.4, 0.3, 0.2]), f32([0, 0, 1]), 0.9, 0.95),
            (f32([1.0, 0.5]), f32([0.5, 0.4, 0.3]), f32([0, 0]), 0.99, 1.0)])
def td_lambda_returns(rewards, values, dones, gamma, lam):
    """TD(lambda) returns, reset where an episode ended; lam 1 gives Monte Carlo returns
    (a Python shortcut)."""
    T = rewards.shape[0]
    returns = [None] * T
    if lam == 1.0:
        running = values[T]
        for t in reversed(range(T)):
            running = rewards[t] + gamma * running * (1.0 - dones[t])
            returns[t] = running
        return paddle.stack(returns)
    next_return = values[T]
    for t in range(T - 1, -1, -1):
        mask = 1.0 - dones[t]
        next_return = rewards[t] + gamma * mask * ((1 - lam) * values[t + 1] + lam * next_return)
        returns[t] = next_return
    return paddle.stack(returns)


def _np_per(td, u, alpha, beta):
    p = (np.abs(td) + 1e-2) ** alpha
    cdf = np.cumsum(p) / p.sum()
    idx = np.minimum(np.searchsorted(cdf, u, side="right"), len(td) - 1)
    probs = p[idx] / p.sum()
    w = (len(td) * probs) ** (-beta)
    return idx, (w / w.max()).astype(np.float32)


@case(args=[(f32([0.1, 2.0, 0.5, 1.0]), f32([0.05, 0.5, 0.99]), 0.6, 0.4),
            (f32([0.1, 2.0, 0.5, 1.0]), f32([0.3, 0.7]), 0.0, 0.4)],
      ref=_np_per)
def prioritized_replay_sample(td_errors, uniform, alpha, beta):
    """Prioritized replay: priorities from TD errors, inverse-CDF sampling with the uniform
    draws passed in, importance weights normalised by their maximum."""
    priorities = (td_errors.abs() + 1e-2) ** alpha
    if alpha == 0.0:
        priorities = paddle.ones_like(td_errors)
    cdf = paddle.cumsum(priorities) / priorities.sum()
    idx = paddle.searchsorted(cdf, uniform, right=True)
    idx = paddle.minimum(idx, paddle.full_like(idx, td_errors.shape[0] - 1))
    probs = paddle.gather(priorities, idx) / priorities.sum()
    weights = (td_errors.shape[0] * probs) ** (-beta)
    return idx, weights / weights.max()


def _np_dice(logits, target, num_classes):
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    losses = []
    for c in range(num_classes):
        t = (target == c).astype(np.float32)
        if t.sum() == 0:
            continue
        p = probs[:, c]
        losses.append(1 - (2 * (p * t).sum() + 1) / (p.sum() + t.sum() + 1))
    return np.float32(np.mean(losses))


@case(args=[(rand(2, 3, 4), i64([[0, 1, 2, 1], [0, 0, 1, 1]]), 3),
            (rand(2, 3, 4), i64([[0, 0, 0, 0], [0, 0, 0, 0]]), 3)], ref=_np_dice, rtol=1e-5)
def multiclass_dice_skipping_absent(logits, target, num_classes):
    """nnU-Net-style soft dice that skips classes absent from the batch (a tensor
    `continue`), averaging over the classes present (a list whose length a tensor decides)."""
    probs = F.softmax(logits, axis=1)
    losses = []
    for c in range(num_classes):
        t = (target == c).astype("float32")
        if t.sum() == 0:
            continue
        p = probs[:, c]
        dice = (2 * (p * t).sum() + 1) / (p.sum() + t.sum() + 1)
        losses.append(1 - dice)
    return sum(losses) / len(losses)


def _np_siglip(img, txt, t, b):
    logits = img @ txt.T * t + b
    labels = 2 * np.eye(len(img)) - 1
    return np.float32(-np.mean(np.sum(np.log(1 / (1 + np.exp(-labels * logits))), -1)))


@case(args=[(rand(3, 4), rand(3, 4), 10.0, -10.0), (rand(2, 4), rand(2, 4), 1.0, 0.0)],
      ref=lambda a, b, t, bias: _np_siglip(a / np.linalg.norm(a, axis=-1, keepdims=True),
                                           b / np.linalg.norm(b, axis=-1, keepdims=True),
                                           t, bias), rtol=1e-4)
def siglip_loss(img_emb, txt_emb, logit_scale, logit_bias):
    img = F.normalize(img_emb, axis=-1)
    txt = F.normalize(txt_emb, axis=-1)
    logits = img @ txt.T * logit_scale
    if logit_bias != 0.0:
        logits = logits + logit_bias
    n = logits.shape[0]
    labels = 2 * paddle.eye(n) - 1
    return -F.log_sigmoid(labels * logits).sum(axis=-1).mean()


Transition = namedtuple("Transition", ["obs", "action", "reward", "done"])


@case(args=[([(rand(2), 0, 1.0, False), (rand(2), 1, 0.5, True)], 0.9),
            ([(rand(2), 1, -1.0, False)], 0.5)])
def batch_transitions(steps, gamma):
    """A replay batch from a list of namedtuples: zip(*...) into fields, tensors from Python
    lists, a 1-step target masked where the episode ended."""
    transitions = [Transition(*s) for s in steps]
    batch = Transition(*zip(*transitions))
    obs = paddle.stack(list(batch.obs))
    actions = paddle.to_tensor(batch.action, dtype="int64")
    rewards = paddle.to_tensor(batch.reward, dtype="float32")
    not_done = paddle.to_tensor([0.0 if d else 1.0 for d in batch.done])
    next_v = obs.max(axis=-1)
    target = rewards + gamma * not_done * next_v
    return target, actions


@dataclass
class TrainState:
    step: int = 0
    best_metric: float = -1.0
    patience_left: int = 2


@case(args=[(f32([0.2, 0.5, 0.4, 0.3, 0.6]),), (f32([0.2, 0.5, 0.6]),)])
def early_stop_with_dataclass_state(val_metrics):
    """A trainer's state is a dataclass: fields updated under tensor conditions, stop by a
    tensor `break` when patience runs out, the final step count returned."""
    state = TrainState()
    for metric in val_metrics:
        state.step += 1
        if metric > state.best_metric:
            state.best_metric = metric
            state.patience_left = 2
        else:
            state.patience_left -= 1
            if state.patience_left == 0:
                break
    return state.step, state.best_metric


def _np_ls_nll(lprobs, target, eps, ignore_index):
    nll = -np.take_along_axis(lprobs, target[:, None], 1)[:, 0]
    smooth = -lprobs.sum(-1)
    keep = target != ignore_index
    nll, smooth = nll[keep].sum(), smooth[keep].sum()
    return np.float32((1 - eps - eps / (lprobs.shape[-1] - 1)) * nll
                      + eps / (lprobs.shape[-1] - 1) * smooth)


@case(args=[(np.log(f32([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])), i64([0, 2]), 0.1, -100),
            (np.log(f32([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])), i64([0, 1]), 0.1, 1),
            (np.log(f32([[0.7, 0.2, 0.1]])), i64([2]), 0.0, -100)],
      ref=_np_ls_nll, rtol=1e-5)
def fairseq_label_smoothed_nll(lprobs, target, epsilon, ignore_index):
    """fairseq's label_smoothed_nll_loss: padding positions masked out when an ignore index
    is present in the batch (a tensor condition), epsilon 0 is plain NLL."""
    if target.ndim == lprobs.ndim - 1:
        target = target.unsqueeze(-1)
    nll_loss = -paddle.take_along_axis(lprobs, target, axis=-1)
    smooth_loss = -lprobs.sum(axis=-1, keepdim=True)
    pad_mask = target == ignore_index
    if pad_mask.any():
        nll_loss = paddle.where(pad_mask, paddle.zeros_like(nll_loss), nll_loss)
        smooth_loss = paddle.where(pad_mask, paddle.zeros_like(smooth_loss), smooth_loss)
    nll_loss, smooth_loss = nll_loss.sum(), smooth_loss.sum()
    if epsilon == 0.0:
        return nll_loss
    eps_i = epsilon / (lprobs.shape[-1] - 1)
    return (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss


@case(args=[(f32([0.5, -0.2, 0.1]), 1.0), (f32([3.0, -4.0, 0.0]), 1.0),
            (f32([np.nan, 1.0, 0.0]), 1.0)])
def clip_or_skip_step(grad, max_norm):
    """Skip the step when the gradient is not finite (returns None for it), otherwise
    clip by norm; the status is a string chosen by Python after a tensor check."""
    norm = paddle.linalg.norm(grad)
    if not paddle.isfinite(norm):
        return None, 0.0
    scale = max_norm / (norm + 1e-6)
    if scale < 1.0:
        grad = grad * scale
    return grad, 1.0
