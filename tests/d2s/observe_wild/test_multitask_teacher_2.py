"""Multi-task training as projects write it: a frozen embedding (its parameters
`stop_gradient=True`), a trunk shared by three heads, two of which share one projection
weight, an EMA teacher updated under `no_grad` inside `forward` in training mode, and a step
that sums a dict of losses weighted by Python floats, leaving out the auxiliary head when a
tensor condition says the batch has no positive targets, and the distillation loss when
the teacher disagrees too much. The step (backward and `opt.step()`; the caller clears the
gradients) is one program across batches that take every path. Compared with eager after each step: the
returned nested dict (Python floats, ints, bools, a list from `.tolist()`, a NumPy array), the
model's and teacher's parameters, which `.grad` is None after the step, and the
optimizer's state (momentum and Adam moments of the shared and skipped heads)."""
import copy

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import assert_same_leaves, assert_same_model, assert_same_optimizer, grads_none


class MultiTask(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 6)
        for p in self.embed.parameters():
            p.stop_gradient = True  # a frozen pretrained piece
        self.trunk = nn.Linear(6, 8)
        self.proj = nn.Linear(8, 8)  # shared by the class and the aux head
        self.cls_head = nn.Linear(8, 3)
        self.aux_head = nn.Linear(8, 1)
        self.reg_head = nn.Linear(8, 2)

    def forward(self, x):
        h = F.gelu(self.trunk(self.embed(x)))
        shared = F.relu(self.proj(h))
        return {"cls": self.cls_head(shared), "aux": self.aux_head(shared).squeeze(-1),
                "reg": self.reg_head(h)}


class Student(nn.Layer):
    """Keeps an EMA teacher and updates it in `forward` while training, as mean-teacher and
    DINO-style code does."""

    def __init__(self, momentum=0.9):
        super().__init__()
        self.net = MultiTask()
        self.teacher = copy.deepcopy(self.net)
        for p in self.teacher.parameters():
            p.stop_gradient = True
        self.momentum = momentum

    def forward(self, x):
        out = self.net(x)
        if self.training:
            with rt.no_grad():
                for pt, ps in zip(self.teacher.parameters(), self.net.parameters()):
                    pt.set_value(pt * self.momentum + ps * (1.0 - self.momentum))
        with rt.no_grad():
            teacher_cls = self.teacher(x)["cls"]
        return out, teacher_cls


WEIGHTS = {"cls": 1.0, "aux": 0.5, "reg": 0.25, "distill": 0.1}


def train_step(model, opt, x, y_cls, y_aux, y_reg):
    model.train()
    out, teacher_cls = model(x)
    losses = {"cls": F.cross_entropy(out["cls"], y_cls),
              "reg": F.mse_loss(out["reg"], y_reg)}
    if y_aux.sum() > 0:  # no positives: the aux loss is not computed
        losses["aux"] = F.binary_cross_entropy_with_logits(out["aux"], y_aux)
    agree = (out["cls"].argmax(-1) == teacher_cls.argmax(-1)).astype("float32").mean()
    if agree > 0.7:
        losses["distill"] = F.mse_loss(F.softmax(out["cls"], -1), F.softmax(teacher_cls, -1))
    total = 0.0
    for k, v in losses.items():  # (a comprehension over keys a tensor `if` sets is refused)
        total = total + WEIGHTS[k] * v
    total.backward()
    opt.step()
    pred = out["cls"].argmax(-1)
    return {"total": total.item(),
            "losses": {"cls": losses["cls"].item(), "reg": losses["reg"].item(),
                       "aux": losses.get("aux", rt.zeros([])).item(),
                       "distill": losses.get("distill", rt.zeros([])).item()},
            "used": ["aux" in losses, "distill" in losses],
            "metrics": [int((pred == y_cls).sum()), bool(agree > 0.5), agree.item()],
            "pred": pred.tolist(), "reg": out["reg"].detach().numpy()}


def _batches():
    rng = np.random.default_rng(0)
    out = []
    for i in range(6):
        x = (rng.standard_normal((5, 4)) * (0.2 + i)).astype("float32")
        y_aux = (rng.random(5) < 0.5).astype("float32") * (i % 3 != 1)  # all zero: no aux
        out.append((rt.to_tensor(x), rt.to_tensor(rng.integers(0, 3, 5)), rt.to_tensor(y_aux),
                    rt.to_tensor(rng.standard_normal((5, 2)).astype("float32"))))
    return out


OPTIMIZERS = {
    "momentum": lambda ps: rt.optimizer.Momentum(0.1, 0.9, parameters=ps, weight_decay=0.01),
    "adam": lambda ps: rt.optimizer.Adam(0.05, parameters=ps, weight_decay=0.01),
}


@pytest.mark.slow
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_multitask_step_with_an_ema_teacher_matches_eager(opt_name):
    rt.seed(0)
    base = Student()
    runs = []
    for fn in (train_step, d2s.to_static(train_step)):
        model = copy.deepcopy(base)
        runs.append((fn, model, OPTIMIZERS[opt_name](model.net.parameters())))
    keys_seen = set()
    for batch in _batches():
        want, got = (fn(model, opt, *batch) for fn, model, opt in runs)
        assert_same_leaves(got, want, rtol=1e-4, atol=1e-5)
        (_, m1, o1), (_, m2, o2) = runs
        assert_same_model(m2, m1, rtol=1e-4, atol=1e-5)  # (and which `.grad` is None)
        assert_same_optimizer(o2, o1, rtol=1e-4, atol=1e-5)
        reached = {n: not none for n, none in grads_none(m2.net).items()}
        o1.clear_grad(set_to_zero=False)
        o2.clear_grad(set_to_zero=False)
        keys_seen.add(tuple(want["used"]))
        assert not reached["embed.weight"] and reached["proj.weight"]  # frozen; shared
        assert reached["aux_head.weight"] is want["used"][0]
        assert [type(v) for v in got["losses"].values()] == [float] * 4
        assert [type(v) for v in got["used"]] == [bool, bool]
        # a reference: the total is the weighted sum of the losses used (0.0 stands for one
        # left out), in float32
        total = np.float32(0)
        for k, v in want["losses"].items():
            total = total + np.float32(WEIGHTS[k]) * np.float32(v)
        np.testing.assert_allclose(got["total"], total, rtol=1e-5)
    assert len(keys_seen) >= 3  # aux and distill both present and absent
    assert runs[1][0].get_traced_count() == 1
