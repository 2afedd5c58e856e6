"""rt.nn Layers with tensor-dependent control flow in `forward` (constructed with no arguments
after `rt.seed(0)`, in eval mode)."""
import runtime as rt

from .registry import case, f32, neg, pos, rand, signed

nn = getattr(rt, "nn", None)
Layer = nn.Layer if nn is not None else object


# Paths that depend on the sign of a Linear's output (zero bias) use an input and its negation,
# so one of the two takes each branch whatever the initial weights are.
_X = pos(2, 4)


def _linear(i, o):
    return rt.nn.Linear(i, o)


@case(args=[(pos(2, 4),), (neg(2, 4),)], batch=lambda b: (signed(b, 4),))
class GatedMLP(Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = _linear(4, 8)
        self.fc2 = _linear(8, 3)

    def forward(self, x):
        h = self.fc1(x)
        if rt.mean(x) > 0:
            h = rt.nn.functional.relu(h)
        else:
            h = rt.tanh(h)
        return self.fc2(h)


@case(args=[(pos(2, 4) * 10,), (pos(2, 4) * 0.01,)], batch=lambda b: (rand(b, 4) * b,))
class RefineUntilSmall(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        steps = 0
        while rt.max(rt.abs(h)) > 1:
            h = h / 2
            steps += 1
        return h, steps


@case(args=[(pos(2, 4),), (pos(2, 4) * 5,)])
class StackWithEarlyExit(Layer):
    def __init__(self):
        super().__init__()
        self.blocks = rt.nn.LayerList([_linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for block in self.blocks:
            if rt.max(rt.abs(x)) > 3:
                break
            x = rt.tanh(block(x))
        return x


@case(args=[(pos(2, 4),), (neg(2, 4),)], batch=lambda b: (signed(b, 4),))
class EarlyReturn(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 2)

    def forward(self, x):
        if rt.sum(x) < 0:
            return rt.zeros([x.shape[0], 2])
        return self.fc(x)


@case(args=[(pos(3, 4),), (neg(3, 4),)], batch=lambda b: (signed(b, 4),))
class HelperMethod(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)

    def _activate(self, h):
        if rt.mean(h) > 0:
            return rt.nn.functional.relu(h)
        return h * 0.1

    def forward(self, x):
        return self._activate(self.fc(x) * 0.1 + x)


@case(args=[(pos(2, 4),), (neg(2, 4),)])
class SequentialThenBranch(Layer):
    def __init__(self):
        super().__init__()
        self.body = rt.nn.Sequential(_linear(4, 6), rt.nn.ReLU(), _linear(6, 4))

    def forward(self, x):
        y = self.body(x)
        if rt.mean(x) > 0:
            y = y + x
        return y


@case(args=[(_X,), (-_X,)])
class PythonConfigAttributes(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)
        self.use_residual = True
        self.scale = 0.5

    def forward(self, x):
        h = self.fc(x) * self.scale
        if self.use_residual and rt.mean(h) > 0:
            h = h + x
        return h


@case(args=[(pos(2, 3, 4),), (neg(2, 5, 4),)], batch=lambda b: (signed(b, 3, 4),))
class TimeStepLoop(Layer):
    def __init__(self):
        super().__init__()
        self.cell = _linear(8, 4)

    def forward(self, x):
        h = rt.zeros([x.shape[0], 4])
        outs = []
        for t in range(x.shape[1]):
            h = rt.tanh(self.cell(rt.concat([x[:, t], h], axis=1)))
            outs.append(h)
        return rt.stack(outs, axis=1), h


@case(args=[(pos(2, 4) * 5,), (pos(2, 4) * 0.1,)])
class ResidualIfNormLarge(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        if rt.sqrt(rt.sum(x * x)) > 3:
            y = y / rt.sqrt(rt.sum(y * y))
        return y + x


class _Gate(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        return h if rt.mean(h) > 0 else -h


@case(args=[(_X * 10,), (-_X * 10,), (_X * 0.01,)])
class NestedCustomLayer(Layer):
    def __init__(self):
        super().__init__()
        self.gate = _Gate()
        self.out = _linear(4, 2)

    def forward(self, x):
        x = self.gate(x)
        if rt.max(x) > 1:
            x = x / rt.max(x)
        return self.out(x)


@case(args=[(f32([[1.0, 1.0, 1.0, 1.0], [-5.0, 0.0, 0.0, 0.0]]),), (neg(3, 4),)],
      batch=lambda b: (signed(b, 4),))
class RowwiseLoop(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 1)

    def forward(self, x):
        total = rt.zeros([1])
        for row in x:
            if row.sum() > 0:
                total = total + self.fc(row.unsqueeze(0)).squeeze(0)
            else:
                total = total - 1
        return total


@case(args=[(pos(2, 4), 2), (neg(2, 4), 2), (pos(2, 4), 0)])
class PythonArgLoop(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)

    def forward(self, x, repeats):
        for _ in range(repeats):
            x = self.fc(x)
            if rt.mean(x) < 0:
                x = -x
        return x


@case(args=[(rand(2, 4) + 3,), (rand(2, 4) - 3,)])
class BufferAsState(Layer):
    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)
        self.register_buffer("offset", rt.ones([4]) * 2)

    def forward(self, x):
        h = self.fc(x)
        if rt.mean(x) > 0:
            h = h + self.offset
        else:
            h = h - self.offset
        return h


_SHARED = {}


def _shared_gate():
    """One `_Gate` for the whole session, built on first use (by the eager run)."""
    if "gate" not in _SHARED:
        _SHARED["gate"] = _Gate()
    return _SHARED["gate"]


@case(args=[(_X,), (-_X,), (_X * 10,)], batch=lambda b: (signed(b, 4),))
def function_calls_layer(x):
    gate = _shared_gate()
    y = gate(x)
    if rt.max(y) > 1:
        y = y / rt.max(y)
    return y * 2


@case(args=[(pos(2, 4) * 0.01,), (pos(2, 4) * 20,), (pos(2, 4) * 200,)],
      batch=lambda b: (pos(b, 4) * b * 10,))
class GreedyUnroll(Layer):
    """A decoder-style loop: grow a list of states until they are large or 5 steps passed."""

    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)

    def forward(self, x):
        h = x
        outs = []
        step = 0
        while True:
            h = rt.tanh(self.fc(h)) + h * 2
            outs.append(h)
            step += 1
            if step >= 5 or rt.max(rt.abs(h)) > 100:
                break
        return rt.stack(outs, axis=1).sum(axis=1), step


@case(args=[(pos(2, 3, 4),), (pos(2, 3, 4), f32([[1, 1, 0], [1, 0, 0]]) > 0)])
class MaskedPool(Layer):
    """Optional mask argument: None and a tensor are two signatures, so two programs."""

    def __init__(self):
        super().__init__()
        self.score = _linear(4, 1)

    def forward(self, x, mask=None):
        scores = self.score(x).squeeze(-1)
        if mask is not None:
            scores = rt.where(mask, scores, rt.full_like(scores, -1e9))
        weights = rt.nn.functional.softmax(scores, axis=-1)
        pooled = (x * weights.unsqueeze(-1)).sum(axis=1)
        if rt.max(weights) > 0.9:
            pooled = pooled * 0.5
        return pooled


@case(args=[(pos(2, 4),), (neg(2, 4),)], batch=lambda b: (signed(b, 4),))
class BranchSelectsSublayer(Layer):
    """Each branch of a tensor if uses different parameters."""

    def __init__(self):
        super().__init__()
        self.fc_pos = _linear(4, 3)
        self.fc_neg = _linear(4, 3)

    def forward(self, x):
        if rt.mean(x) > 0:
            h = self.fc_pos(x)
        else:
            h = self.fc_neg(x) * 2
        return h


@case(args=[(pos(2, 4) * 0.01,), (pos(2, 4) * 3,), (pos(2, 4) * 50,)],
      batch=lambda b: (pos(b, 4) * b,))
class SharedWeightsInTensorWhile(Layer):
    """One Linear applied a data-dependent number of times inside a tensor while."""

    def __init__(self):
        super().__init__()
        self.fc = _linear(4, 4)

    def forward(self, x):
        h = x
        i = 0
        while rt.max(rt.abs(h)) < 10 and i < 6:
            h = self.fc(h) * 0.5 + h * 2
            i += 1
        return h, i
