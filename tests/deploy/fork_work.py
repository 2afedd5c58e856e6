"""Functions the fork test converts: a shared one traced for ever-new shapes (its lock is held
during each trace) and a factory of new functions (each one converted anew)."""
import runtime as rt


def shared(x):
    if rt.mean(x) > 0:
        return x * 2.0
    return x - 1.0


def make_scaled(k: float):
    def scaled(x):
        y = x
        for _ in range(2):
            y = rt.tanh(y) * k
        return y
    return scaled
