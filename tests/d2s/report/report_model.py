"""Functions the report tests draw pages of (a file of its own: the page shows its lines)."""
import d2s
import runtime as rt


@d2s.to_static
def branchy(x, n):
    if rt.mean(x) > 0:
        y = x * 2
    else:
        y = x - 1
    for _ in range(n):
        y = y + 1
    i = 0
    while i < rt.shape(y)[0]:
        y = y - 0.5
        i = i + 1
    return rt.tanh(y)


def generator(x):
    yield x * 2


@d2s.to_static
def wide(x):
    return rt.tanh(x * 2.0 + 1.0) - x


class Scaled(rt.nn.Layer):
    def __init__(self, width: int, scale: float = 2.0):
        super().__init__()
        self.fc = rt.nn.Linear(width, 3)
        self.scale = scale

    def forward(self, x):
        y = self.fc(x)
        if self.scale > 1:
            y = y * self.scale
        else:
            y = y - 1.0
        return rt.nn.functional.relu(y)
