"""Diffusion code as diffusers-style repos write it: beta schedules chosen by name, q_sample
with per-sample tensor timesteps gathered from a schedule, DDPM and DDIM sampling loops over
Python timesteps and over a tensor count, classifier-free guidance, v-prediction targets and
a sampler with clipping and an early stop."""
import math

import numpy as np

import runtime as paddle
from runtime import nn

from .registry import case, f32, i64, rand


def _np_betas(kind, n):
    if kind == "linear":
        return np.linspace(1e-4, 0.02, n, dtype=np.float64).astype(np.float32)
    steps = np.arange(n + 1, dtype=np.float64) / n
    f = np.cos((steps + 0.008) / 1.008 * math.pi / 2) ** 2
    f = f / f[0]
    return np.clip(1 - f[1:] / f[:-1], 0, 0.999).astype(np.float32)


@case(args=[("linear", 10), ("cosine", 10), ("sqrt", 4)], ref=_np_betas, rtol=1e-4,
      atol=1e-6, raises=(NotImplementedError,))
def make_beta_schedule(schedule, num_steps):
    if schedule == "linear":
        return paddle.linspace(1e-4, 0.02, num_steps, dtype="float32")
    elif schedule == "cosine":
        steps = paddle.arange(num_steps + 1, dtype="float64") / num_steps
        alphas_cumprod = paddle.cos((steps + 0.008) / 1.008 * math.pi / 2) ** 2
        alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
        betas = 1 - alphas_cumprod[1:] / alphas_cumprod[:-1]
        return paddle.clip(betas, 0, 0.999).astype("float32")
    raise NotImplementedError(f"unknown beta schedule: {schedule}")


def _schedule(n=10):
    betas = np.linspace(1e-4, 0.2, n).astype(np.float32)
    return betas, np.cumprod(1 - betas).astype(np.float32)


_BETAS, _ACP = _schedule()


def _np_q_sample(x0, t, noise):
    a = _ACP[t].reshape(-1, 1)
    return np.sqrt(a) * x0 + np.sqrt(1 - a) * noise


@case(args=[(rand(3, 4), i64([0, 5, 9]), rand(3, 4)), (rand(2, 4), i64([9, 9]), None)],
      ref=lambda x0, t, n: _np_q_sample(x0, t, np.zeros_like(x0) if n is None else n),
      rtol=1e-5, atol=1e-6, batch=lambda b: (rand(b, 4), i64(np.arange(b) % 10), rand(b, 4)))
def q_sample(x_start, t, noise=None):
    alphas_cumprod = paddle.to_tensor(_ACP)
    if noise is None:
        noise = paddle.zeros_like(x_start)
    a = paddle.gather(alphas_cumprod, t).reshape([-1] + [1] * (x_start.ndim - 1))
    return paddle.sqrt(a) * x_start + paddle.sqrt(1 - a) * noise


class _EpsModel(nn.Layer):
    def __init__(self, dim=3):
        super().__init__()
        self.net = nn.Linear(dim + 1, dim)

    def forward(self, x, t):
        t_emb = (t.astype("float32") / 10.0).reshape([-1, 1]).expand([x.shape[0], 1])
        return paddle.tanh(self.net(paddle.concat([x, t_emb], axis=-1)))


class DDPMSampler(nn.Layer):
    """Ancestral sampling over reversed Python timesteps; the noise draws are passed in."""

    def __init__(self):
        super().__init__()
        self.model = _EpsModel()
        self.register_buffer("betas", paddle.to_tensor(_BETAS))
        self.register_buffer("alphas_cumprod", paddle.to_tensor(_ACP))

    def forward(self, x, noises, clip_denoised=True):
        num_steps = len(noises)
        for i in reversed(range(num_steps)):
            t = paddle.full([1], i, dtype="int64")
            eps = self.model(x, t)
            beta, acp = self.betas[i], self.alphas_cumprod[i]
            x0 = (x - paddle.sqrt(1 - acp) * eps) / paddle.sqrt(acp)
            if clip_denoised:
                x0 = x0.clip(-1.0, 1.0)
            acp_prev = self.alphas_cumprod[i - 1] if i > 0 else paddle.to_tensor(1.0)
            mean = (paddle.sqrt(acp_prev) * beta / (1 - acp)) * x0 + (
                paddle.sqrt(1 - beta) * (1 - acp_prev) / (1 - acp)) * x
            if i > 0:
                var = beta * (1 - acp_prev) / (1 - acp)
                x = mean + paddle.sqrt(var) * noises[i]
            else:
                x = mean
        return x


case(args=[(rand(2, 3), [rand(2, 3) for _ in range(4)], True),
           (rand(2, 3), [rand(2, 3) for _ in range(2)], False)],
     rtol=1e-4, atol=1e-5)(DDPMSampler)


