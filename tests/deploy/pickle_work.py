"""What the pickle tests send to another process: a decorated module-level function, a Layer
with a decorated forward, and the function a spawned worker runs."""
import numpy as np

import d2s
import runtime as rt


@d2s.to_static
def scaled_tanh(x):
    if rt.mean(x) > 0:
        return rt.tanh(x) * 2.0
    return x - 1.0


class Decorated(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 3)

    @d2s.to_static
    def forward(self, x):
        return rt.nn.functional.relu(self.fc(x))


def call(obj, x: np.ndarray) -> np.ndarray:
    """`obj(x)` as an array, in whichever process runs it."""
    with rt.no_grad():
        return obj(rt.to_tensor(x)).numpy()
