"""Training steps as others write them (PaddleClas/PaddleNLP trainers, timm and Lightning
loops, HF `Trainer` pieces, minGPT): a converted `train_step(model, opt, x, y)` with SGD
momentum and weight decay, Adam, AdamW, schedulers stepped outside, clipping by the
optimizer or by hand over `p.grad`, an EMA of the parameters under `no_grad`, freezing and
unfreezing, gradient accumulation, metric objects, loss dicts of `.item()` values, early
stopping flags, GradScaler and `auto_cast`. Each case runs several calls from one start in
both modes (`test_training_steps.py` compares everything a user observes after each)."""
from __future__ import annotations

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import i64
from .training_models import MLP, BNNet, TwoHeads, adam, adamw, built, momentum, scheduled
from .training_steps import train_case

_RNG = np.random.default_rng(5)


def _x(sign=1.0, scale=1.0):
    x = np.abs(_RNG.standard_normal((4, 4))).astype("float32") * scale
    return x * np.float32(sign)


Y = i64([0, 1, 2, 1])
Y2 = i64([2, 2, 0, 1])
INF = np.full((4, 4), np.inf, "float32")
# argument sets whose paths differ: tensor `if`s on the loss or the inputs' sign decide
XY = [(_x(1.0), Y), (_x(-1.0), Y2), (_x(1.0, 3.0), Y2), (_x(-1.0, 0.1), Y)]


