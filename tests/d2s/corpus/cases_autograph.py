"""The idioms of another transpiler's reference tests (TensorFlow AutoGraph's
tensorflow/python/autograph/tests), written anew for `rt`: loops over tensors and over
`range` of a tensor with `break` / `continue` in inner loops, returns from inside loops and
`finally` blocks, names first created inside a loop, subscripted and attribute names in
conditions and loop state, lists grown and popped in loops, helpers, lambdas and closures
called from loops, loop values whose shape grows, and `for ... else` / `while ... else`.

Each case is called with 0-d or 1-d integer tensors whose values take different paths through
the one converted program (zero, one or several trips; the break taken or not)."""
import contextlib

import numpy as np

import runtime as rt

from .registry import case, f32, i64


def _ints(*values):
    return i64(list(values))


# ---- continue / break / return in single and nested loops --------------------------------
@case(args=[(_ints(1, 2, 3, 4),), (_ints(2, 4, 6),), (_ints(5, 7),)])
def skip_odd_in_for(values):
    total = 0
    for v in values:
        if v % 2 > 0:
            continue
        total += v
    return total


@case(args=[(i64(0),), (i64(3),), (i64(6),)])
def skip_odd_in_while(count):
    acc = 0
    while count > 0:
        count -= 1
        if count % 2 > 0:
            continue
        acc += count
    return acc


@case(args=[(i64([[1, 2], [3, 4]]),), (i64([[2, 2], [6, 8]]),)])
def skip_odd_in_inner_for(rows):
    acc = 0
    for row in rows:
        for v in row:
            if v % 2 > 0:
                continue
            acc += v
    return acc


@case(args=[(_ints(2, 4, 5, 6),), (_ints(2, 4),), (_ints(1, 2),)])
def stop_at_first_odd(values):
    acc = 0
    for v in values:
        if v % 2 > 0:
            break
        acc += v
    return acc


@case(args=[(_ints(3, 4, 5),), (_ints(),)])
def return_on_first_trip(values):
    acc = 0
    for v in values:
        acc += v
        return acc
    return acc


@case(args=[(_ints(3, 4),), (_ints(8, 1),)])
def return_either_way_on_first_trip(values):
    acc = 0
    for v in values:
        acc += v
        if v % 2 > 0:
            return acc
        else:
            return -acc
    return acc


@case(args=[(i64(1),), (i64(4),), (i64(5),)])
def while_returns_either_way(n):
    acc = 0
    while n > 0:
        n -= 1
        acc += n
        if n % 2 > 0:
            return acc
        else:
            return -acc
    return acc


@case(args=[(i64(0), i64(3)), (i64(2), i64(2)), (i64(3), i64(5))])
def break_inner_while_on_even(outer, inner):
    acc = 0
    while outer > 0:
        outer -= 1
        while inner > 0:
            inner -= 1
            if (outer + inner) % 2 == 0:
                break
            acc += outer + inner
    return acc


@case(args=[(i64([[2, 3], [4, 6]]),), (i64([[1, 2], [5, 5]]),)])
def break_or_continue_inner_for(rows):
    acc = 0
    for row in rows:
        for v in row:
            if v % 2 > 0:
                break
            else:
                continue
            acc += v
    return acc, rows.sum()


@case(args=[(i64(5), i64(4)), (i64(1), i64(2)), (i64(0), i64(0))])
def break_then_condition_over_range(x, steps):
    for i in range(steps):
        if i == 2:
            break
        if x > 0:
            x -= 1
    return x


@case(args=[(i64(3),), (i64(1),), (i64(0),)])
def two_exits_from_while(n):
    digits = 1
    i = 0
    while i < n:
        i += 1
        if i > 10 * n:
            break
        if i == n:
            break
        digits = digits * 10 + i
    return i, digits


# ---- names first created inside loops ----------------------------------------------------
@case(args=[(i64(1),), (i64(2),)])
def while_makes_a_dict(n):
    i = 0
    while i < n:
        parts = {"lo": rt.zeros([2, 3]) + i, "hi": rt.ones([2, 3]) * i}
        i += 1
    return parts["lo"], parts["hi"]


@case(args=[(i64(1),), (i64(2),), (i64(4),)])
def while_creates_two_names(n):
    i = 0
    while i < n:
        i = i + 2
        j = i + 1
    return i, j


