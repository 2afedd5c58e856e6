"""2025-26 training-loop code as public repos write it, run as training cases (several calls
from one start, everything a user observes compared after each; `test_training_steps.py`):
GAN steps with two optimizers (non-saturating and WGAN-GP with `create_graph` penalties, a
generator step skipped when the discriminator is already losing), knowledge distillation with
a frozen teacher, magnitude pruning with per-layer mask dicts, EMA of weights with warmup,
clipping by global norm with Python floats logged, early stopping with patience on a plain
trainer object, mixup steps with seeded Python randomness, and SWA averaging."""
from __future__ import annotations

import math
import random

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import i64
from .training_models import MLP, adam, built, momentum
from .training_steps import train_case

_RNG = np.random.default_rng(77)


def _x(sign=1.0, scale=1.0):
    x = np.abs(_RNG.standard_normal((4, 4))).astype("float32") * scale
    return x * np.float32(sign)


Y = i64([0, 1, 2, 1])
Y2 = i64([2, 2, 0, 1])
XY = [(_x(1.0), Y), (_x(-1.0), Y2), (_x(1.0, 3.0), Y2), (_x(-1.0, 0.1), Y)]


# ---- GANs ----------------------------------------------------------------------------------
class Generator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 6), nn.LeakyReLU(0.2), nn.Linear(6, 4))

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 6), nn.LeakyReLU(0.2), nn.Linear(6, 1))

    def forward(self, x):
        return self.net(x)


def _gan_setup():
    g, d = Generator(), Discriminator()
    opt_g = paddle.optimizer.Adam(learning_rate=0.01, beta1=0.5, parameters=g.parameters())
    opt_d = paddle.optimizer.Adam(learning_rate=0.01, beta1=0.5, parameters=d.parameters())
    return g, d, opt_g, opt_d


def _z(scale):
    return (_RNG.standard_normal((4, 2)) * scale).astype("float32")


GAN_ARGS = [(XY[0][0], _z(1.0)), (XY[1][0], _z(0.1)), (XY[2][0], _z(3.0)),
            (XY[3][0], _z(1.0))]


@train_case(setup=_gan_setup, args=GAN_ARGS, rtol=1e-4, atol=1e-5)
def gan_step_two_optimizers(netG, netD, optG, optD, real, z):
    """The DCGAN tutorial's step: D on real (label 1) and detached fake (label 0), then G
    with the non-saturating loss; D(x) and D(G(z)) logged as floats."""
    fake = netG(z)
    d_real = netD(real)
    d_fake = netD(fake.detach())
    errD = (F.binary_cross_entropy_with_logits(d_real, paddle.ones_like(d_real))
            + F.binary_cross_entropy_with_logits(d_fake, paddle.zeros_like(d_fake)))
    errD.backward()
    optD.step()
    optD.clear_grad()
    out = netD(fake)
    errG = F.binary_cross_entropy_with_logits(out, paddle.ones_like(out))
    errG.backward()
    optG.step()
    optG.clear_grad()
    optD.clear_grad()
    return {"Loss_D": errD.item(), "Loss_G": errG.item(),
            "D(x)": F.sigmoid(d_real).mean().item(), "D(G(z))": F.sigmoid(out).mean().item()}


def _wgan_setup():
    g, d = Generator(), Discriminator()
    opt_g = paddle.optimizer.Adam(learning_rate=1e-3, beta1=0.0, beta2=0.9,
                                  parameters=g.parameters())
    opt_d = paddle.optimizer.Adam(learning_rate=1e-3, beta1=0.0, beta2=0.9,
                                  parameters=d.parameters())
    return g, d, opt_g, opt_d


_ALPHA = np.linspace(0.1, 0.9, 4, dtype="float32").reshape(4, 1)


@train_case(setup=_wgan_setup, args=[a + (_ALPHA,) for a in GAN_ARGS], rtol=1e-4, atol=1e-5)
def wgan_gp_step(G, D, opt_g, opt_d, real, z, alpha, lambda_gp=10.0, n_critic=2):
    """WGAN-GP: n_critic critic steps with a gradient penalty on interpolates
    (`autograd.grad(create_graph=True)`), then one generator step."""
    for _ in range(n_critic):
        fake = G(z).detach()
        interp = alpha * real + (1 - alpha) * fake
        interp.stop_gradient = False
        d_interp = D(interp)
        grads = paddle.grad(d_interp, interp, grad_outputs=paddle.ones_like(d_interp),
                            create_graph=True)[0]
        gp = ((grads.norm(2, axis=1) - 1) ** 2).mean()
        d_loss = D(fake).mean() - D(real).mean() + lambda_gp * gp
        opt_d.clear_grad()
        d_loss.backward()
        opt_d.step()
    g_loss = -D(G(z)).mean()
    opt_g.clear_grad()
    g_loss.backward()
    opt_g.step()
    return d_loss.item(), g_loss.item(), gp.item()


