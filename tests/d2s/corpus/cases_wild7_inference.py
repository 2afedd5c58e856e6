"""2025-26 scientific and probabilistic code, written as those repos write it: NeRF volume
rendering with early ray termination (nerfstudio / instant-ngp style `T < eps` breaks),
adaptive ODE solvers (Dormand-Prince RK45 with accept/reject step control, event detection,
torchdiffeq-style method tables), MCMC (random-walk Metropolis-Hastings, HMC leapfrog with
an analytic and an autodiff potential, simulated annealing), Kalman and particle filters
(missing measurements, ESS-triggered systematic resampling) and quasi-Newton pieces
(Armijo backtracking `while loss_new > loss + c*t*g: t *= 0.5`, the L-BFGS two-loop
recursion with a curvature check). Random draws are passed in as tensors, as JAX-style code
threads its keys."""
import math
from dataclasses import dataclass, field

import numpy as np

import runtime as torch
import runtime.nn as nn

from .registry import case, f32, rand

# ---- NeRF volume rendering ----------------------------------------------------------------


def _np_render_ray(sigma, rgb, deltas, eps):
    T, color, n = 1.0, np.zeros(3, np.float32), 0
    for i in range(sigma.shape[0]):
        alpha = 1.0 - np.exp(-sigma[i] * deltas[i])
        color = color + T * alpha * rgb[i]
        T = T * (1.0 - alpha)
        n += 1
        if T < eps:
            break
    return {"rgb": color, "opacity": np.float32(1.0 - T), "n_samples": n}


@case(args=[(rand(6, lo=0.0, hi=0.3), rand(6, 3, lo=0, hi=1), f32([0.5] * 6), 1e-2),
            (f32([0.1, 5.0, 9.0, 9.0, 1.0, 1.0]), rand(6, 3, lo=0, hi=1), f32([0.5] * 6), 1e-2),
            (f32([20.0, 0, 0, 0, 0, 0]), rand(6, 3, lo=0, hi=1), f32([0.5] * 6), 1e-3)])
def render_ray_early_termination(sigma, rgb, deltas, eps):
    """instant-ngp's per-ray marcher: accumulate until the transmittance drops under eps,
    counting samples marched (a Python int) for the stats dict."""
    transmittance = torch.ones([])
    color = torch.zeros([3])
    n_samples = 0
    for i in range(sigma.shape[0]):
        alpha = 1.0 - torch.exp(-sigma[i] * deltas[i])
        weight = transmittance * alpha
        color = color + weight * rgb[i]
        transmittance = transmittance * (1.0 - alpha)
        n_samples += 1
        if transmittance < eps:
            break
    return {"rgb": color, "opacity": 1.0 - transmittance, "n_samples": n_samples}


def _np_march(sigma, rgb, step=0.5, eps=1e-2):
    R, S = sigma.shape
    T = np.ones(R, np.float32)
    acc = np.zeros((R, 3), np.float32)
    steps = 0
    for s in range(S):
        active = T > eps
        if not active.any():
            break
        alpha = 1 - np.exp(-sigma[:, s] * step)
        w = np.where(active, T * alpha, 0.0).astype(np.float32)
        acc = acc + w[:, None] * rgb[:, s]
        T = np.where(active, T * (1 - alpha), T).astype(np.float32)
        steps += 1
    return acc, T, steps


@case(args=[(rand(3, 5, lo=0, hi=0.4), rand(3, 5, 3, lo=0, hi=1)),
            (rand(3, 5, lo=8, hi=9), rand(3, 5, 3, lo=0, hi=1))],
      ref=_np_march, rtol=1e-5, atol=1e-6,
      batch=lambda b: (rand(b, 5, lo=0, hi=4), rand(b, 5, 3, lo=0, hi=1)))
