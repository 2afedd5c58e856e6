"""Diffusion code as 2026 repos write it (diffusers-style schedulers and pipelines, k-diffusion
samplers): schedulers holding `self.timesteps` set by `set_timesteps`, `step()` returning a
dataclass, a namedtuple or a dict (`return_dict=False` gives a tuple), prediction types chosen
by a config string, `clip_sample`/thresholding, an Euler scheduler with a Python `step_index`
counter on self, classifier-free guidance under `if guidance_scale > 1`, guidance rescale,
callbacks that may replace the latents, EMA decay warm-up and timestep embeddings."""
import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

import runtime as paddle
from runtime import nn

from .registry import case, f32, i64, rand

F = paddle.nn.functional


def _betas(n, kind="linear"):
    if kind == "linear":
        return np.linspace(1e-4, 0.02, n, dtype=np.float32)
    steps = np.arange(n + 1, dtype=np.float64) / n
    ac = np.cos((steps + 0.008) / 1.008 * math.pi / 2) ** 2
    return np.clip(1 - ac[1:] / ac[:-1], 0, 0.999).astype(np.float32)


@dataclass
class SchedulerOutput:
    prev_sample: object
    pred_original_sample: object = None


class DDPMScheduler:
    """diffusers' DDPMScheduler, trimmed: config fields, `set_timesteps`, `step` with the
    variance noise added only for t > 0."""

    def __init__(self, num_train_timesteps=20, beta_schedule="linear",
                 prediction_type="epsilon", clip_sample=True):
        self.num_train_timesteps = num_train_timesteps
        self.betas = paddle.to_tensor(_betas(num_train_timesteps, beta_schedule))
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = paddle.cumprod(self.alphas, dim=0)
        self.prediction_type, self.clip_sample = prediction_type, clip_sample
        self.timesteps = paddle.arange(num_train_timesteps - 1, -1, -1)

    def set_timesteps(self, num_inference_steps):
        self.num_inference_steps = num_inference_steps
        step_ratio = self.num_train_timesteps // num_inference_steps
        self.timesteps = paddle.to_tensor(
            (np.arange(0, num_inference_steps) * step_ratio)[::-1].copy().astype(np.int64))

    def previous_timestep(self, t):
        return t - self.num_train_timesteps // self.num_inference_steps

    def step(self, model_output, timestep, sample, noise=None, return_dict=True):
        t = timestep
        prev_t = self.previous_timestep(t)
        alpha_prod_t = self.alphas_cumprod[t]
        alpha_prod_t_prev = self.alphas_cumprod[prev_t] if prev_t >= 0 else paddle.to_tensor(1.0)
        beta_prod_t = 1 - alpha_prod_t
        current_alpha_t = alpha_prod_t / alpha_prod_t_prev
        current_beta_t = 1 - current_alpha_t
        if self.prediction_type == "epsilon":
            pred_original = (sample - beta_prod_t ** 0.5 * model_output) / alpha_prod_t ** 0.5
        elif self.prediction_type == "sample":
            pred_original = model_output
        elif self.prediction_type == "v_prediction":
            pred_original = alpha_prod_t ** 0.5 * sample - beta_prod_t ** 0.5 * model_output
        else:
            raise ValueError(f"prediction_type {self.prediction_type} must be one of ...")
        if self.clip_sample:
            pred_original = pred_original.clip(-1.0, 1.0)
        coef_orig = (alpha_prod_t_prev ** 0.5 * current_beta_t) / beta_prod_t
        coef_cur = current_alpha_t ** 0.5 * (1 - alpha_prod_t_prev) / beta_prod_t
        prev_sample = coef_orig * pred_original + coef_cur * sample
        if t > 0 and noise is not None:
            variance = (1 - alpha_prod_t_prev) / (1 - alpha_prod_t) * current_beta_t
            prev_sample = prev_sample + variance.clip(min=1e-20) ** 0.5 * noise
        if not return_dict:
            return (prev_sample,)
        return SchedulerOutput(prev_sample=prev_sample, pred_original_sample=pred_original)