@train_case(setup=_gan_setup, args=GAN_ARGS, rtol=1e-4, atol=1e-5)
def gan_skip_generator_when_d_loses(netG, netD, optG, optD, real, z, d_threshold=1.2):
    """A balanced GAN trick: the generator is only updated while the discriminator is
    winning (its loss under a threshold); the skipped steps are counted by the caller."""
    fake = netG(z)
    loss_d = (F.softplus(-netD(real)) + F.softplus(netD(fake.detach()))).mean()
    loss_d.backward()
    optD.step()
    optD.clear_grad()
    g_updated = False
    if loss_d < d_threshold:
        loss_g = F.softplus(-netD(fake)).mean()
        loss_g.backward()
        optG.step()
        optG.clear_grad()
        optD.clear_grad()
        g_updated = True
    return loss_d.item(), g_updated


# ---- distillation ---------------------------------------------------------------------------
def _kd_setup():
    teacher, student = MLP(hidden=12), MLP(hidden=4)
    teacher.eval()
    for p in teacher.parameters():
        p.stop_gradient = True
    return student, teacher, adam(student)


@train_case(setup=_kd_setup, args=XY)
def distill_step_frozen_teacher(student, teacher, opt, x, y, T=2.0, alpha=0.7):
    """Hinton KD: the teacher under no_grad, KL on softened logits scaled by T^2, CE on the
    labels; whether the student agrees with the teacher logged as a float."""
    with paddle.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    kd = F.kl_div(F.log_softmax(s_logits / T, axis=-1), F.softmax(t_logits / T, axis=-1),
                  reduction="batchmean") * (T * T)
    ce = F.cross_entropy(s_logits, y)
    loss = alpha * kd + (1.0 - alpha) * ce
    loss.backward()
    opt.step()
    opt.clear_grad()
    agree = (s_logits.argmax(-1) == t_logits.argmax(-1)).astype("float32").mean()
    return {"loss": loss.item(), "kd": kd.item(), "agreement": float(agree)}


# ---- pruning --------------------------------------------------------------------------------
class MagnitudePruner:
    """A global magnitude pruner keeping a mask per prunable weight (name -> mask), re-applied
    after every optimizer step; the sparsity per layer is logged as floats."""

    def __init__(self, model, amount=0.3):
        self.amount = amount
        self.masks = {n: paddle.ones_like(p) for n, p in model.named_parameters()
                      if p.ndim == 2}
        self.sparsity = {}

    def compute_masks(self, model):
        weights = dict(model.named_parameters())
        flat = paddle.concat([weights[n].abs().flatten() for n in self.masks])
        k = int(self.amount * flat.shape[0])
        threshold = paddle.sort(flat)[k]
        for name in self.masks:
            self.masks[name] = (weights[name].abs() > threshold).astype("float32")

    def apply(self, model):
        with paddle.no_grad():
            for name, p in model.named_parameters():
                if name in self.masks:
                    p.set_value(p * self.masks[name])
                    self.sparsity[name] = 1.0 - float(self.masks[name].mean())


def _prune_setup():
    model = MLP()
    return model, momentum(model), MagnitudePruner(model)


@train_case(setup=_prune_setup, args=[a + (i,) for i, a in enumerate(XY)])
def prune_step_with_mask_dict(model, opt, pruner, x, y, step, prune_every=2):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    if step % prune_every == 0:
        pruner.compute_masks(model)
    pruner.apply(model)
    return loss.item(), sum(pruner.sparsity.values()) / len(pruner.sparsity)


# ---- EMA, SWA ----------------------------------------------------------------------------------
class WarmupEMA:
    """An EMA with the `1 - (1 + step / gamma) ** -power` warmup (diffusers' EMAModel), the
    decay used last kept as a float; shadows in a list aligned with `parameters()`."""

    def __init__(self, model, max_decay=0.999, power=2 / 3):
        self.shadow = [p.detach().clone() for p in model.parameters()]
        self.max_decay, self.power = max_decay, power
        self.optimization_step = 0
        self.cur_decay_value = 0.0

    def get_decay(self, step):
        value = 1 - (1 + step) ** -self.power
        if step <= 0:
            return 0.0
        return max(min(value, self.max_decay), 0.0)

    @paddle.no_grad()
    def step(self, parameters):
        self.optimization_step += 1
        decay = self.get_decay(self.optimization_step)
        self.cur_decay_value = decay
        for s, p in zip(self.shadow, parameters):
            if not p.stop_gradient:
                s.set_value(s - (1 - decay) * (s - p))


