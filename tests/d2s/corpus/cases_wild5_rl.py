"""Reinforcement-learning code as 2026 repos write it (CleanRL / SB3 / RLlib-style ports):
GAE and discounted returns in reversed loops with a bootstrap value, advantage
normalisation, PPO clipping with logged Python floats, replay buffers with Python pointers,
epsilon-greedy with `if rand < eps`, soft target updates over `zip` of parameters, running
mean/std with Python counts and episode statistics gathered in Python lists."""
from collections import deque, namedtuple

import numpy as np

import runtime as paddle
import runtime.nn as nn

from .registry import case, f32, i64, rand

F = nn.functional


def _np_gae_cleanrl(rewards, values, dones, next_value, next_done, gamma, lam):
    T = len(rewards)
    adv = np.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(T)):
        if t == T - 1:
            nonterminal, nextvalues = 1.0 - next_done, next_value
        else:
            nonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + values


@case(args=[(f32([1, 0, 1, 1]), f32([0.5, 0.4, 0.3, 0.2]), f32([0, 0, 1, 0]), f32(0.1), f32(0.0),
             0.99, 0.95),
            (f32([0, 0, 1]), f32([0.1, 0.2, 0.3]), f32([0, 0, 0]), f32(0.7), f32(1.0), 0.9, 1.0)],
      ref=_np_gae_cleanrl, rtol=1e-5, atol=1e-5)
def cleanrl_gae(rewards, values, dones, next_value, next_done, gamma, gae_lambda):
    """CleanRL's PPO advantage loop: `reversed(range(num_steps))`, the last step
    bootstraps from `next_value`, `lastgaelam` starts as a Python 0."""
    num_steps = rewards.shape[0]
    advantages = paddle.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
        advantages[t] = lastgaelam
    returns = advantages + values
    return advantages, returns


def _np_reinforce(rewards, gamma, normalize):
    R, out = 0.0, []
    for r in rewards[::-1]:
        R = r + gamma * R
        out.insert(0, R)
    out = np.asarray(out, np.float32)
    if normalize and len(out) > 1:
        out = (out - out.mean()) / (out.std(ddof=1) + 1e-8)
    return out


@case(args=[(f32([1, 0, 2, 1]), 0.9, True), (f32([1, 0, 2]), 0.5, False), (f32([3.0]), 0.9, True)],
      ref=_np_reinforce, rtol=1e-4, atol=1e-5)
def reinforce_returns_insert(rewards, gamma, normalize):
    """REINFORCE returns: `returns.insert(0, R)` in a reversed loop over the reward tensor,
    stacked, normalised when there is more than one."""
    R = 0
    returns = []
    for r in reversed(rewards):
        R = r + gamma * R
        returns.insert(0, R)
    returns = paddle.stack(returns)
    if normalize and len(returns) > 1:
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    return returns


@case(args=[(f32([[0.1, 0.2], [0.3, 0.1]]), f32([[0.1, 0.25], [0.2, 0.1]]), f32([1.0, -1.0]),
             0.2, True),
            (f32([[0.1, 0.2], [0.3, 0.1]]), f32([[0.1, 0.2], [0.3, 0.1]]), f32([1.0, -1.0]),
             0.2, False),
            (f32([[1.5, 0.2], [0.3, 0.1]]), f32([[0.1, 0.2], [0.3, 0.9]]), f32([0.5, 0.5]),
             0.1, True)])