class _TinyUNet(nn.Layer):
    def __init__(self, ch=2):
        super().__init__()
        self.lin = nn.Linear(ch + 1, ch)

    def forward(self, x, t, encoder_hidden_states=None):
        temb = paddle.full([x.shape[0], 1], 1.0) * (t.astype("float32") / 20.0)
        h = self.lin(paddle.concat([x, temb], axis=-1))
        if encoder_hidden_states is not None:
            h = h + encoder_hidden_states
        return paddle.tanh(h)


class DDPMPipeline(nn.Layer):
    """A denoising loop over `scheduler.timesteps` (a tensor): the model predicts noise, the
    scheduler's dataclass output carries the next sample; per-step noise is passed in."""

    def __init__(self):
        super().__init__()
        self.unet = _TinyUNet()
        self.prediction_type = "epsilon"

    def forward(self, latents, noises, num_inference_steps=4, prediction_type="epsilon"):
        scheduler = DDPMScheduler(prediction_type=prediction_type)
        scheduler.set_timesteps(num_inference_steps)
        for i, t in enumerate(scheduler.timesteps):
            model_output = self.unet(latents, t)
            latents = scheduler.step(model_output, t, latents, noise=noises[i]).prev_sample
        return latents


case(args=[(rand(2, 2), rand(4, 2, 2), 4, "epsilon"), (rand(2, 2), rand(2, 2, 2), 2, "sample"),
           (rand(2, 2), rand(5, 2, 2), 5, "v_prediction")], rtol=1e-4, atol=1e-5)(DDPMPipeline)


DDIMOutput = namedtuple("DDIMOutput", ["prev_sample", "pred_original_sample"])


@case(args=[(rand(2, 2), rand(2, 2), i64(15), 5, 0.0, None),
            (rand(2, 2), rand(2, 2), i64(3), 5, 1.0, rand(2, 2)),
            (rand(2, 2), rand(2, 2), i64(0), 5, 0.0, None)],
      rtol=1e-4, atol=1e-5)
def ddim_step(model_output, sample, timestep, step_gap, eta, variance_noise):
    """DDIM's step: the previous timestep may fall below zero (`final_alpha_cumprod`); `eta`
    adds noise only when positive; a namedtuple comes back."""
    alphas_cumprod = paddle.cumprod(1.0 - paddle.to_tensor(_betas(20)), dim=0)
    final_alpha_cumprod = paddle.to_tensor(1.0)
    prev_timestep = timestep - step_gap
    alpha_prod_t = alphas_cumprod[timestep]
    alpha_prod_t_prev = alphas_cumprod[prev_timestep] if prev_timestep >= 0 else final_alpha_cumprod
    beta_prod_t = 1 - alpha_prod_t
    pred_original = (sample - beta_prod_t ** 0.5 * model_output) / alpha_prod_t ** 0.5
    variance = (1 - alpha_prod_t_prev) / beta_prod_t * (1 - alpha_prod_t / alpha_prod_t_prev)
    std_dev_t = eta * variance ** 0.5
    direction = (1 - alpha_prod_t_prev - std_dev_t ** 2) ** 0.5 * model_output
    prev_sample = alpha_prod_t_prev ** 0.5 * pred_original + direction
    if eta > 0:
        prev_sample = prev_sample + std_dev_t * variance_noise
    return DDIMOutput(prev_sample, pred_original)


class EulerDiscreteScheduler:
    """k-diffusion's Euler sampler as diffusers writes it: sigmas from the schedule, a Python
    `_step_index` counter on self advanced by `step()`, `init_noise_sigma` a Python float."""

    def __init__(self, num_inference_steps):
        ac = np.cumprod(1.0 - _betas(20).astype(np.float64))
        sigmas = ((1 - ac) / ac) ** 0.5
        idx = np.linspace(0, 19, num_inference_steps).round().astype(int)[::-1]
        self.sigmas = paddle.to_tensor(np.append(sigmas[idx], 0.0).astype(np.float32))
        self.timesteps = paddle.to_tensor(idx.astype(np.float32))
        self.init_noise_sigma = float(sigmas.max())
        self._step_index = None

    def scale_model_input(self, sample, timestep):
        if self._step_index is None:
            self._step_index = 0
        sigma = self.sigmas[self._step_index]
        return sample / ((sigma ** 2 + 1) ** 0.5)

    def step(self, model_output, timestep, sample, s_churn=0.0):
        sigma = self.sigmas[self._step_index]
        gamma = min(s_churn / (len(self.sigmas) - 1), 2 ** 0.5 - 1) if s_churn > 0 else 0.0
        sigma_hat = sigma * (gamma + 1)
        pred_original = sample - sigma_hat * model_output
        derivative = (sample - pred_original) / sigma_hat
        dt = self.sigmas[self._step_index + 1] - sigma_hat
        self._step_index += 1
        return {"prev_sample": sample + derivative * dt, "pred_original_sample": pred_original}