def march_rays_until_opaque(sigma, rgb, step_size=0.5, eps=1e-2):
    """A batched marcher (nerfacc-style): rays stop contributing when opaque; the loop stops
    when no ray is active."""
    num_rays, num_samples = sigma.shape
    T = torch.ones([num_rays])
    acc = torch.zeros([num_rays, 3])
    steps = 0
    for s in range(num_samples):
        active = T > eps
        if not active.any():
            break
        alpha = 1 - torch.exp(-sigma[:, s] * step_size)
        w = torch.where(active, T * alpha, torch.zeros_like(T))
        acc = acc + w.unsqueeze(-1) * rgb[:, s]
        T = torch.where(active, T * (1 - alpha), T)
        steps += 1
    return acc, T, steps


def _np_sample_pdf(bins, weights, u, det):
    w = weights + 1e-5
    pdf = w / w.sum(-1, keepdims=True)
    cdf = np.concatenate([np.zeros_like(pdf[..., :1]), np.cumsum(pdf, -1)], -1)
    if det:
        u = np.broadcast_to(np.linspace(0.0, 1.0, u.shape[-1], dtype=np.float32), u.shape)
    out = []
    for r in range(bins.shape[0]):
        idx = np.searchsorted(cdf[r], u[r], side="right")
        below = np.clip(idx - 1, 0, cdf.shape[-1] - 1)
        above = np.clip(idx, 0, cdf.shape[-1] - 1)
        c0, c1 = cdf[r][below], cdf[r][above]
        b0, b1 = bins[r][below], bins[r][above]
        denom = np.where(c1 - c0 < 1e-5, 1.0, c1 - c0)
        out.append(b0 + (u[r] - c0) / denom * (b1 - b0))
    return np.stack(out).astype(np.float32)


@case(args=[(np.sort(rand(2, 5, lo=0, hi=4), -1), rand(2, 4, lo=0, hi=1),
             rand(2, 6, lo=0, hi=1), False),
            (np.sort(rand(2, 5, lo=0, hi=4), -1), rand(2, 4, lo=0, hi=1),
             rand(2, 6, lo=0, hi=1), True)],
      ref=_np_sample_pdf, rtol=1e-4, atol=1e-5)
def hierarchical_sample_pdf(bins, weights, u, det):
    """NeRF's `sample_pdf` (inverse transform sampling of the coarse weights): a Python `det`
    flag switches to stratified linspace samples."""
    weights = weights + 1e-5
    pdf = weights / weights.sum(-1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.concat([torch.zeros_like(cdf[..., :1]), cdf], -1)
    if det:
        u = torch.linspace(0.0, 1.0, u.shape[-1]).expand(list(u.shape))
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.clip(inds - 1, 0, cdf.shape[-1] - 1)
    above = torch.clip(inds, 0, cdf.shape[-1] - 1)
    cdf_g0 = torch.take_along_axis(cdf, below, -1)
    cdf_g1 = torch.take_along_axis(cdf, above, -1)
    bins_g0 = torch.take_along_axis(bins, below, -1)
    bins_g1 = torch.take_along_axis(bins, above, -1)
    denom = cdf_g1 - cdf_g0
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g0) / denom
    return bins_g0 + t * (bins_g1 - bins_g0)