def ppo_clipped_loss_logged(new_logprob, old_logprob, advantages, clip_coef, norm_adv):
    """PPO's policy loss with the logged statistics CleanRL keeps: approx KL and the
    clip fraction as Python floats in a dict, and an early-stop flag."""
    logratio = (new_logprob - old_logprob).sum(axis=-1)
    ratio = logratio.exp()
    with paddle.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfracs = [((ratio - 1.0).abs() > clip_coef).astype("float32").mean().item()]
    if norm_adv:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    pg_loss1 = -advantages * ratio
    pg_loss2 = -advantages * paddle.clip(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = paddle.maximum(pg_loss1, pg_loss2).mean()
    stats = {"policy_loss": pg_loss.item(), "approx_kl": approx_kl.item(),
             "clipfrac": float(np.mean(clipfracs))}
    early_stop = stats["approx_kl"] > 0.015
    return pg_loss, stats, early_stop


class ReplayBuffer:
    """A ring buffer with Python pointers; `add` stores a transition tensor row."""

    def __init__(self, capacity, obs_dim):
        self.obs = paddle.zeros([capacity, obs_dim])
        self.rewards = paddle.zeros([capacity])
        self.capacity = capacity
        self.ptr = 0
        self.full = False

    def add(self, obs, reward):
        self.obs[self.ptr] = obs
        self.rewards[self.ptr] = reward
        self.ptr = (self.ptr + 1) % self.capacity
        self.full = self.full or self.ptr == 0

    def __len__(self):
        return self.capacity if self.full else self.ptr

    def sample(self, idx):
        return self.obs[idx], self.rewards[idx]


@case(args=[(rand(3, 2), f32([1, 2, 3]), 4, i64([0, 2])),
            (rand(5, 2), f32([1, 2, 3, 4, 5]), 4, i64([0, 3])),
            (rand(1, 2), f32([9]), 4, i64([0, 0]))])
def replay_buffer_add_sample(observations, rewards, capacity, batch_idx):
    """Fill a ring buffer from a rollout (it wraps when the rollout is longer than the
    capacity), then sample a batch by indices."""
    buf = ReplayBuffer(capacity, observations.shape[1])
    for obs, r in zip(observations, rewards):
        buf.add(obs, r)
    obs_b, rew_b = buf.sample(batch_idx)
    return obs_b, rew_b, len(buf), buf.full


@case(args=[(f32([0.1, 0.9, 0.3]), 0.05, 0.1, 2), (f32([0.1, 0.9, 0.3]), 0.5, 0.1, 2),
            (f32([0.7, 0.2, 0.3]), 0.9, 0.95, 1)])
def epsilon_greedy_python_rand(q_values, rand_value, epsilon, random_action):
    """`if random.random() < epsilon:` with the draw passed in: the action is a Python
    int either way, plus whether it was exploratory."""
    if rand_value < epsilon:
        return random_action, True
    return int(q_values.argmax()), False


def _linear_schedule(start_e, end_e, duration, t):
    slope = (end_e - start_e) / duration
    return max(slope * t + start_e, end_e)


@case(args=[(f32([[0.1, 0.9], [0.8, 0.3]]), f32([0.5, 0.01]), 10, i64([0, 0])),
            (f32([[0.1, 0.9], [0.8, 0.3]]), f32([0.5, 0.01]), 1000, i64([0, 0])),
            (f32([[0.1, 0.9], [0.8, 0.3]]), f32([0.99, 0.99]), 0, i64([1, 1]))])
def epsilon_greedy_tensor_draws(q_values, draws, global_step, random_actions):
    """CleanRL DQN's exploration: epsilon from a linear schedule of the Python step (none
    after the learning starts), the draws a tensor, so the choice per env is a `where`."""
    epsilon = _linear_schedule(1.0, 0.05, 500, global_step) if global_step < 800 else 0.0
    greedy = q_values.argmax(axis=-1)
    actions = paddle.where(draws < epsilon, random_actions, greedy)
    return actions, epsilon


class _QNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)

    def forward(self, x):
        return self.fc(x)


