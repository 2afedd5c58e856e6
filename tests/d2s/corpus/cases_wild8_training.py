"""2025-26 training steps as public repos write them, run as training cases (several calls
from one start, everything a user observes compared after each; `test_training_steps.py`):
learning-rate warmup and cosine restarts computed inside the step from a Python step
counter, curriculum schedules and loss weights that change per step (competence-based
curricula, Kendall uncertainty weighting, a focal gamma schedule), an MoE step with its
load-balancing aux loss, LoRA fine-tuning with a frozen base, quantization-aware training with
a straight-through estimator and running observers, a GNN message-passing step with
`index_add`, gradient accumulation with a micro-step counter, sharpness-aware minimisation
(two forward/backward passes), and a manual dynamic loss scaler that skips steps on inf."""
from __future__ import annotations

import math

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import i64
from .training_models import MLP, adam, built, momentum
from .training_steps import train_case

_RNG = np.random.default_rng(88)


def _x(sign=1.0, scale=1.0):
    x = np.abs(_RNG.standard_normal((4, 4))).astype("float32") * scale
    return x * np.float32(sign)


Y = i64([0, 1, 2, 1])
Y2 = i64([2, 2, 0, 1])
XY = [(_x(1.0), Y), (_x(-1.0), Y2), (_x(1.0, 3.0), Y2), (_x(-1.0, 0.1), Y), (_x(1.0), Y2)]


# ---- schedules inside the step --------------------------------------------------------------
class Trainer:
    """A hand-rolled trainer object (lit-gpt style): the step counter and config live on it,
    the rate is computed in the step and written into the optimizer."""

    def __init__(self, warmup=2, max_lr=0.1, min_lr=0.01, cycle=3):
        self.step = 0
        self.warmup = warmup
        self.max_lr, self.min_lr, self.cycle = max_lr, min_lr, cycle
        self.lrs = []


def _lr_setup():
    model = MLP()
    return model, momentum(model), Trainer()


@train_case(setup=_lr_setup, args=XY)
def warmup_cosine_restarts_in_step(model, opt, trainer, x, y):
    """Linear warmup, then cosine with warm restarts every `cycle` steps, computed with
    Python math from the trainer's counter; the rate used is logged."""
    it = trainer.step
    if it < trainer.warmup:
        lr = trainer.max_lr * (it + 1) / trainer.warmup
    else:
        t = (it - trainer.warmup) % trainer.cycle
        lr = trainer.min_lr + 0.5 * (trainer.max_lr - trainer.min_lr) * (
            1 + math.cos(math.pi * t / trainer.cycle))
    opt.set_lr(lr)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    trainer.step += 1
    trainer.lrs.append(lr)
    return {"loss": loss.item(), "lr": lr}


class Curriculum:
    def __init__(self, total=5, c0=0.3):
        self.t = 0
        self.total = total
        self.c0 = c0


def _cur_setup():
    model = MLP()
    return model, adam(model), Curriculum()


@train_case(setup=_cur_setup, args=XY)
def competence_curriculum_step(model, opt, cur, x, y):
    """Competence-based curriculum (Platanios et al.): only the easiest fraction of the batch
    (by per-sample loss) is trained on, the fraction growing as sqrt of progress."""
    competence = min(1.0, math.sqrt(cur.t * (1 - cur.c0 ** 2) / cur.total + cur.c0 ** 2))
    losses = F.cross_entropy(model(x), y, reduction="none").flatten()
    k = max(1, int(competence * losses.shape[0]))
    easiest, _ = paddle.topk(-losses.detach(), k)
    keep = (-losses.detach()) >= easiest[-1]
    loss = (losses * keep.astype("float32")).sum() / keep.astype("float32").sum()
    loss.backward()
    opt.step()
    opt.clear_grad()
    cur.t += 1
    return loss.item(), k