def _ema_setup():
    model = MLP()
    return model, adam(model), WarmupEMA(model)


@train_case(setup=_ema_setup, args=XY)
def ema_with_power_warmup(model, opt, ema, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    ema.step(model.parameters())
    return loss.item(), ema.cur_decay_value


class SWA:
    def __init__(self, model, swa_start=2):
        self.avg = [p.detach().clone() for p in model.parameters()]
        self.n_averaged = 0
        self.swa_start = swa_start
        self.epoch = 0


def _swa_setup():
    model = MLP()
    return model, momentum(model), SWA(model)


@train_case(setup=_swa_setup, args=XY)
def swa_average_after_start(model, opt, swa, x, y):
    """torch.optim.swa_utils' AveragedModel update once `epoch >= swa_start`."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    if swa.epoch >= swa.swa_start:
        with paddle.no_grad():
            for a, p in zip(swa.avg, model.parameters()):
                a.set_value(a + (p - a) / (swa.n_averaged + 1))
        swa.n_averaged += 1
    swa.epoch += 1
    return loss.item()


# ---- clipping and logging ------------------------------------------------------------------------
class Logger:
    def __init__(self):
        self.history = {"loss": [], "grad_norm": []}
        self.skipped = 0


def _clip_setup():
    model = MLP()
    return model, adam(model), Logger()


INF_X = np.full((4, 4), np.inf, "float32")


@train_case(setup=_clip_setup, args=XY[:2] + [(INF_X, Y)] + XY[2:])
def clip_global_norm_log_floats(model, opt, logger, x, y, max_norm=0.5):
    """A hand-written `clip_grad_norm_`: total norm over `p.grad`, scaled in place, steps
    with a non-finite norm skipped (as fairseq / HF do), floats appended to a history."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    total_norm = paddle.sqrt(sum((g ** 2).sum() for g in grads))
    if not paddle.isfinite(total_norm):
        logger.skipped += 1
        opt.clear_grad()
        return None
    clip_coef = max_norm / (total_norm + 1e-6)
    if clip_coef < 1:
        for g in grads:
            g.set_value(g * clip_coef)
    opt.step()
    opt.clear_grad()
    logger.history["loss"].append(loss.item())
    logger.history["grad_norm"].append(float(total_norm))
    return math.sqrt(sum(v * v for v in logger.history["grad_norm"]))


# ---- early stopping ------------------------------------------------------------------------------
class EarlyStopping:
    """The pytorch-tools `EarlyStopping` class: patience counter, best score, a stop flag and
    a verbose message, all on `self`."""

    def __init__(self, patience=2, delta=0.0):
        self.patience, self.delta = patience, delta
        self.counter = 0
        self.best_score = None
        self.early_stop = False
        self.val_loss_min = np.inf

    def __call__(self, val_loss):
        score = -val_loss
        if self.best_score is None:
            self.best_score = score
            self.val_loss_min = val_loss
        elif score < self.best_score + self.delta:
            self.counter += 1
            print(f"EarlyStopping counter: {self.counter} out of {self.patience}")
            if self.counter >= self.patience:
                self.early_stop = True
        else:
            self.best_score = score
            self.val_loss_min = val_loss
            self.counter = 0


def _es_setup():
    model = MLP()
    return model, momentum(model), EarlyStopping()


@train_case(setup=_es_setup, args=XY + [XY[2], XY[2]])
def early_stopping_patience_object(model, opt, stopper, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    with paddle.no_grad():
        val_loss = F.cross_entropy(model(x * 0.5), y)
    stopper(val_loss.item())
    return stopper.early_stop, stopper.counter


# ---- mixup training ------------------------------------------------------------------------------
@train_case(setup=built(MLP, adam), args=[a + (i,) for i, a in enumerate(XY)])
def mixup_train_step_seeded(model, opt, x, y, seed, alpha=0.4, num_classes=3):
    """A mixup step with a per-step seeded Python RNG (reproducible data aug): lam from a
    beta draw, a permutation from `rng.sample`, mixed CE on both label sets."""
    rng = random.Random(seed)
    lam = rng.betavariate(alpha, alpha)
    index = paddle.to_tensor(rng.sample(range(x.shape[0]), x.shape[0]), dtype="int64")
    mixed = lam * x + (1 - lam) * paddle.gather(x, index)
    logits = model(mixed)
    loss = lam * F.cross_entropy(logits, y) + (1 - lam) * F.cross_entropy(
        logits, paddle.gather(y, index))
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss.item(), round(lam, 4)