class EulerPipeline(nn.Layer):
    """Latents scaled by `init_noise_sigma`, the model input scaled per step, the dict output
    read by key; returns the latents and how many steps ran."""

    def __init__(self):
        super().__init__()
        self.unet = _TinyUNet()

    def forward(self, noise, num_inference_steps=3, s_churn=0.0):
        scheduler = EulerDiscreteScheduler(num_inference_steps)
        latents = noise * scheduler.init_noise_sigma
        for t in scheduler.timesteps:
            model_in = scheduler.scale_model_input(latents, t)
            out = self.unet(model_in, t)
            latents = scheduler.step(out, t, latents, s_churn=s_churn)["prev_sample"]
        return latents, scheduler._step_index


case(args=[(rand(2, 2), 3, 0.0), (rand(2, 2), 2, 1.0)], rtol=1e-4, atol=1e-4)(EulerPipeline)


def _rescale_noise_cfg(noise_cfg, noise_pred_text, guidance_rescale=0.0):
    std_text = noise_pred_text.std(axis=list(range(1, noise_pred_text.ndim)), keepdim=True)
    std_cfg = noise_cfg.std(axis=list(range(1, noise_cfg.ndim)), keepdim=True)
    noise_pred_rescaled = noise_cfg * (std_text / std_cfg)
    return guidance_rescale * noise_pred_rescaled + (1 - guidance_rescale) * noise_cfg


class GuidedDenoiser(nn.Layer):
    """Classifier-free guidance: the batch is doubled only when `guidance_scale > 1`, the
    prediction split with `chunk(2)`; guidance rescale under `if guidance_rescale > 0`."""

    def __init__(self):
        super().__init__()
        self.unet = _TinyUNet()

    @property
    def do_classifier_free_guidance(self):
        return self._guidance_scale > 1

    def forward(self, latents, t, cond, uncond, guidance_scale=7.5, guidance_rescale=0.0):
        self._guidance_scale = guidance_scale
        if self.do_classifier_free_guidance:
            latent_in = paddle.concat([latents] * 2)
            context = paddle.concat([uncond, cond])
        else:
            latent_in, context = latents, cond
        noise_pred = self.unet(latent_in, t, encoder_hidden_states=context)
        if self.do_classifier_free_guidance:
            noise_uncond, noise_text = noise_pred.chunk(2)
            noise_pred = noise_uncond + guidance_scale * (noise_text - noise_uncond)
            if guidance_rescale > 0.0:
                noise_pred = _rescale_noise_cfg(noise_pred, noise_text, guidance_rescale)
        return noise_pred


case(args=[(rand(2, 2), i64(5), rand(2, 2), rand(2, 2), 7.5, 0.0),
           (rand(2, 2), i64(5), rand(2, 2), rand(2, 2), 1.0, 0.0),
           (rand(2, 2), i64(9), rand(2, 2), rand(2, 2), 3.0, 0.7)],
     rtol=1e-4, atol=1e-5)(GuidedDenoiser)


class CallbackPipeline(nn.Layer):
    """`callback_on_step_end(self, i, t, callback_kwargs)` returns a dict that may replace
    the latents (`callback_outputs.pop("latents", latents)`); an `interrupt` flag on self
    skips the remaining steps with `continue` (reset when the call ends)."""

    def __init__(self):
        super().__init__()
        self.unet = _TinyUNet()
        self._interrupt = False

    def forward(self, latents, event="none"):
        self._interrupt = False
        stop_after = int(event[4:]) if event.startswith("stop") else -1
        zero_at = int(event[4:]) if event.startswith("zero") else -1

        def callback(pipe, i, t, kwargs):
            if i == zero_at:
                return {"latents": paddle.zeros_like(kwargs["latents"])}
            if i == stop_after:
                pipe._interrupt = True
            return {}

        timesteps = paddle.to_tensor([15, 10, 5, 0])
        ran = 0
        for i, t in enumerate(timesteps):
            if self._interrupt:
                continue
            latents = latents - 0.1 * self.unet(latents, t)
            ran += 1
            callback_outputs = callback(self, i, t, {"latents": latents})
            latents = callback_outputs.pop("latents", latents)
        interrupted, self._interrupt = self._interrupt, False
        return latents, ran, interrupted