class UncertaintyWeights(nn.Layer):
    """Kendall et al.'s multi-task weighting: a learned log-variance per task."""

    def __init__(self):
        super().__init__()
        self.net = MLP()
        self.aux = nn.Linear(3, 1)
        self.log_vars = self.create_parameter([2], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        logits = self.net(x)
        return logits, self.aux(logits)


def _uw_setup():
    model = UncertaintyWeights()
    return model, adam(model)


@train_case(setup=_uw_setup, args=XY, rtol=1e-4, atol=1e-6)
def uncertainty_weighted_multitask(model, opt, x, y):
    """Two task losses weighted by exp(-log_var) + log_var; the regression task is skipped
    (a Python flag from the data) when the batch has no positive targets."""
    logits, reg = model(x)
    target = x.sum(axis=1, keepdim=True)
    losses = [F.cross_entropy(logits, y)]
    if float(target.max()) > 0:
        losses.append(F.mse_loss(reg, target))
    total = 0.0
    for i, l in enumerate(losses):
        total = total + paddle.exp(-model.log_vars[i]) * l + model.log_vars[i]
    total.backward()
    opt.step()
    opt.clear_grad()
    return [l.item() for l in losses], total.item()


def _focal_setup():
    model = MLP()
    return model, adam(model), {"epoch": 0, "gamma_schedule": [0.0, 1.0, 2.0]}


@train_case(setup=_focal_setup, args=XY)
def focal_gamma_schedule_step(model, opt, state, x, y):
    """Focal loss whose gamma follows a per-epoch list held in a state dict (cross entropy
    when gamma is 0); the epoch index is clamped to the schedule's end."""
    sched = state["gamma_schedule"]
    gamma = sched[min(state["epoch"], len(sched) - 1)]
    logp = F.log_softmax(model(x), axis=-1)
    logp_t = paddle.take_along_axis(logp, y.unsqueeze(-1), axis=1).squeeze(-1)
    if gamma == 0.0:
        loss = -logp_t.mean()
    else:
        loss = (-(1 - logp_t.exp()) ** gamma * logp_t).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    state["epoch"] += 1
    return loss.item(), gamma


# ---- MoE, LoRA, QAT -----------------------------------------------------------------------
class TinyMoE(nn.Layer):
    def __init__(self, num_experts=3):
        super().__init__()
        self.gate = nn.Linear(4, num_experts)
        self.experts = nn.LayerList([nn.Linear(4, 3) for _ in range(num_experts)])
        self.num_experts = num_experts

    def forward(self, x):
        probs = F.softmax(self.gate(x), axis=-1)
        top = probs.argmax(axis=-1)
        out = paddle.zeros([x.shape[0], 3])
        for e in range(self.num_experts):
            sel = (top == e).astype("float32").unsqueeze(-1)
            out = out + sel * probs[:, e:e + 1] * self.experts[e](x)
        frac = F.one_hot(top, self.num_experts).astype("float32").mean(axis=0)
        aux = self.num_experts * (frac * probs.mean(axis=0)).sum()
        return out, aux


def _moe_setup():
    model = TinyMoE()
    return model, momentum(model, weight_decay=1e-3)


@train_case(setup=_moe_setup, args=XY, rtol=1e-4, atol=1e-6)
def moe_step_with_aux_loss(model, opt, x, y, aux_coef=0.01):
    """A Switch-style step: task loss plus the load-balancing loss; experts that got no
    tokens get eager's (zero) gradients through the dense formulation."""
    logits, aux = model(x)
    loss = F.cross_entropy(logits, y) + aux_coef * aux
    loss.backward()
    opt.step()
    opt.clear_grad()
    return {"loss": loss.item(), "aux": aux.item()}


class LoRAMLP(nn.Layer):
    def __init__(self, r=2, alpha=4.0):
        super().__init__()
        self.base = MLP()
        for p in self.base.parameters():
            p.stop_gradient = True
        self.A = nn.Linear(4, r, bias_attr=False)
        self.B = nn.Linear(r, 3, bias_attr=False)
        self.scaling = alpha / r

    def forward(self, x, use_lora=True):
        out = self.base(x)
        if use_lora:
            out = out + self.B(self.A(x)) * self.scaling
        return out


def _lora_setup():
    model = LoRAMLP()
    return model, paddle.optimizer.AdamW(learning_rate=0.01, weight_decay=0.01,
                                         parameters=[model.A.weight, model.B.weight])


@train_case(setup=_lora_setup, args=[a + (i % 3 != 2,) for i, a in enumerate(XY)])
def lora_finetune_step(model, opt, x, y, use_lora):
    """LoRA fine-tuning: only A and B train; a batch run with the adapter off (an eval
    probe inside the loop) leaves their gradients None and the step is skipped."""
    loss = F.cross_entropy(model(x, use_lora), y)
    if use_lora:
        loss.backward()
        opt.step()
        opt.clear_grad()
    return loss.item()


class QATLinear(nn.Layer):
    """Fake-quantised weights with a straight-through estimator and a running absmax
    observer on the input (an EMA buffer, initialised on the first training call)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("act_absmax", paddle.zeros([]))
        self.calibrated = False

    def forward(self, x, bits=4):
        qmax = 2 ** (bits - 1) - 1
        cur = x.abs().max().detach()
        if not self.calibrated:
            self.act_absmax = cur
            self.calibrated = True
        else:
            self.act_absmax = 0.9 * self.act_absmax + 0.1 * cur
        s_x = self.act_absmax / qmax
        xq = x + (paddle.clip(paddle.round(x / s_x), -qmax - 1, qmax) * s_x - x).detach()
        w = self.fc.weight
        s_w = w.abs().max().detach() / qmax
        wq = w + (paddle.round(w / s_w) * s_w - w).detach()
        return paddle.matmul(xq, wq) + self.fc.bias


def _qat_setup():
    model = QATLinear()
    return model, momentum(model)


@train_case(setup=_qat_setup, args=XY, rtol=1e-4, atol=1e-5)
def qat_step_straight_through(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss.item(), float(model.act_absmax)


# ---- GNN ------------------------------------------------------------------------------------
class GINLayer(nn.Layer):
    """GIN: h' = MLP((1 + eps) h + sum of neighbours), sums by index_add over edges."""

    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
        self.eps = self.create_parameter([1], default_initializer=nn.initializer.Constant(0.1))

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        agg = paddle.index_add(paddle.zeros_like(x), dst, 0, x[src])
        return self.mlp((1 + self.eps) * x + agg)


EDGES = [i64([[0, 1, 2, 3], [1, 2, 3, 0]]), i64([[0, 0, 0, 1], [1, 2, 3, 0]])]


def _gin_setup():
    model = GINLayer()
    return model, adam(model)


@train_case(setup=_gin_setup, args=[a + (EDGES[i % 2],) for i, a in enumerate(XY)],
            rtol=1e-4, atol=1e-6)
def gin_node_classification_step(model, opt, x, y, edge_index):
    """Node classification with isolated nodes masked out of the loss (no incoming edge);
    the count of nodes trained on is a Python int."""
    logits = model(x, edge_index)
    deg = paddle.bincount(edge_index[1], minlength=x.shape[0])
    mask = deg > 0
    loss = F.cross_entropy(logits[mask], y[mask])
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss.item(), int(mask.sum())


# ---- accumulation, SAM, loss scaling -------------------------------------------------------
class Accumulator:
    def __init__(self, every=2):
        self.every = every
        self.micro = 0
        self.updates = 0


def _acc_setup():
    model = MLP()
    return model, momentum(model), Accumulator()


@train_case(setup=_acc_setup, args=XY)
def grad_accumulation_step(model, opt, acc, x, y):
    """Gradient accumulation: the loss divided by `every`, the optimizer stepping on every
    `every`-th micro step (a Python counter on the accumulator object)."""
    loss = F.cross_entropy(model(x), y) / acc.every
    loss.backward()
    acc.micro += 1
    stepped = acc.micro % acc.every == 0
    if stepped:
        opt.step()
        opt.clear_grad()
        acc.updates += 1
    return loss.item() * acc.every, stepped


@train_case(setup=built(MLP, momentum), args=XY, rtol=1e-4, atol=1e-6)
def sam_two_pass_step(model, opt, x, y, rho=0.05):
    """Sharpness-aware minimisation: ascend to w + rho * g / |g|, take the gradient there,
    restore w and step; parameters without a gradient are skipped in both passes."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    params = [p for p in model.parameters() if p.grad is not None]
    grad_norm = paddle.sqrt(sum((p.grad ** 2).sum() for p in params))
    eps = []
    with paddle.no_grad():
        for p in params:
            e = rho * p.grad / (grad_norm + 1e-12)
            p.set_value(p + e)
            eps.append(e)
    opt.clear_grad()
    F.cross_entropy(model(x), y).backward()
    with paddle.no_grad():
        for p, e in zip(params, eps):
            p.set_value(p - e)
    opt.step()
    opt.clear_grad()
    return loss.item(), float(grad_norm)


class LossScaler:
    def __init__(self, scale=2.0 ** 4, growth_interval=2):
        self.scale = scale
        self.growth_interval = growth_interval
        self.good_steps = 0
        self.skipped = 0


def _scaler_setup():
    model = MLP()
    return model, momentum(model), LossScaler()


INF_X = np.full((4, 4), np.inf, "float32")


@train_case(setup=_scaler_setup, args=XY[:2] + [(INF_X, Y)] + XY[2:])
def manual_dynamic_loss_scaling(model, opt, scaler, x, y):
    """Apex-style dynamic loss scaling by hand: scale the loss, unscale the gradients, skip
    the step and halve the scale on a non-finite gradient, double it every
    `growth_interval` good steps."""
    loss = F.cross_entropy(model(x), y)
    (loss * scaler.scale).backward()
    found_inf = False
    for p in model.parameters():
        if p.grad is None:
            continue
        if not bool(paddle.isfinite(p.grad).all()):
            found_inf = True
            break
    if found_inf:
        scaler.scale /= 2.0
        scaler.skipped += 1
        scaler.good_steps = 0
    else:
        with paddle.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.set_value(p.grad / scaler.scale)
        opt.step()
        scaler.good_steps += 1
        if scaler.good_steps % scaler.growth_interval == 0:
            scaler.scale *= 2.0
    opt.clear_grad()
    return found_inf, scaler.scale


def _kl_setup():
    model = MLP()
    return model, adam(model), {"step": 0, "cycle": 3, "betas": []}


@train_case(setup=_kl_setup, args=XY, rtol=1e-4, atol=1e-6)
def cyclical_kl_annealing_step(model, opt, sched, x, y, free_bits=0.05):
    """A VAE-style step with cyclical KL annealing (Fu et al. 2019): beta ramps from 0 to 1
    over the first half of each cycle, then stays at 1; free bits clamp the KL per dimension
    from below; beta is logged in the schedule dict."""
    pos = (sched["step"] % sched["cycle"]) / sched["cycle"]
    beta = min(1.0, 2.0 * pos)
    out = model(x)
    recon = F.cross_entropy(out, y)
    kl_per_dim = 0.5 * (out ** 2).mean(axis=0)
    kl = paddle.clip(kl_per_dim, min=free_bits).sum()
    loss = recon + beta * kl if beta > 0 else recon
    loss.backward()
    opt.step()
    opt.clear_grad()
    sched["step"] += 1
    sched["betas"].append(beta)
    return {"recon": recon.item(), "kl": kl.item(), "beta": beta}


def _observer_setup():
    from .cases_wild8_efficient import MinMaxObserver
    return (MinMaxObserver(),)


@train_case(setup=_observer_setup, args=[(_x(1.0),), (_x(-1.0, 3.0),), (_x(1.0, 0.1),),
                                         (_x(1.0, 5.0),)])
def observer_calibration_pass(observer, x):
    """Post-training quantization calibration: a batch through a MinMaxObserver (running
    min/max buffers, a Python `initialized` flag set on the first call), the scale and zero
    point read back as Python numbers for the calibration log."""
    scale, zero_point = observer(x.flatten())
    return {"scale": float(scale), "zero_point": int(zero_point),
            "initialized": observer.initialized}
