"""`d2s demo`: eager autograd, then the same model converted with `to_static`, trained both
ways from the same start, with the converted code and the program printed.

(A later version replaces this with LeNet training.)
"""
from __future__ import annotations

import time

import numpy as np


def main() -> int:
    import d2s
    import runtime as rt

    class Gate(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1 = rt.nn.Linear(4, 8)
            self.fc2 = rt.nn.Linear(8, 1)

        def forward(self, x):
            h = self.fc1(x)
            if rt.mean(h) > 0:  # a tensor condition: becomes a cond op
                h = rt.tanh(h)
            else:
                h = h * 0.5
            while rt.sum(h * h) > 4.0:  # a tensor loop: becomes a while op
                h = h * 0.9
            return self.fc2(h)

    rng = np.random.RandomState(0)
    x_all, y_all = rng.randn(64, 4), rng.randn(64, 1)

    print("1. eager autograd")
    x = rt.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    y = (rt.tanh(x) * x).sum()
    y.backward()
    print(f"   y = sum(tanh(x) * x) = {float(y):.6f}; dy/dx = {x.grad.numpy().round(6)}")

    start_net = Gate()
    start_net.to(dtype="float64")

    def train(static: bool):
        net = Gate()
        net.to(dtype="float64")
        for p, q in zip(start_net.parameters(), net.parameters()):
            q.set_value(p.numpy())
        if static:
            net = d2s.to_static(net)
        opt = rt.optimizer.SGD(0.05, parameters=net.parameters())
        losses = []
        start = time.perf_counter()
        for step in range(20):
            sl = slice(step % 8 * 8, step % 8 * 8 + 8)
            loss = rt.mean((net(rt.to_tensor(x_all[sl])) - rt.to_tensor(y_all[sl])) ** 2)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
        return net, losses, time.perf_counter() - start

    print("2. training a Layer with tensor-dependent if/while: eager vs to_static")
    _, eager_losses, eager_t = train(False)
    net, static_losses, static_t = train(True)
    diff = max(abs(a - b) for a, b in zip(eager_losses, static_losses))
    print(f"   eager  losses: {[round(v, 5) for v in eager_losses[:5]]} ...  ({eager_t:.3f} s)")
    print(f"   static losses: {[round(v, 5) for v in static_losses[:5]]} ...  ({static_t:.3f} s)")
    print(f"   max |eager - static| over 20 steps: {diff:.2e}; programs traced: "
          f"{len(net.forward.program_cache)}")
    print("3. the converted forward (net.forward.code):")
    print("   " + net.forward.code.replace("\n", "\n   "))
    print("4. its static program:")
    print("   " + str(net.forward.concrete_program.main_program).replace("\n", "\n   "))
    return 0 if diff < 1e-8 else 1