# ---- adaptive ODE solvers -----------------------------------------------------------------
_DP_C = [0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]
_DP_A = [[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
         [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
         [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
         [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
_DP_B5 = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0]
_DP_B4 = [5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]


def _dopri_step(f, t, y, h):
    ks = []
    for i in range(7):
        yi = y
        for j, a in enumerate(_DP_A[i]):
            yi = yi + h * a * ks[j]
        ks.append(f(t + _DP_C[i] * h, yi))
    y5 = y
    y4 = y
    for b5, b4, k in zip(_DP_B5, _DP_B4, ks):
        y5 = y5 + h * b5 * k
        y4 = y4 + h * b4 * k
    return y5, y5 - y4


@dataclass
class SolverOptions:
    rtol: float = 1e-3
    atol: float = 1e-6
    safety: float = 0.9
    max_steps: int = 50
    first_step: float = 0.1


@case(args=[(f32([1.0, 0.0]), f32(2.0), SolverOptions()),
            (f32([1.0, 0.0]), f32(12.0), SolverOptions(rtol=1e-5, max_steps=8)),
            (f32([0.5, 0.5]), f32(0.05), SolverOptions(first_step=0.5))],
      rtol=1e-4, atol=1e-5)
def dopri5_adaptive(y0, t1, opts):
    """A torchdiffeq-like RK45: error norm against rtol/atol, accept/reject, step factor
    clipped to [0.2, 10], a step cap from the options; counts are Python ints."""
    def rhs(t, y):
        return torch.stack([y[1], -y[0] - 0.1 * y[1]])

    t = torch.zeros([])
    y = y0
    h = torch.full([], opts.first_step)
    n_accept, n_reject = 0, 0
    while t < t1 and n_accept + n_reject < opts.max_steps:
        h = torch.minimum(h, t1 - t)
        y_new, err = _dopri_step(rhs, t, y, h)
        scale = opts.atol + opts.rtol * torch.maximum(y.abs(), y_new.abs())
        err_norm = ((err / scale) ** 2).mean().sqrt()
        if err_norm <= 1.0:
            t = t + h
            y = y_new
            n_accept += 1
        else:
            n_reject += 1
        factor = opts.safety * (err_norm + 1e-10) ** -0.2
        h = h * torch.clip(factor, 0.2, 10.0)
    return {"y": y, "t": t, "accepted": n_accept, "rejected": n_reject}


def _euler(f, t, y, h):
    return y + h * f(t, y)


def _midpoint(f, t, y, h):
    return y + h * f(t + h / 2, y + h / 2 * f(t, y))


def _rk4(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + h / 2, y + h / 2 * k1)
    k3 = f(t + h / 2, y + h / 2 * k2)
    k4 = f(t + h, y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


FIXED_GRID_SOLVERS = {"euler": _euler, "midpoint": _midpoint, "rk4": _rk4}


def _np_odeint(y0, ts, w, method):
    f = (lambda t, y: np.tanh(y @ w) - 0.5 * y)
    out = [y0]
    y = y0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        h = t1 - t0
        if method == "euler":
            y = y + h * f(t0, y)
        elif method == "midpoint":
            y = y + h * f(t0 + h / 2, y + h / 2 * f(t0, y))
        else:
            k1 = f(t0, y)
            k2 = f(t0 + h / 2, y + h / 2 * k1)
            k3 = f(t0 + h / 2, y + h / 2 * k2)
            k4 = f(t0 + h, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(y)
    return np.stack(out)


@case(args=[(rand(2, 3), f32([0.0, 0.3, 0.5, 1.0]), rand(3, 3), "rk4"),
            (rand(2, 3), f32([0.0, 0.5, 1.0]), rand(3, 3), "euler"),
            (rand(2, 3), f32([0.0, 0.25, 1.0]), rand(3, 3), "midpoint")],
      ref=_np_odeint, rtol=1e-4, atol=1e-5)
def odeint_fixed_grid(y0, t, w, method):
    """torchdiffeq's `odeint(func, y0, t, method=...)` for fixed-grid methods: a dict of
    step functions chosen by name, the time grid a tensor iterated pairwise."""
    def func(t, y):
        return torch.tanh(torch.matmul(y, w)) - 0.5 * y

    step = FIXED_GRID_SOLVERS[method]
    solution = [y0]
    y = y0
    for t0, t1 in zip(t[:-1], t[1:]):
        y = step(func, t0, y, t1 - t0)
        solution.append(y)
    return torch.stack(solution)


@case(args=[(f32([1.0, 0.0]), f32(0.1), 40), (f32([0.05, -1.0]), f32(0.1), 40),
            (f32([3.0, 1.0]), f32(0.05), 5)], rtol=1e-4, atol=1e-5)
def integrate_until_event(y0, dt, max_steps):
    """Event detection (scipy `events=` / torchdiffeq `odeint_event`): step until the first
    component crosses zero, then interpolate the crossing time linearly; -1.0 if none."""
    t = 0.0
    y = y0
    t_event = -1.0
    for _ in range(max_steps):
        y_next = y + dt * torch.stack([y[1], -y[0]])
        if y[0] * y_next[0] < 0:
            frac = y[0] / (y[0] - y_next[0])
            t_event = t + float(frac * dt)
            break
        y = y_next
        t = t + float(dt)
    return y, t_event


# ---- MCMC -----------------------------------------------------------------------------------
def _log_prob(x, mu, inv_var):
    return -0.5 * (((x - mu) ** 2) * inv_var).sum()


def _np_mh(x0, noise, u, step_size, mu, inv_var):
    x = x0.copy()
    lp = -0.5 * (((x - mu) ** 2) * inv_var).sum()
    accepted = 0
    chain = []
    for i in range(noise.shape[0]):
        prop = x + step_size * noise[i]
        lp_prop = -0.5 * (((prop - mu) ** 2) * inv_var).sum()
        if np.log(u[i]) < lp_prop - lp:
            x, lp = prop, lp_prop
            accepted += 1
        chain.append(x)
    return np.stack(chain), accepted / noise.shape[0]


_MU, _IV = f32([1.0, -1.0]), f32([1.0, 4.0])


@case(args=[(f32([0.0, 0.0]), rand(6, 2), rand(6, lo=0.01, hi=1), 0.5, _MU, _IV),
            (f32([9.0, 9.0]), rand(6, 2), rand(6, lo=0.99, hi=1), 3.0, _MU, _IV),
            (f32([1.0, -1.0]), rand(6, 2), rand(6, lo=0.0001, hi=0.001), 0.1, _MU, _IV)],
      ref=_np_mh, rtol=1e-5, atol=1e-6)
def metropolis_hastings_chain(x0, noise, uniforms, step_size, mu, inv_var):
    """Random-walk Metropolis: accept when log u < log p(x') - log p(x); the acceptance rate
    is reported as a Python float."""
    x = x0
    log_p = _log_prob(x, mu, inv_var)
    n_accepted = 0
    chain = []
    num_steps = noise.shape[0]
    for i in range(num_steps):
        proposal = x + step_size * noise[i]
        log_p_prop = _log_prob(proposal, mu, inv_var)
        if torch.log(uniforms[i]) < log_p_prop - log_p:
            x, log_p = proposal, log_p_prop
            n_accepted += 1
        chain.append(x)
    return torch.stack(chain), n_accepted / num_steps


class GaussianPotential(nn.Layer):
    """U(q) = 0.5 q^T A q with a learnable-looking precision; the analytic gradient is used
    by the leapfrog, as NumPyro's `potential_fn` / `grad` pairs are."""

    def __init__(self):
        super().__init__()
        self.register_buffer("precision", torch.to_tensor(
            np.array([[2.0, 0.3], [0.3, 1.0]], np.float32)))

    def energy(self, q):
        return 0.5 * (torch.matmul(q, self.precision) * q).sum()

    def grad_energy(self, q):
        return torch.matmul(self.precision, q)

    def forward(self, q0, momenta, uniforms, step_size, num_leapfrog):
        q = q0
        samples, accepts = [], []
        for i in range(momenta.shape[0]):
            p = momenta[i]
            q_new, p_new = q, p
            p_new = p_new - 0.5 * step_size * self.grad_energy(q_new)
            for _ in range(num_leapfrog):
                q_new = q_new + step_size * p_new
                p_new = p_new - step_size * self.grad_energy(q_new)
            p_new = p_new + 0.5 * step_size * self.grad_energy(q_new)
            h_old = self.energy(q) + 0.5 * (p * p).sum()
            h_new = self.energy(q_new) + 0.5 * (p_new * p_new).sum()
            accept = torch.log(uniforms[i]) < h_old - h_new
            if accept:
                q = q_new
            samples.append(q)
            accepts.append(bool(accept))
        return torch.stack(samples), accepts


case(args=[(f32([1.0, 1.0]), rand(3, 2), rand(3, lo=0.01, hi=1), 0.2, 3),
           (f32([1.0, 1.0]), rand(3, 2) * 4, rand(3, lo=0.9, hi=1), 1.5, 2)],
     rtol=1e-4, atol=1e-5)(GaussianPotential)


def _banana(q):
    return 0.5 * q[0] ** 2 + 2.0 * (q[1] - q[0] ** 2) ** 2


@case(args=[(f32([0.5, 0.2]), rand(2), f32(0.3), 0.1, 4),
            (f32([0.5, 0.2]), rand(2) * 5, f32(0.999), 0.4, 4)], rtol=1e-4, atol=1e-5)
def hmc_step_autograd(q0, p0, u, step_size, num_steps):
    """One HMC transition whose potential gradient comes from autograd (`torch.autograd.grad`
    in a leapfrog loop), Metropolis-corrected; returns the state and whether it moved."""
    def grad_u(q):
        q = q.detach()
        q.stop_gradient = False
        return torch.grad(_banana(q), q)[0]

    q, p = q0, p0 - 0.5 * step_size * grad_u(q0)
    for i in range(num_steps):
        q = q + step_size * p
        if i != num_steps - 1:
            p = p - step_size * grad_u(q)
    p = p - 0.5 * step_size * grad_u(q)
    current_h = _banana(q0) + 0.5 * (p0 ** 2).sum()
    proposed_h = _banana(q) + 0.5 * (p ** 2).sum()
    if u < torch.exp(current_h - proposed_h):
        return q.detach(), True
    return q0, False


@dataclass
class AnnealState:
    temperature: float = 1.0
    best_energy: float = float("inf")
    history: list = field(default_factory=list)


@case(args=[(f32([2.0, -1.0]), rand(5, 2), rand(5, lo=0, hi=1), 0.7),
            (f32([0.0, 0.0]), rand(5, 2) * 3, rand(5, lo=0.95, hi=1), 0.95)],
      rtol=1e-5, atol=1e-6)
def simulated_annealing(x0, moves, uniforms, cooling):
    """Simulated annealing with the schedule on a dataclass: downhill moves always, uphill
    with probability exp(-dE/T); the best energy kept as a Python float, T cooled per step."""
    state = AnnealState()
    x = x0
    energy = (x ** 2).sum()
    for i in range(moves.shape[0]):
        cand = x + moves[i]
        e_cand = (cand ** 2).sum()
        delta = e_cand - energy
        if delta < 0 or uniforms[i] < torch.exp(-delta / state.temperature):
            x, energy = cand, e_cand
        if float(energy) < state.best_energy:
            state.best_energy = float(energy)
        state.history.append(state.temperature)
        state.temperature *= cooling
    return x, state.best_energy, len(state.history)


# ---- filters --------------------------------------------------------------------------------
def _np_kalman(zs, A, H, Q, R):
    n = A.shape[0]
    x, P = np.zeros(n, np.float32), np.eye(n, dtype=np.float32)
    means, ll, skipped = [], 0.0, 0
    for z in zs:
        x = A @ x
        P = A @ P @ A.T + Q
        if np.isnan(z).any():
            skipped += 1
            means.append(x)
            continue
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        r = z - H @ x
        x = x + K @ r
        P = (np.eye(n, dtype=np.float32) - K @ H) @ P
        ll += float(-0.5 * (r @ np.linalg.inv(S) @ r + np.log(np.linalg.det(S))
                            + len(z) * math.log(2 * math.pi)))
        means.append(x)
    return np.stack(means), ll, skipped


_A = f32([[1.0, 1.0], [0.0, 1.0]])
_H = f32([[1.0, 0.0]])
_Q = f32([[0.01, 0.0], [0.0, 0.01]])
_R = f32([[0.5]])


@case(args=[(f32([[1.0], [2.1], [2.9], [4.2]]), _A, _H, _Q, _R),
            (f32([[1.0], [np.nan], [3.1], [np.nan]]), _A, _H, _Q, _R)],
      ref=_np_kalman, rtol=1e-4, atol=1e-4)
def kalman_filter_missing(measurements, A, H, Q, R):
    """filterpy-style predict/update; a NaN measurement (a dropped sensor reading) skips the
    update; the log-likelihood is accumulated as a Python float."""
    n = A.shape[0]
    x = torch.zeros([n])
    P = torch.eye(n)
    means = []
    log_lik = 0.0
    skipped = 0
    for z in measurements:
        x = torch.matmul(A, x)
        P = torch.matmul(torch.matmul(A, P), A.t()) + Q
        if torch.isnan(z).any():
            skipped += 1
            means.append(x)
            continue
        S = torch.matmul(torch.matmul(H, P), H.t()) + R
        S_inv = torch.linalg.inv(S)
        K = torch.matmul(torch.matmul(P, H.t()), S_inv)
        resid = z - torch.matmul(H, x)
        x = x + torch.matmul(K, resid)
        P = torch.matmul(torch.eye(n) - torch.matmul(K, H), P)
        quad = torch.matmul(torch.matmul(resid, S_inv), resid)
        log_lik += float(-0.5 * (quad + torch.log(torch.linalg.det(S))
                                 + z.shape[0] * math.log(2 * math.pi)))
        means.append(x)
    return torch.stack(means), log_lik, skipped


def _np_pf(particles, obs, u, noise):
    n = particles.shape[0]
    w = np.full(n, 1.0 / n, np.float32)
    n_res = 0
    ests = []
    for t in range(obs.shape[0]):
        particles = particles + noise[t]
        w = w * np.exp(-0.5 * (particles - obs[t]) ** 2)
        w = w / w.sum()
        ests.append((w * particles).sum())
        ess = 1.0 / (w ** 2).sum()
        if ess < n / 2:
            pos_ = (np.arange(n, dtype=np.float32) + u[t]) / n
            idx = np.searchsorted(np.cumsum(w), pos_)
            idx = np.minimum(idx, n - 1)
            particles = particles[idx]
            w = np.full(n, 1.0 / n, np.float32)
            n_res += 1
    return np.stack(ests).astype(np.float32), n_res


@case(args=[(rand(8, lo=-1, hi=1), f32([0.1, 0.2, 0.1]), rand(3, lo=0, hi=1),
             rand(3, 8, lo=-0.05, hi=0.05)),
            (rand(8, lo=-3, hi=3), f32([2.5, 2.7, 2.9]), rand(3, lo=0, hi=1),
             rand(3, 8, lo=-0.05, hi=0.05))],
      ref=_np_pf, rtol=1e-4, atol=1e-5)
def bootstrap_particle_filter(particles, observations, resample_u, process_noise):
    """A bootstrap particle filter: reweight by the likelihood, systematic resampling when
    the effective sample size drops under N/2 (counted as a Python int)."""
    n = particles.shape[0]
    weights = torch.full([n], 1.0 / n)
    n_resampled = 0
    estimates = []
    for t in range(observations.shape[0]):
        particles = particles + process_noise[t]
        weights = weights * torch.exp(-0.5 * (particles - observations[t]) ** 2)
        weights = weights / weights.sum()
        estimates.append((weights * particles).sum())
        ess = 1.0 / (weights ** 2).sum()
        if ess < n / 2:
            positions = (torch.arange(n, dtype="float32") + resample_u[t]) / n
            idx = torch.searchsorted(torch.cumsum(weights, 0), positions)
            idx = torch.clip(idx, max=n - 1)
            particles = particles[idx]
            weights = torch.full([n], 1.0 / n)
            n_resampled += 1
    return torch.stack(estimates), n_resampled


# ---- quasi-Newton and line search --------------------------------------------------------------
def _quad(x, Aq, b):
    return 0.5 * (torch.matmul(Aq, x) * x).sum() - (b * x).sum()


@case(args=[(f32([3.0, -2.0]), f32([[3.0, 0.5], [0.5, 1.0]]), f32([1.0, 1.0]), 1e-4, 1.0),
            (f32([0.01, 0.0]), f32([[3.0, 0.5], [0.5, 1.0]]), f32([0.0, 0.0]), 0.5, 8.0),
            (f32([3.0, -2.0]), f32([[30.0, 0.5], [0.5, 10.0]]), f32([1.0, 1.0]), 1e-4, 1.0)],
      rtol=1e-5, atol=1e-6)
def armijo_backtracking(x, Aq, b, c, t0):
    """The textbook backtracking line search along -grad:
    `while f(x + t d) > f(x) + c t g.d: t *= 0.5`, with an iteration cap; t is a float."""
    g = torch.matmul(Aq, x) - b
    d = -g
    loss = _quad(x, Aq, b)
    gd = (g * d).sum()
    t = t0
    n_halvings = 0
    loss_new = _quad(x + t * d, Aq, b)
    while loss_new > loss + c * t * gd and n_halvings < 20:
        t *= 0.5
        n_halvings += 1
        loss_new = _quad(x + t * d, Aq, b)
    return x + t * d, t, n_halvings


@case(args=[(f32([3.0, -2.0, 1.0]), f32([1.0, 2.0, 3.0]), 3, 20, 1e-4),
            (f32([0.0, 0.0, 0.0]), f32([0.0, 0.0, 0.0]), 3, 20, 1e-4),
            (f32([3.0, -2.0, 1.0]), f32([5.0, 0.5, 10.0]), 2, 2, 1e-8)],
      rtol=1e-3, atol=1e-4)
def lbfgs_two_loop(x0, scales, history_size, max_iter, tol):
    """Minimal L-BFGS on a diagonal quadratic: the two-loop recursion over Python lists of
    (s, y) pairs, a curvature check before storing a pair, a FIFO of `history_size`, and a
    gradient-norm stop; returns the point, the iteration count and the final norm as float."""
    def grad(x):
        return scales * x

    x = x0
    g = grad(x)
    s_hist, y_hist = [], []
    n_iter = 0
    for it in range(max_iter):
        if g.norm() < tol:
            break
        q = g
        alphas = []
        for s, y in zip(reversed(s_hist), reversed(y_hist)):
            rho = 1.0 / (y * s).sum()
            a = rho * (s * q).sum()
            q = q - a * y
            alphas.append((rho, a))
        if s_hist:
            gamma = (s_hist[-1] * y_hist[-1]).sum() / (y_hist[-1] * y_hist[-1]).sum()
        else:
            gamma = 0.1
        r = gamma * q
        for (s, y), (rho, a) in zip(zip(s_hist, y_hist), reversed(alphas)):
            b = rho * (y * r).sum()
            r = r + s * (a - b)
        x_new = x - r
        g_new = grad(x_new)
        s_k, y_k = x_new - x, g_new - g
        if (s_k * y_k).sum() > 1e-10:
            if len(s_hist) == history_size:
                s_hist.pop(0)
                y_hist.pop(0)
            s_hist.append(s_k)
            y_hist.append(y_k)
        x, g = x_new, g_new
        n_iter += 1
    return x, n_iter, g.norm().item()


@case(args=[(f32([2.0, 2.0]), 0.1, 1e-3, 100), (f32([1e-5, 0.0]), 0.1, 1e-3, 100),
            (f32([2.0, 2.0]), 0.4, 1e-6, 5)], rtol=1e-4, atol=1e-5)
def gradient_descent_until_converged(w0, lr, tol, max_iter):
    """A Rosenbrock-like descent loop with autograd, stopping on the gradient norm; the loss
    curve is a Python list of floats (`loss.item()` per step)."""
    w = w0.detach()
    w.stop_gradient = False
    losses = []
    it = 0
    for it in range(max_iter):
        loss = (w[0] - 1.0) ** 2 + 0.5 * (w[1] - w[0] ** 2) ** 2
        (g,) = torch.grad(loss, w)
        losses.append(loss.item())
        if g.norm() < tol:
            break
        w = (w - lr * g).detach()
        w.stop_gradient = False
    return w.detach(), it, losses[-1], len(losses)


@case(args=[(f32(2.0), 1e-6, 20), (f32(0.0), 1e-6, 20), (f32(-3.0), 1e-10, 3)],
      rtol=1e-5, atol=1e-6)
def newton_raphson_damped(x0, tol, max_iter):
    """Newton's method on x^3 - 2x - 5 with a damping step halved while the residual grows
    (a tensor `while` inside a Python loop), a tolerance break and a Python iteration count."""
    def f(x):
        return x ** 3 - 2 * x - 5

    x = x0
    n_iter, n_damped = 0, 0
    for _ in range(max_iter):
        fx = f(x)
        if fx.abs() < tol:
            break
        step = fx / (3 * x ** 2 - 2 + 1e-12)
        lam = 1.0
        while f(x - lam * step).abs() > fx.abs() and lam > 1e-3:
            lam = lam * 0.5
            n_damped += 1
        x = x - lam * step
        n_iter += 1
    return x, n_iter, n_damped


@case(args=[(f32([0.0, 0.0]), rand(8, 2), rand(8, lo=0.01, hi=1), 0.8, 2, 2),
            (f32([5.0, 5.0]), rand(8, 2) * 3, rand(8, lo=0.9, hi=1), 2.0, 3, 1)],
      rtol=1e-5, atol=1e-6)
def mh_burn_in_and_thinning(x0, noise, uniforms, step_size, burn_in, thin):
    """A sampler loop with burn-in and thinning decided by the Python step index and an
    accept decided by the tensor ratio; kept samples in a list, acceptance logged per phase."""
    x = x0
    logp = -0.5 * (x ** 2).sum()
    kept = []
    accepted = {"burn_in": 0, "sampling": 0}
    for i in range(noise.shape[0]):
        prop = x + step_size * noise[i]
        logp_prop = -0.5 * (prop ** 2).sum()
        phase = "burn_in" if i < burn_in else "sampling"
        if torch.log(uniforms[i]) < logp_prop - logp:
            x, logp = prop, logp_prop
            accepted[phase] += 1
        if i >= burn_in and (i - burn_in) % thin == 0:
            kept.append(x)
    return torch.stack(kept), accepted


@case(args=[(rand(6, lo=-1, hi=1), rand(6, lo=0, hi=1)),
            (f32([0.0, 0.0, 0.0, 0.0, 0.0, 5.0]), f32([0.1, 0.3, 0.5, 0.7, 0.9, 0.95]))])
def multinomial_resample_by_cdf(log_weights, uniforms):
    """Multinomial resampling written with a cumsum and a per-draw search over the CDF (a
    `while` over the index, as textbook particle-filter code does)."""
    w = torch.exp(log_weights - log_weights.max())
    cdf = torch.cumsum(w / w.sum(), 0)
    n = cdf.shape[0]
    idx = []
    for k in range(uniforms.shape[0]):
        j = 0
        while j < n - 1 and cdf[j] < uniforms[k]:
            j += 1
        idx.append(j)
    return torch.to_tensor(idx, dtype="int64"), max(idx)


class DepthRenderer(nn.Layer):
    """A small NeRF MLP queried along each ray's samples with per-ray early termination;
    returns a dict with depth, accumulated opacity and the samples queried (Python int)."""

    def __init__(self):
        super().__init__()
        self.density = nn.Linear(3, 1)

    def forward(self, origins, dirs, t_vals, eps=1e-3):
        out = {"depth": [], "acc": [], "queried": 0}
        for r in range(origins.shape[0]):
            T = torch.ones([])
            depth = torch.zeros([])
            for s in range(t_vals.shape[0] - 1):
                pt = origins[r] + t_vals[s] * dirs[r]
                sigma = torch.nn.functional.softplus(self.density(pt))[0] * 5.0
                alpha = 1.0 - torch.exp(-sigma * (t_vals[s + 1] - t_vals[s]))
                depth = depth + T * alpha * t_vals[s]
                T = T * (1.0 - alpha)
                out["queried"] += 1
                if T < eps:
                    break
            out["depth"].append(depth)
            out["acc"].append(1.0 - T)
        return {"depth": torch.stack(out["depth"]), "acc": torch.stack(out["acc"]),
                "queried": out["queried"]}


case(args=[(rand(2, 3), rand(2, 3), f32([0.0, 0.5, 1.0, 1.5, 2.0])),
           (rand(2, 3) * 4 + 4, rand(2, 3), f32([0.0, 2.0, 4.0, 6.0, 8.0]))],
     rtol=1e-4, atol=1e-5)(DepthRenderer)