case(args=[(rand(2, 2), "none"), (rand(2, 2), "stop1"), (rand(2, 2), "zero2")],
     rtol=1e-5, atol=1e-6)(CallbackPipeline)


@case(args=[(rand(2, 4), 0.9, 1.0), (rand(2, 4) * 5, 0.5, 2.0), (rand(2, 4) * 5, 0.9, 4.0)])
def dynamic_thresholding(sample, ratio, sample_max_value):
    """Imagen's dynamic thresholding: the per-sample `ratio` quantile of |x| (sorted, picked
    by an index computed in Python), clamped to [1, max], divides the sample clipped to
    [-s, s] (a Paddle port: `paddle.clip` takes one-value bounds, so maximum/minimum)."""
    batch = sample.shape[0]
    flat = sample.reshape([batch, -1]).abs()
    k = int(ratio * (flat.shape[1] - 1))
    if sample_max_value <= 1.0:
        return paddle.clip(sample, -1.0, 1.0)
    s = paddle.sort(flat, axis=1)[:, k]
    s = paddle.clip(s, min=1.0, max=sample_max_value).unsqueeze(1)
    flat = paddle.maximum(paddle.minimum(sample.reshape([batch, -1]), s), -s)
    return (flat / s).reshape(sample.shape)


def _np_timestep_embedding(t, dim, flip, shift):
    half = dim // 2
    exponent = -math.log(10000) * np.arange(half, dtype=np.float32) / (half - shift)
    emb = t[:, None].astype(np.float32) * np.exp(exponent)[None]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)
    if flip:
        emb = np.concatenate([emb[:, half:], emb[:, :half]], axis=-1)
    if dim % 2 == 1:
        emb = np.pad(emb, ((0, 0), (0, 1)))
    return emb


@case(args=[(i64([1, 10]), 4, False, 1), (i64([3, 999]), 5, True, 0)],
      ref=_np_timestep_embedding, rtol=1e-4, atol=1e-4)
def get_timestep_embedding(timesteps, embedding_dim, flip_sin_to_cos, downscale_freq_shift):
    """diffusers' sinusoidal embedding: odd dims zero-padded, sin/cos order flipped by a
    flag."""
    half_dim = embedding_dim // 2
    exponent = -math.log(10000) * paddle.arange(0, half_dim, dtype="float32")
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = timesteps[:, None].astype("float32") * paddle.exp(exponent)[None, :]
    emb = paddle.concat([paddle.sin(emb), paddle.cos(emb)], axis=-1)
    if flip_sin_to_cos:
        emb = paddle.concat([emb[:, half_dim:], emb[:, :half_dim]], axis=-1)
    if embedding_dim % 2 == 1:
        emb = F.pad(emb, [0, 0, 0, 1])
    return emb


class EMAModel:
    """diffusers' EMAModel: a Python `optimization_step`, the decay warmed up from it."""

    def __init__(self, params, decay=0.9999, min_decay=0.0, update_after_step=0,
                 inv_gamma=1.0, power=2 / 3):
        self.shadow_params = [p.clone().detach() for p in params]
        self.decay, self.min_decay, self.update_after_step = decay, min_decay, update_after_step
        self.inv_gamma, self.power = inv_gamma, power
        self.optimization_step = 0

    def get_decay(self, optimization_step):
        step = max(0, optimization_step - self.update_after_step - 1)
        if step <= 0:
            return 0.0
        cur_decay_value = 1 - (1 + step / self.inv_gamma) ** -self.power
        cur_decay_value = min(cur_decay_value, self.decay)
        return max(cur_decay_value, self.min_decay)

    def step(self, parameters):
        self.optimization_step += 1
        decay = self.get_decay(self.optimization_step)
        one_minus_decay = 1 - decay
        for s_param, param in zip(self.shadow_params, parameters):
            s_param.set_value(s_param - one_minus_decay * (s_param - param))
        return decay