class DQNTargetUpdate(nn.Layer):
    """A DQN step: TD target from a target network under `no_grad`, Huber loss; every
    `target_network_frequency` steps the target is soft-updated over `zip` of the two
    parameter lists with `copy_`-style `set_value` (the target starts as a copy of the
    Q-network, which no step here trains: the update leaves it equal, calls repeat)."""

    def __init__(self):
        super().__init__()
        self.q_network = _QNet()
        self.target_network = _QNet()
        self.target_network.set_state_dict(self.q_network.state_dict())
        self.tau = 0.5
        self.target_network_frequency = 2

    def forward(self, obs, actions, rewards, next_obs, dones, global_step):
        with paddle.no_grad():
            target_max = self.target_network(next_obs).max(axis=1)
            td_target = rewards + 0.99 * target_max * (1 - dones)
        old_val = paddle.take_along_axis(self.q_network(obs), actions.unsqueeze(-1),
                                         axis=1).squeeze(-1)
        loss = F.smooth_l1_loss(old_val, td_target)
        if global_step % self.target_network_frequency == 0:
            for tp, qp in zip(self.target_network.parameters(), self.q_network.parameters()):
                tp.set_value(self.tau * qp + (1.0 - self.tau) * tp)
        return loss, float(td_target.mean())


case(args=[(rand(2, 2), i64([0, 2]), f32([1, 0]), rand(2, 2), f32([0, 1]), 1),
           (rand(2, 2), i64([1, 1]), f32([0, 0]), rand(2, 2), f32([1, 1]), 4)],
     rtol=1e-5, atol=1e-5)(DQNTargetUpdate)


@case(args=[(f32([1, 1, 1, 1, 1]), f32([0, 0, 1, 0, 0]), 3, 0.5),
            (f32([1, 2, 3]), f32([0, 0, 0]), 2, 0.9)])
def n_step_returns_deque(rewards, dones, n, gamma):
    """N-step returns with a `deque(maxlen=n)` of recent rewards, reset at episode ends."""
    window = deque(maxlen=n)
    out = []
    for r, d in zip(rewards, dones):
        window.append(r)
        G = 0.0
        for k, rk in enumerate(window):
            G = G + (gamma ** k) * rk
        out.append(G)
        if d > 0:
            window.clear()
    return paddle.stack(out), len(window)


class RunningMeanStd:
    """SB3's RunningMeanStd: `count` a Python float, mean/var tensors."""

    def __init__(self, shape, epsilon=1e-4):
        self.mean = paddle.zeros(shape)
        self.var = paddle.ones(shape)
        self.count = epsilon

    def update(self, x):
        batch_mean = x.mean(axis=0)
        batch_var = x.var(axis=0, unbiased=False)
        batch_count = x.shape[0]
        delta = batch_mean - self.mean
        tot = self.count + batch_count
        self.mean = self.mean + delta * batch_count / tot
        m2 = self.var * self.count + batch_var * batch_count + delta ** 2 * self.count * (
            batch_count / tot)
        self.var = m2 / tot
        self.count = tot


@case(args=[([rand(3, 2), rand(2, 2)], 10.0), ([rand(4, 2) * 50], 5.0)])
def normalize_observations(batches, clip_obs):
    """VecNormalize: update running stats with each batch, then normalise and clip the
    last one (the clip bites only for large observations)."""
    rms = RunningMeanStd([batches[0].shape[1]])
    for b in batches:
        rms.update(b)
    obs = (batches[-1] - rms.mean) / paddle.sqrt(rms.var + 1e-8)
    if obs.abs().max() > clip_obs:
        obs = paddle.clip(obs, -clip_obs, clip_obs)
    return obs, rms.count


@case(args=[(f32([1, 2, 0, 3, 1]), f32([0, 1, 0, 0, 1])), (f32([1, 1]), f32([0, 0])),
            (f32([5.0]), f32([1.0]))])
def episode_statistics(rewards, dones):
    """Per-environment episode statistics: returns and lengths of finished episodes are
    Python floats/ints appended under a tensor condition inside the loop."""
    episode_returns, episode_lengths = [], []
    ep_ret, ep_len = 0.0, 0
    for r, d in zip(rewards, dones):
        ep_ret += float(r)
        ep_len += 1
        if d:
            episode_returns.append(ep_ret)
            episode_lengths.append(ep_len)
            ep_ret, ep_len = 0.0, 0
    mean_ret = sum(episode_returns) / len(episode_returns) if episode_returns else None
    return episode_returns, episode_lengths, mean_ret