class DDIMSampler(nn.Layer):
    """DDIM with eta=0 over a strided schedule of Python timesteps, with classifier-free
    guidance when a guidance scale above 1 is given."""

    def __init__(self):
        super().__init__()
        self.model = _EpsModel()
        self.register_buffer("alphas_cumprod", paddle.to_tensor(_ACP))
        self.num_train_steps = 10

    def forward(self, x, num_inference_steps=5, guidance_scale=1.0, cond=None):
        step = self.num_train_steps // num_inference_steps
        timesteps = list(range(0, self.num_train_steps, step))[::-1]
        for idx, t in enumerate(timesteps):
            t_tensor = paddle.to_tensor([t])
            eps = self.model(x, t_tensor)
            if guidance_scale > 1.0 and cond is not None:
                eps_cond = self.model(x + cond, t_tensor)
                eps = eps + guidance_scale * (eps_cond - eps)
            acp = self.alphas_cumprod[t]
            prev_t = timesteps[idx + 1] if idx + 1 < len(timesteps) else -1
            acp_prev = self.alphas_cumprod[prev_t] if prev_t >= 0 else paddle.to_tensor(1.0)
            x0 = (x - (1 - acp).sqrt() * eps) / acp.sqrt()
            x = acp_prev.sqrt() * x0 + (1 - acp_prev).sqrt() * eps
        return x


case(args=[(rand(2, 3), 5, 1.0, None), (rand(2, 3), 2, 3.0, rand(2, 3)),
           (rand(2, 3), 10, 7.5, None)], rtol=1e-4, atol=1e-5)(DDIMSampler)


class TensorStepSampler(nn.Layer):
    """The number of steps is a tensor: a graph loop with the timestep as a tensor counter."""

    def __init__(self):
        super().__init__()
        self.model = _EpsModel()
        self.register_buffer("alphas_cumprod", paddle.to_tensor(_ACP))

    def forward(self, x, num_steps):
        i = num_steps - 1
        while i >= 0:
            eps = self.model(x, i.reshape([1]))
            acp = paddle.gather(self.alphas_cumprod, i.reshape([1]))
            x = (x - (1 - acp).sqrt() * eps * 0.1) / acp.sqrt().clip(min=0.5)
            i = i - 1
        return x


case(args=[(rand(2, 3), i64(3)), (rand(2, 3), i64(0)), (rand(2, 3), i64(6))],
     rtol=1e-4, atol=1e-5)(TensorStepSampler)


@case(args=[(rand(3, 4), rand(3, 4), i64([1, 4, 9]), "epsilon"),
            (rand(3, 4), rand(3, 4), i64([1, 4, 9]), "v_prediction"),
            (rand(3, 4), rand(3, 4), i64([1, 4, 9]), "sample")])
def diffusion_training_target(x0, noise, t, prediction_type):
    acp = paddle.gather(paddle.to_tensor(_ACP), t).unsqueeze(-1)
    if prediction_type == "epsilon":
        target = noise
    elif prediction_type == "v_prediction":
        target = acp.sqrt() * noise - (1 - acp).sqrt() * x0
    elif prediction_type == "sample":
        target = x0
    else:
        raise ValueError(f"Unknown prediction type {prediction_type}")
    noisy = acp.sqrt() * x0 + (1 - acp).sqrt() * noise
    return noisy, target


@case(args=[(rand(3, 4), i64([1, 4, 9]), 5.0), (rand(3, 4), i64([1, 4, 9]), 0.0)])
def min_snr_weights(loss_per_sample, t, gamma):
    """Min-SNR loss weighting (gamma 0 turns it off)."""
    acp = paddle.gather(paddle.to_tensor(_ACP), t)
    snr = acp / (1 - acp)
    if gamma <= 0:
        return loss_per_sample.mean()
    weights = paddle.minimum(snr, paddle.full_like(snr, gamma)) / snr
    return (loss_per_sample.mean(axis=-1) * weights).mean()


@case(args=[(rand(2, 3), f32(0.05), 20), (rand(2, 3), f32(10.0), 20)])
def sample_until_converged(x, tol, max_steps):
    """A fixed-point sampler that stops when the update is small (a tensor break)."""
    prev = x
    steps = 0
    for _ in range(max_steps):
        x = 0.5 * x + 0.1 * paddle.tanh(x)
        steps += 1
        if (x - prev).abs().max() < tol:
            break
        prev = x
    return x, steps


@case(args=[(rand(4, 3), rand(4, 3), f32([0.1, 0.5, 0.9, 0.3]), 0.5),
            (rand(4, 3), rand(4, 3), f32([0.1, 0.5, 0.9, 0.3]), 0.0)])
def cfg_dropout_conditioning(cond, null_cond, draws, drop_prob):
    """Classifier-free guidance training: drop the condition where the draw is below p."""
    if drop_prob == 0.0:
        return cond
    drop = (draws < drop_prob).unsqueeze(-1)
    return paddle.where(drop, null_cond, cond)