@case(args=[(i64(1),), (i64(2),), (i64(3),)])
def flag_set_on_the_first_trip(n):
    for i in range(n):
        if i == 0:
            level = 1
        else:
            level = 2
    return level


@case(args=[(i64(1),), (i64(3),)])
def counter_started_on_the_first_trip(n):
    for i in range(n):
        if i == 0:
            level = 1
        else:
            level = level + 1
    return level


@case(args=[(_ints(4, 5, 6),), (_ints(9),)])
def restart_on_the_first_item(values):
    acc = 0
    for v in values:
        if v == values[0]:
            run = 0
        else:
            run += 1
        acc = acc * 10 + run
    return acc


# ---- subscripted and attribute names in conditions and loop state ------------------------
@case(args=[(f32(1.0),), (f32(-1.0),)])
def dict_item_chosen_by_sign(a):
    box = {"a": a}
    if box["a"] > 0:
        box["b"] = 1
    else:
        box["b"] = -1
    return box


@case(args=[(f32(2.0),), (f32(0.0),)])
def list_item_chosen_by_sign(a):
    pair = [a, 0]
    if pair[0] > 0:
        pair[1] = 1
    else:
        pair[1] = -1
    return pair


@case(args=[(f32(2.0),), (f32(-2.0),)])
def nested_dict_key_on_one_branch(a):
    tree = {"a": {"a": a}}
    if tree["a"]["a"] > 0:
        pass
    else:
        tree["a"]["b"] = 1
    return tree


@case(args=[(i64(0), 3), (i64(2), 7)])
def dict_item_counted_in_while(x, start):
    state = {"a": start, "b": 0}
    while x > 0:
        x -= 1
        state["a"] += 1
    return state


@case(args=[(i64(3),), (i64(11),), (i64(6),)])
def list_items_are_the_while_state(b):
    pair = [0, b]
    while pair[1] <= 10:
        pair[0] += 1
        pair[1] *= 2
    return pair


@case(args=[(i64(5),), (i64(10),)])
def dict_key_first_set_in_while(b):
    state = {"b": b}
    while state["b"] <= 10:
        state["a"] = state["b"] + 1
        state["b"] *= 2
    return state


@case(args=[(i64(1), i64(0)), (i64(3), i64(5))])
def dict_key_first_set_in_for(n, x):
    out = {}
    for i in range(n):
        x -= i
        out["a"] = x
    return out


class _Counter:
    def __init__(self):
        self.hits = 0
        self.total = rt.zeros([])


@case(args=[(f32([0.5, -1.0, 2.0]),), (f32([-0.5, -2.0]),)])
def attribute_state_in_for(values):
    c = _Counter()
    for v in values:
        if v > 0:
            c.total = c.total + v
    return c.total


# ---- returns: defaults, nested ifs, context managers, try/finally -----------------------
@case(args=[(i64(2),), (i64(-3),)], stdout=("x is",))
def print_then_return(x):
    if x > 0:
        print("x is", x)
        return x
    return x * x


@case(args=[(np.array(True),), (np.array(False),)])
def return_before_stacking(c):
    t = rt.to_tensor(1)
    if c:
        return t
    t = rt.stack([t, t])
    return rt.sum(t)


@case(args=[(i64(-1),), (i64(3),), (i64(6),)])
def three_returns_nested(x):
    if x > 0:
        if x < 5:
            return x
        else:
            return x * x
    else:
        return x * x * x


@case(args=[(i64(0),), (i64(3),), (i64(5),)])
def returns_inside_with_blocks(x):
    with contextlib.nullcontext():
        if x > 0:
            if x < 5:
                with rt.no_grad():
                    return x
            else:
                return x * x
        else:
            return x * x * x
    return x * x * x * x


@case(args=[(i64(0),), (i64(1),)])
def return_in_try_then_finally(x):
    try:
        if x > 0:
            return 1
        return 0
    finally:
        x = x + 1


@case(args=[(i64(0),), (i64(1),)])
def finally_overrides_the_return(x):
    try:
        return 2
    finally:
        if x > 0:
            return 1  # noqa: B012  (the idiom under test: `finally` decides the result)
        return 0  # noqa: B012, SIM107


def _always_fails():
    raise ValueError("used for control flow")


@case(args=[(i64(1),), (i64(0),)])
def caught_failure_after_early_return(c):
    if c:
        return 2
    try:
        return _always_fails()
    except ValueError:
        pass
    return 1
