"""Functions whose converted code is golden-tested (tests/d2s/golden/<name>.py)."""
import runtime as rt


def design_sketch(x, n):
    if rt.mean(x) > 0:
        y = x * 2
    else:
        y = x - 1
    i = 0
    while i < n:
        y = y + 1
        i += 1
    return y


def early_return(x):
    if rt.sum(x) > 0:
        return x * 2
    y = -x
    return y


def break_in_for(xs, limit):
    total = 0.0
    for v in xs:
        if v > limit:
            break
        total = total + v
    return total


def logic_and_builtins(x, items):
    if rt.max(x) > 0 and len(items) > 1 or not items:
        print("items:", len(items))
    return x.shape[0]


class Counter:
    def step(self, x):
        while rt.sum(x) < 10:
            x = x * 2
            self.count = self.count + 1
        return x