@case(args=[([rand(2, 2), rand(3)], [rand(2, 2), rand(3)], 1),
            ([rand(2, 2), rand(3)], [rand(2, 2), rand(3)], 4)], rtol=1e-5, atol=1e-6)
def ema_warmup_updates(shadow, params, steps):
    """EMA over `steps` updates from the same parameters; the decays are Python floats."""
    ema = EMAModel(shadow)
    decays = [ema.step(params) for _ in range(steps)]
    return ema.shadow_params, decays, ema.optimization_step


@case(args=[(rand(2, 3), rand(2, 3), rand(2, 1), 0.0, None),
            (rand(2, 3), rand(2, 3), rand(2, 1), 0.1, None),
            (rand(2, 3), rand(2, 3), rand(2, 1), 0.0, 5.0)])
def training_loss_with_noise_offset(model_pred, noise, offset_noise, noise_offset, snr_gamma):
    """A training target with an optional noise offset, MSE per sample, and the min-SNR
    weighting only when `snr_gamma` is given; the loss comes back with its float."""
    if noise_offset:
        noise = noise + noise_offset * offset_noise
    if snr_gamma is None:
        loss = F.mse_loss(model_pred, noise, reduction="mean")
    else:
        snr = paddle.to_tensor([2.0, 8.0])
        mse_loss_weights = paddle.minimum(snr, paddle.full_like(snr, snr_gamma)) / snr
        loss = F.mse_loss(model_pred, noise, reduction="none").mean(axis=1)
        loss = (loss * mse_loss_weights).mean()
    return loss, float(loss)


@case(args=[(rand(2, 2), rand(2, 2), f32([[1, 0], [0, 1]]), rand(3, 2, 2), 3),
            (rand(2, 2), rand(2, 2), f32([[0, 0], [0, 0]]), rand(2, 2, 2), 2)],
      rtol=1e-5, atol=1e-6)
def inpaint_blend_loop(latents, init_latents, mask, noises, num_steps):
    """Inpainting: after every step but the last, the known region is re-noised to the next
    timestep and blended in with the mask; the last step blends the clean latents."""
    alphas = paddle.to_tensor(np.linspace(0.5, 0.99, num_steps).astype(np.float32))
    timesteps = list(range(num_steps))
    for i, t in enumerate(timesteps):
        latents = latents * 0.9
        init_latents_proper = init_latents
        if i < len(timesteps) - 1:
            a = alphas[i + 1]
            init_latents_proper = a.sqrt() * init_latents + (1 - a).sqrt() * noises[i]
        latents = (1 - mask) * init_latents_proper + mask * latents
    return latents


@case(args=[(rand(2, 2), 1.0, 0.0), (rand(2, 2) * 10, 0.5, 0.5), (rand(2, 2), 0.0, 0.0)])
def karras_sigma_step(x, sigma_max, s_noise):
    """A Karras-schedule Heun step with `sigma_next == 0` handled as Euler; the schedule is
    computed with `math` on Python floats, the churn added only for s_noise > 0."""
    rho = 7.0
    sigmas = [(sigma_max ** (1 / rho) + i / 2 * (0.1 ** (1 / rho) - sigma_max ** (1 / rho))) ** rho
              for i in range(3)] if sigma_max > 0 else [0.0, 0.0, 0.0]
    sigmas.append(0.0)
    for sigma, sigma_next in zip(sigmas[:-1], sigmas[1:]):
        denoised = x / (1.0 + sigma ** 2)
        d = (x - denoised) / sigma if sigma > 0 else paddle.zeros_like(x)
        if sigma_next == 0:
            x = x + d * (sigma_next - sigma)
        else:
            x2 = x + d * (sigma_next - sigma)
            d2 = (x2 - x2 / (1.0 + sigma_next ** 2)) / sigma_next
            x = x + (d + d2) / 2 * (sigma_next - sigma)
        if s_noise > 0 and x.abs().max() > 1.0:
            x = x * (1 - s_noise)
    return x, len(sigmas)