@case(args=[(f32([[1.0, 2.0, 0.5], [0.1, 0.1, 3.0]]), i64([1, 2]), 0.01),
            (f32([[1.0, 2.0, 0.5], [0.1, 0.1, 3.0]]), i64([0, 0]), 0.0)])
def actor_loss_with_entropy(logits, actions, ent_coef):
    """A categorical policy's log-prob and entropy from `log_softmax`; the entropy bonus is
    skipped when its coefficient is 0; returns the loss and the entropy as a float."""
    logp_all = F.log_softmax(logits, axis=-1)
    logp = paddle.take_along_axis(logp_all, actions.unsqueeze(-1), axis=-1).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(axis=-1).mean()
    loss = -logp.mean()
    if ent_coef > 0:
        loss = loss - ent_coef * entropy
    return loss, round(entropy.item(), 4)


Transition = namedtuple("Transition", ["obs", "reward", "done"])


@case(args=[([Transition(f32([1, 0]), 1.0, False), Transition(f32([0, 1]), -2.0, True)], True),
            ([Transition(f32([1, 1]), 0.5, False)], False)])
def clip_rewards_of_transitions(batch, clip_rewards):
    """Atari reward clipping over a list of namedtuple transitions; the batch is stacked
    with a `zip(*batch)` transpose."""
    obs, rewards, dones = zip(*batch)
    obs = paddle.stack([paddle.to_tensor(o) for o in obs])
    rewards = paddle.to_tensor(list(rewards), dtype="float32")
    if clip_rewards:
        rewards = paddle.sign(rewards)
    not_done = paddle.to_tensor([not d for d in dones], dtype="float32")
    return obs.sum(axis=-1) * rewards * not_done, rewards


@case(args=[(f32([0.1, 0.5, 0.2, 0.2]), i64([1, 3]), 0.4), (f32([0.25] * 4), i64([0, 1]), 1.0)],
      ref=lambda p, i, b: ((4 * p[i]) ** (-b) / ((4 * p[i]) ** (-b)).max()).astype(np.float32))
def prioritized_replay_weights(probs, idx, beta):
    """PER importance weights `(N * P(i)) ** -beta`, normalised by their max; with
    uniform priorities and beta 1 the weights are ones (checked with an assert)."""
    n = probs.shape[0]
    weights = (n * probs[idx]) ** (-beta)
    weights = weights / weights.max()
    if beta == 1.0:
        assert float(weights.min()) <= 1.0, f"weights {weights.numpy()} above 1"
    return weights


@case(args=[(f32([1, 0, 1]), f32([0.2, 0.3, 0.4]), 0.9, 0.8),
            (f32([0, 0]), f32([0.5, 0.5]), 0.5, 0.0)])
def td_lambda_while(rewards, values, gamma, lam):
    """TD(lambda) returns with a `while` over a decreasing index read from the tensor's
    length, the bootstrap value zero at the end."""
    t = rewards.shape[0] - 1
    G = paddle.zeros([])
    out = [None] * rewards.shape[0]
    while t >= 0:
        next_v = values[t + 1] if t + 1 < values.shape[0] else paddle.zeros([])
        G = rewards[t] + gamma * ((1 - lam) * next_v + lam * G)
        out[t] = G
        t -= 1
    return paddle.stack(out)


@case(args=[(f32([0.2, 0.9, 0.5]), [3, 1, 2], 0.0), (f32([0.7, 0.7, 0.1]), [3, 1, 2], 0.0),
            (f32([0.1, 0.2, 0.3]), [3, 1, 2], 1.0)])
def greedy_action_with_tie_break(q_values, action_ids, min_q):
    """A greedy policy over a discrete action table: `max(zip(q, ids))` picks the best
    action (ties by the larger id), no action when every value is below `min_q`."""
    best_q, best_action = max(zip(q_values.tolist(), action_ids))
    all_low = not (q_values.max() >= min_q)
    if all_low:
        return None, all_low
    return best_action, all_low
