"""Training-loop pieces as RL, GAN and trainer repos write them: discounted returns and GAE
over a reversed loop, epsilon-greedy actions, GAN losses, gradient clipping by global norm,
EMA of weights, label smoothing, learning-rate schedules with Python and tensor steps and
mixture-of-experts routing."""
import math

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, neg, pos, rand


def _np_gae(rewards, values, dones, gamma, lam):
    adv = np.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(len(rewards))):
        next_value = values[t + 1]
        delta = rewards[t] + gamma * next_value * (1 - dones[t]) - values[t]
        last = delta + gamma * lam * (1 - dones[t]) * last
        adv[t] = last
    return adv, adv + values[:-1]


_R = f32([1.0, 0.0, 0.5, 1.0, -1.0])
_V = f32([0.5, 0.4, 0.3, 0.2, 0.1, 0.0])


@case(args=[(_R, _V, f32([0, 0, 0, 0, 1]), 0.99, 0.95),
            (_R, _V, f32([0, 1, 0, 0, 1]), 0.9, 1.0),
            (_R[:1], _V[:2], f32([1]), 0.99, 0.95)],
      ref=lambda r, v, d, g, lam: _np_gae(r, v, d, g, lam), rtol=1e-5)
def compute_gae(rewards, values, dones, gamma=0.99, lam=0.95):
    advantages = paddle.zeros_like(rewards)
    last_gae = 0.0
    for t in reversed(range(len(rewards))):
        next_non_terminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * values[t + 1] * next_non_terminal - values[t]
        last_gae = delta + gamma * lam * next_non_terminal * last_gae
        advantages[t] = last_gae
    returns = advantages + values[:-1]
    return advantages, returns


def _np_returns(rewards, gamma, normalize):
    out, running = [], 0.0
    for r in rewards[::-1]:
        running = r + gamma * running
        out.insert(0, running)
    out = np.asarray(out, np.float32)
    if normalize and len(out) > 1:
        out = (out - out.mean()) / (out.std() + 1e-8)
    return out


@case(args=[(_R, 0.99, True), (_R, 0.5, False), (_R[:1], 0.99, True)],
      ref=lambda r, g, n: _np_returns(r, g, n), rtol=1e-4, atol=1e-5)
def discounted_returns(rewards, gamma, normalize):
    """REINFORCE's returns: a Python list built backwards with insert(0, ...)."""
    returns = []
    running = 0.0
    for r in rewards.flip(axis=0):
        running = r + gamma * running
        returns.insert(0, running)
    returns = paddle.stack(returns)
    if normalize and returns.shape[0] > 1:
        returns = (returns - returns.mean()) / (returns.std(unbiased=False) + 1e-8)
    return returns


@case(args=[(f32([0.1, 0.9, 0.3]), 0.05, 0.1, 2), (f32([0.1, 0.9, 0.3]), 0.5, 0.1, 2),
            (f32([0.7, 0.2, 0.3]), 0.01, 0.2, 0)])
def epsilon_greedy(q_values, rand_value, epsilon, random_action):
    """The random draw comes in as an argument, as tests of such agents pass it."""
    if rand_value < epsilon:
        return paddle.to_tensor(random_action, dtype="int64"), True
    return paddle.argmax(q_values), False


@case(args=[(f32([[0.1, 0.9, 0.3], [0.8, 0.2, 0.0]]), f32([0.05, 0.8]), 0.1),
            (f32([[0.1, 0.9, 0.3], [0.8, 0.2, 0.0]]), f32([0.5, 0.8]), 0.1)])
def epsilon_greedy_batch(q_values, draws, epsilon):
    greedy = q_values.argmax(axis=-1)
    explore = draws < epsilon
    if explore.any():
        random_actions = (draws * 1000).astype("int64") % q_values.shape[-1]
        return paddle.where(explore, random_actions, greedy)
    return greedy


class _Generator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class _Discriminator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.leaky_relu(self.fc1(x), 0.2))


@case(args=[(rand(4, 2), rand(4, 3), "vanilla"), (rand(4, 2), rand(4, 3), "hinge"),
            (rand(4, 2), rand(4, 3), "wgan")])
class GANLosses(nn.Layer):
    """Both players' losses for one batch, for the three usual objectives."""

    def __init__(self):
        super().__init__()
        self.G = _Generator()
        self.D = _Discriminator()

    def forward(self, z, real, loss_type):
        fake = self.G(z)
        d_real = self.D(real)
        d_fake = self.D(fake.detach())
        if loss_type == "vanilla":
            ones, zeros = paddle.ones_like(d_real), paddle.zeros_like(d_fake)
            d_loss = (F.binary_cross_entropy_with_logits(d_real, ones)
                      + F.binary_cross_entropy_with_logits(d_fake, zeros))
            g_loss = F.binary_cross_entropy_with_logits(self.D(fake), paddle.ones_like(d_fake))
        elif loss_type == "hinge":
            d_loss = F.relu(1.0 - d_real).mean() + F.relu(1.0 + d_fake).mean()
            g_loss = -self.D(fake).mean()
        else:
            d_loss = d_fake.mean() - d_real.mean()
            g_loss = -self.D(fake).mean()
        return {"d_loss": d_loss, "g_loss": g_loss, "d_acc": (d_real > 0).astype("float32").mean()}


@case(args=[([pos(3), pos(2, 2)], 1.0), ([pos(3) * 0.01, pos(2, 2) * 0.01], 1.0),
            ([pos(3), neg(2, 2)], 0.0)])
def clip_by_global_norm(grads, max_norm, eps=1e-6):
    if max_norm <= 0:
        return grads, paddle.zeros([])
    norms = [paddle.sqrt((g * g).sum()) for g in grads]
    total_norm = paddle.sqrt(sum(n * n for n in norms))
    clip_coef = max_norm / (total_norm + eps)
    if clip_coef < 1:
        grads = [g * clip_coef for g in grads]
    return grads, total_norm