# ---- optimizers ----------------------------------------------------------------------------
@train_case(setup=built(MLP, lambda m: momentum(m, weight_decay=1e-3)), args=XY)
def sgd_momentum_weight_decay(model, opt, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss.item()


@train_case(setup=built(MLP, adam), args=XY)
def adam_loss_dict_of_items(model, opt, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    acc = (logits.argmax(-1) == y).astype("float32").mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    return {"loss": loss.item(), "acc": float(acc), "n": int(y.shape[0])}


@train_case(setup=built(MLP, lambda m: adamw(m, grad_clip=nn.ClipGradByGlobalNorm(0.5))),
            args=XY)
def adamw_global_norm_clip(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return float(loss)


@train_case(setup=built(MLP, lambda m: adam(m, grad_clip=nn.ClipGradByValue(0.05))),
            args=XY)
def adam_clip_by_value(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


@train_case(setup=built(MLP, lambda m: momentum(
    m, weight_decay=paddle.regularizer.L1Decay(1e-3))), args=XY)
def momentum_l1_decay(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return round(loss.item(), 4)


@train_case(setup=built(MLP, momentum), args=XY)
def paddle_minimize(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.minimize(loss)
    model.clear_gradients()
    return loss


@train_case(setup=built(MLP, adam), args=XY)
def clear_grad_to_none(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return [p.grad is None for p in model.parameters()], loss.item()


@train_case(setup=built(TwoHeads, lambda m: momentum(m, weight_decay=0.01)), args=XY)
def routed_heads_momentum_weight_decay(model, opt, x, y):
    """The head the router did not pick keeps `.grad` None: momentum and decay leave it."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    has_grad = [p.grad is not None for p in model.parameters()]
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return has_grad, loss.item()


@train_case(setup=built(BNNet, adam), args=XY)
def batchnorm_buffers_and_eval_pass(model, opt, x, y):
    model.train()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    model.eval()
    with paddle.no_grad():
        val = F.cross_entropy(model(x), y)
    model.train()
    return {"train": loss.item(), "val": val.item()}


# ---- schedulers ----------------------------------------------------------------------------
def _sched_step(model, opt, sched):
    sched.step()


@train_case(setup=scheduled("step"), args=XY, between=_sched_step)
def step_decay_stepped_outside(model, opt, sched, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return {"loss": loss.item(), "lr": opt.get_lr()}


@train_case(setup=scheduled("warmup"), args=XY, between=_sched_step)
def warmup_cosine_stepped_outside(model, opt, sched, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss.item(), opt.get_lr() > 0.01


@train_case(setup=scheduled("step"), args=XY)
def scheduler_stepped_inside(model, opt, sched, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    sched.step()
    return loss.item()


class _Warmup:
    def __init__(self, base_lr=0.1, warmup=3):
        self.base_lr, self.warmup, self.step_num = base_lr, warmup, 0


@train_case(setup=built(MLP, momentum, _Warmup), args=XY)
def manual_warmup_with_set_lr(model, opt, sched, x, y):
    sched.step_num += 1
    opt.set_lr(sched.base_lr * min(1.0, sched.step_num / sched.warmup))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return opt.get_lr(), loss.item()


# ---- clipping by hand over p.grad ------------------------------------------------------------
@train_case(setup=built(MLP, momentum), args=XY)
def manual_global_norm_clip(model, opt, x, y, max_norm=0.3):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    total = paddle.sqrt(sum((g ** 2).sum() for g in grads))
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for p in model.parameters():
            if p.grad is not None:
                p.grad.set_value(p.grad * coef)
    opt.step()
    opt.clear_grad()
    return {"loss": loss.item(), "grad_norm": total.item()}


@train_case(setup=built(MLP, adam), args=XY)
def clip_grad_norm_util(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.2)
    opt.step()
    opt.clear_grad()
    return loss, norm


@train_case(setup=built(MLP, momentum), args=XY)
def clamp_each_grad_in_place(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    for name, p in model.named_parameters():
        if p.grad is None or "bias" in name:
            continue
        p.grad = paddle.clip(p.grad, -0.02, 0.02)
    opt.step()
    opt.clear_grad()
    return loss.item()


class _ClipStats:
    def __init__(self):
        self.clipped = 0
        self.steps = 0


@train_case(setup=built(MLP, momentum, _ClipStats), args=XY)
def count_clipped_steps(model, opt, stats, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    norm = paddle.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
    if norm > 0.5:
        stats.clipped += 1
    stats.steps += 1
    opt.step()
    opt.clear_grad()
    return stats.clipped


# ---- EMA of the parameters -------------------------------------------------------------------
def _ema_setup():
    model = MLP()
    ema = MLP()
    ema.set_state_dict(model.state_dict())
    for p in ema.parameters():
        p.stop_gradient = True
    return model, adam(model), ema


@train_case(setup=_ema_setup, args=XY)
def ema_layer_under_no_grad(model, opt, ema, x, y, decay=0.9):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    with paddle.no_grad():
        for p, s in zip(model.parameters(), ema.parameters()):
            s.set_value(s * decay + p * (1.0 - decay))
    return loss.item()


class _EMA:
    """timm's ModelEmaV2-like helper keeping a dict of shadow tensors and a step count."""

    def __init__(self, model=None, decay=0.8):
        self.decay, self.updates, self.shadow = decay, 0, {}
        if model is not None:
            self.shadow = {n: p.detach().clone() for n, p in model.named_parameters()}

    def update(self, model):
        self.updates += 1
        d = min(self.decay, (1 + self.updates) / (10 + self.updates))
        with paddle.no_grad():
            for n, p in model.named_parameters():
                self.shadow[n] = self.shadow[n] * d + p.detach() * (1.0 - d)


def _ema_dict_setup():
    model = MLP()
    return model, momentum(model), _EMA(model)


@train_case(setup=_ema_dict_setup, args=XY)
def ema_dict_of_shadows(model, opt, ema, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    ema.update(model)
    return loss.item(), ema.updates


# ---- freezing --------------------------------------------------------------------------------
@train_case(setup=built(MLP, lambda m: momentum(m, weight_decay=0.01)),
            args=[XY[0] + (True,), XY[1] + (True,), XY[2] + (False,), XY[3] + (True,),
                  XY[0] + (False,)])
def freeze_backbone_by_flag(model, opt, x, y, freeze):
    for p in model.backbone.parameters():
        p.stop_gradient = freeze
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return [p.grad is None for p in model.parameters()], loss.item()


class _Stage:
    def __init__(self):
        self.epoch = 0
        self.unfreeze_at = 2


@train_case(setup=built(MLP, adam, _Stage), args=XY)
def unfreeze_after_warmup_epochs(model, opt, stage, x, y):
    trainable = stage.epoch >= stage.unfreeze_at
    for p in model.backbone.parameters():
        p.trainable = trainable
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    stage.epoch += 1
    return {"loss": loss.item(), "backbone_trainable": trainable}


@train_case(setup=built(MLP, momentum), args=XY)
def detach_features_when_confident(model, opt, x, y):
    h = model.backbone(x)
    if h.abs().mean() > 0.5:
        h = h.detach()
    loss = F.cross_entropy(model.head(h), y)
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return [p.grad is None for p in model.backbone.parameters()], loss.item()


# ---- gradient accumulation ---------------------------------------------------------------------
@train_case(setup=built(MLP, momentum),
            args=[XY[0] + (False,), XY[1] + (True,), XY[2] + (False,), XY[3] + (True,)])
def accumulate_then_step_flag(model, opt, x, y, do_step, accum=2):
    loss = F.cross_entropy(model(x), y) / accum
    loss.backward()
    if do_step:
        opt.step()
        opt.clear_grad()
    return loss.item() * accum


class _Accum:
    def __init__(self, every=2):
        self.every, self.micro, self.updates = every, 0, 0


@train_case(setup=built(MLP, adamw, _Accum), args=XY + [XY[0]])
def accumulate_by_counter(model, opt, acc, x, y):
    loss = F.cross_entropy(model(x), y)
    (loss / acc.every).backward()
    acc.micro += 1
    stepped = acc.micro % acc.every == 0
    if stepped:
        opt.step()
        opt.clear_grad()
        acc.updates += 1
    return {"loss": float(loss), "stepped": stepped}


# ---- metrics and trackers the step updates ------------------------------------------------------
class _Accuracy:
    def __init__(self):
        self.correct = 0
        self.total = 0
        self.loss_sum = 0.0

    def accuracy(self):
        return self.correct / max(self.total, 1)


@train_case(setup=built(MLP, adam, _Accuracy), args=XY)
def metric_object_of_python_numbers(model, opt, metric, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    pred = logits.argmax(axis=-1)
    metric.correct += int((pred == y).sum())
    metric.total += y.shape[0]
    metric.loss_sum += loss.item() * y.shape[0]
    return metric.accuracy()


class _RunningLoss:
    def __init__(self):
        self.total = paddle.zeros([])
        self.count = 0
        self.history = []


@train_case(setup=built(MLP, momentum, _RunningLoss), args=XY)
def running_tensor_metric_and_history(model, opt, tracker, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    tracker.total = tracker.total + loss.detach()
    tracker.count += 1
    tracker.history.append(round(loss.item(), 3))
    return tracker.total / tracker.count


class _EarlyStop:
    def __init__(self, patience=1):
        self.best = float("inf")
        self.bad = 0
        self.patience = patience
        self.stop = False


@train_case(setup=built(MLP, momentum, _EarlyStop), args=XY + [XY[2]])
def early_stopping_flags(model, opt, es, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    if loss < es.best:
        es.best = float(loss)
        es.bad = 0
    else:
        es.bad += 1
    es.stop = es.bad > es.patience
    return es.stop


@train_case(setup=built(MLP, adam), args=XY)
def loss_dict_with_a_conditional_term(model, opt, x, y, aux_weight=0.1):
    logits = model(x)
    losses = {"ce": F.cross_entropy(logits, y)}
    if logits.abs().max() > 0.4:
        losses["reg"] = aux_weight * (logits ** 2).mean()
    else:
        losses["reg"] = paddle.zeros([])
    total = sum(losses.values())
    total.backward()
    opt.step()
    opt.clear_grad()
    out = {k: v.item() for k, v in losses.items()}
    out["total"] = total.item()
    return out


@train_case(setup=built(MLP, adam), args=XY)
def label_smoothing_soft_targets(model, opt, x, y, eps=0.1):
    logits = model(x)
    onehot = F.one_hot(y, 3)
    soft = onehot * (1 - eps) + eps / 3
    loss = -(soft * F.log_softmax(logits, axis=-1)).sum(-1).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    return {"loss": loss.item(), "confident": bool((F.softmax(logits, -1).max(-1) > 0.4).all())}


# ---- mixed precision -------------------------------------------------------------------------
def _scaler():
    return paddle.amp.GradScaler(init_loss_scaling=16.0, incr_every_n_steps=2)


AMP_XY = [XY[0], (INF, Y), XY[1], XY[2], (INF, Y2), XY[3]]


@train_case(setup=built(MLP, adam), args=XY, rtol=2e-2, atol=2e-2)
def auto_cast_bfloat16_step(model, opt, x, y):
    with paddle.amp.auto_cast(dtype="bfloat16"):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss.item(), str(logits.dtype)


@train_case(setup=built(MLP, lambda m: momentum(m, weight_decay=1e-3), _scaler), args=AMP_XY)
def grad_scaler_step_update(model, opt, scaler, x, y):
    loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    return {"loss": float(loss), "scale": float(scaler.get_loss_scaling())}


@train_case(setup=built(MLP, adamw, _scaler), args=AMP_XY)
def grad_scaler_minimize(model, opt, scaler, x, y):
    with paddle.amp.auto_cast(dtype="bfloat16"):
        loss = F.cross_entropy(model(x), y)
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.minimize(opt, scaled)
    opt.clear_grad()
    return loss


@train_case(setup=built(MLP, adam, _scaler), args=AMP_XY)
def grad_scaler_unscale_then_clip(model, opt, scaler, x, y):
    loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    return loss.item()


# ---- skipping and guarding steps -----------------------------------------------------------------
@train_case(setup=built(MLP, momentum), args=[XY[0], (INF, Y), XY[1]])
def skip_update_on_non_finite_loss(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    finite = bool(paddle.isfinite(loss))
    if finite:
        opt.step()
    opt.clear_grad()
    return {"skipped": not finite}


@train_case(setup=built(MLP, adam), args=XY)
def grad_norms_by_name(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    norms = {n: float(p.grad.norm()) for n, p in model.named_parameters()
             if p.grad is not None}
    opt.step()
    opt.clear_grad()
    return norms


@train_case(setup=built(TwoHeads, adam), args=XY)
def grad_norms_of_routed_heads(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    reached = [n for n, p in model.named_parameters() if p.grad is not None]
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return reached


# ---- trainers as objects ---------------------------------------------------------------------
class _Trainer:
    """An HF/Lightning-like trainer holding the model, optimizer and its own counters."""

    def __init__(self):
        self.model = MLP()
        self.opt = adamw(self.model, grad_clip=nn.ClipGradByGlobalNorm(1.0))
        self.global_step = 0
        self.log = {}
        self.log_every = 2

    def training_step(self, x, y):
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        self.opt.step()
        self.opt.clear_grad()
        self.global_step += 1
        if self.global_step % self.log_every == 0:
            self.log[f"loss/{self.global_step}"] = loss.item()
        return loss


@train_case(setup=lambda: (_Trainer(),), args=XY)
def trainer_object_with_counters(trainer, x, y):
    loss = trainer.training_step(x, y)
    return {"loss": loss, "step": trainer.global_step}


@train_case(setup=built(MLP, momentum), args=XY)
def print_progress_each_step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    if loss > 1.1:
        print(f"high loss {loss.item():.4f}")
    else:
        print("loss ok", round(loss.item(), 4))


@train_case(setup=built(MLP, adam), args=XY)
def returns_detached_logits_and_live_loss(model, opt, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    probs = F.softmax(logits.detach(), axis=-1)
    return loss, probs, probs.argmax(-1), logits.stop_gradient