@case(args=[({"w": pos(2, 2), "b": pos(2)}, {"w": neg(2, 2), "b": neg(2)}, 0.9, 10),
            ({"w": pos(2, 2), "b": pos(2)}, {"w": neg(2, 2), "b": neg(2)}, 0.9, None),
            ({"w": pos(2, 2), "b": pos(2)}, {"w": neg(2, 2), "b": neg(2)}, 0.999, 10000)])
def ema_update(shadow, params, decay, num_updates):
    """timm's ModelEmaV2 with the warmup of TensorFlow's ExponentialMovingAverage."""
    if num_updates is not None:
        decay = min(decay, (1 + num_updates) / (10 + num_updates))
    new_shadow = {}
    for name, p in params.items():
        assert name in shadow, f"missing EMA weight {name}"
        new_shadow[name] = decay * shadow[name] + (1.0 - decay) * p
    return new_shadow, decay


def _np_ls_ce(logits, label, eps):
    n = logits.shape[-1]
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    target = np.full_like(logp, eps / n)
    target[np.arange(len(label)), label] += 1 - eps
    return np.float32(-(target * logp).sum(-1).mean())


@case(args=[(rand(3, 4) * 2, i64([0, 3, 1]), 0.1), (rand(3, 4) * 2, i64([0, 3, 1]), 0.0)],
      ref=lambda x, y, e: _np_ls_ce(x, y, e), rtol=1e-5)
def label_smoothing_cross_entropy(logits, target, smoothing):
    if smoothing == 0.0:
        return F.cross_entropy(logits, target)
    log_probs = F.log_softmax(logits, axis=-1)
    nll = -paddle.take_along_axis(log_probs, target.unsqueeze(1), axis=1).squeeze(1)
    smooth = -log_probs.mean(axis=-1)
    return ((1.0 - smoothing) * nll + smoothing * smooth).mean()


@case(args=[(f32(np.eye(4)[[0, 3, 1]] * 4), i64([0, 3, 1]), 0.1),
            (f32(np.eye(4)[[1, 2, 0]] * 4), i64([0, 3, 1]), 0.2)],
      stdout=("label smoothing: high loss",))
def paddle_label_smooth(logits, label, epsilon):
    one_hot = F.one_hot(label, num_classes=logits.shape[-1])
    smoothed = F.label_smooth(one_hot, epsilon=epsilon)
    loss = F.cross_entropy(logits, smoothed, soft_label=True)
    if loss > 1.5:
        print("label smoothing: high loss")
    return loss


def _np_lr(step, base, warmup, total):
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))


@case(args=[(3, 0.1, 10, 100), (50, 0.1, 10, 100), (500, 0.1, 10, 100)],
      ref=lambda s, b, w, t: _np_lr(s, b, w, t))
def warmup_cosine_lr(step, base_lr, warmup_steps, total_steps):
    """A Python step: the schedule is Python arithmetic, one program per step value."""
    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))


@case(args=[(i64(3), 0.1, 10, 100), (i64(50), 0.1, 10, 100), (i64(500), 0.1, 10, 100)],
      ref=lambda s, b, w, t: np.float32(_np_lr(int(s), b, w, t)), rtol=1e-5)
def warmup_cosine_lr_tensor_step(step, base_lr, warmup_steps, total_steps):
    """The step as a tensor (a global step counter): one program for every step."""
    step = step.astype("float32")
    if step < warmup_steps:
        lr = base_lr * (step + 1) / warmup_steps
    else:
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        lr = base_lr * 0.5 * (1.0 + paddle.cos(math.pi * paddle.clip(progress, max=1.0)))
    return lr


@case(args=[(i64(0), [30, 60], 0.1), (i64(45), [30, 60], 0.1), (i64(90), [30, 60], 0.5)])
def multistep_lr(epoch, milestones, gamma, base_lr=1.0):
    lr = base_lr
    for m in milestones:
        if epoch >= m:
            lr = lr * gamma
    return lr


class Top2Router(nn.Layer):
    """A GShard-style router: each token goes to its top-2 experts, with capacity."""

    def __init__(self, dim=4, num_experts=3, capacity_factor=1.0):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias_attr=False)
        self.experts = nn.LayerList([nn.Linear(dim, dim) for _ in range(num_experts)])
        self.num_experts = num_experts
        self.capacity_factor = capacity_factor

    def forward(self, x):
        tokens = x.reshape([-1, x.shape[-1]])
        probs = F.softmax(self.gate(tokens), axis=-1)
        top_p, top_idx = paddle.topk(probs, k=2, axis=-1)
        top_p = top_p / top_p.sum(axis=-1, keepdim=True)
        capacity = int(self.capacity_factor * tokens.shape[0] * 2 / self.num_experts)
        out = paddle.zeros_like(tokens)
        dropped = 0
        for e, expert in enumerate(self.experts):
            mask = (top_idx == e).astype("float32")
            load = mask.sum()
            if load == 0:
                continue
            if load > capacity:
                dropped += 1
            weight = (mask * top_p).sum(axis=-1, keepdim=True)
            out = out + weight * expert(tokens)
        aux_loss = (probs.mean(axis=0) * F.one_hot(top_idx[:, 0], self.num_experts).mean(
            axis=0)).sum() * self.num_experts
        return out.reshape(x.shape), aux_loss, dropped


@case(args=[(rand(2, 3, 4),), (pos(1, 1, 4) * 5,), (neg(2, 1, 4) * 5,)],
      batch=lambda b: (rand(b, 3, 4),))
class MoELayer(Top2Router):
    pass
