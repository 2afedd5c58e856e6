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
import runtime.nn.functional as F

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


@case(args=[(i64(0), i64(2)), (i64(3), i64(4)), (i64(2), i64(0))])
def skip_in_inner_while(outer, inner):
    acc = 0
    while outer > 0:
        outer -= 1
        while inner > 0:
            inner -= 1
            if (outer + inner) % 2 > 0:
                continue
            acc += outer + inner
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
@case(args=[(i64(1),), (i64(3),)])
def while_makes_a_zeros_tensor(n):
    i = 0
    while i < n:
        block = rt.zeros([1, 2, 3])
        i += 1
    return block


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


@case(args=[(_ints(7),), (_ints(1, 2, 9),)])
def last_item_of_a_for(values):
    for item in values:
        pass
    return item


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
def default_return_inside_with(x):
    with contextlib.nullcontext():
        if x > 0:
            return 1
        return 0


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
            return 1
        return 0


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


# ---- loops of the basic kinds ------------------------------------------------------------
@case(args=[(i64(0),), (i64(5),), (i64(200),)])
def grow_by_digits(n):
    i = 0
    while i < n:
        i = i * 10 + 1
    return i


@case(args=[(i64(0), i64(9)), (i64(4), i64(1)), (i64(3), i64(7))])
def while_else_sets_a_sentinel(x, y):
    acc = 0
    while x > 0:
        x -= 1
        if x > y:
            break
        acc += x
    else:
        acc = -100
    return acc


@case(args=[(_ints(1, 2), _ints(3, 4)), (_ints(1, 2), _ints(2, 5))])
def for_else_when_no_item_matches(left, right):
    acc = 0
    for c in left:
        if (right == c).any():
            break
        acc = acc * 10 + c
    else:
        acc = -1000
    return acc


@case(args=[(i64(0), i64(2)), (i64(2), i64(0)), (i64(2), i64(3))])
def two_whiles_in_a_row(n1, n2):
    acc = 0
    i = 0
    while i < n1:
        acc = acc * 10 + i
        i += 1
    i = 0
    while i < n2:
        acc = acc * 10 + i
        i += 1
    return acc


@case(args=[(i64(1), i64(2)), (i64(3), i64(3))])
def rows_of_nested_whiles(n1, n2):
    rows = []
    i = 0
    while i < n1:
        j = 0
        acc = 0
        while j < n2:
            acc = acc * 10 + i * j
            j += 1
        rows.append(rt.to_tensor(acc))
        i += 1
    return rt.stack(rows)


@case(args=[(i64([[1, 2], [3, 4]]),), (i64([[5, 6, 7]]),)])
def digits_per_row(m):
    out = []
    for row in m:
        acc = 0
        for j in row:
            acc = acc * 10 + j
        out.append(acc)
    return rt.stack(out)


# ---- scoping of loop variables -----------------------------------------------------------
@case(args=[(i64(1),), (i64(3),)])
def iterate_of_arange_after_loop(n):
    acc = 0
    for i in rt.arange(n):
        acc = acc * 10 + i
    return i, acc


@case(args=[(i64(0),), (i64(2),)])
def iterate_rebound_in_body(n):
    i = 7
    acc = 0
    for i in range(n):
        i = 3 * i + 1
        acc = acc * 10 + i
    return i, acc


@case(args=[(_ints(1),), (_ints(1, 2),)])
def lambdas_bind_their_item(values):
    fns = []
    results = []
    for v in values:
        fns.append(lambda v=v: v + v)
    for f in fns:
        results.append(f())
    return results


# ---- nested control flow -----------------------------------------------------------------
@case(args=[(i64(-1),), (i64(1),), (i64(4),)])
def inner_if_that_may_rebind(x):
    y = 0
    if x > 0:
        if x < 3:
            y = -2 * x
            x = -3 * x
    return x, y


@case(args=[(i64(0), i64(2)), (i64(2), i64(1)), (i64(2), i64(0))])
def inner_range_independent(a, b):
    p = 0
    for _ in range(a):
        for j in range(b):
            p += j
    return p


@case(args=[(i64(0), i64(1)), (i64(4), i64(1)), (i64(3), i64(2))])
def inner_while_drains_the_outer(a, b):
    r = 1
    while a > 0:
        r += 1
        tmp = b
        while tmp > 0:
            a -= 1
            tmp -= 1
        a -= 1
    return r


@case(args=[(i64(0),), (i64(1),), (i64(5),)])
def halves_of_odd_indices(a):
    k = 0
    for i in range(a):
        if i % 2 > 0:
            j = i // 2
            k += j
    return k


@case(args=[(i64(0),), (i64(4),), (i64(10),)])
def continue_inside_try_finally(x):
    z = 0
    while x > 0:
        x = x - 1
        try:
            if x < 5:
                continue
            z = z + 1
        finally:
            z = z + 10
    return z


@case(args=[(i64(0),), (i64(4),), (i64(10),)])
def break_inside_with(x):
    z = 0
    while x > 0:
        with contextlib.nullcontext():
            x = x - 1
            if x < 5:
                break
            z = z + 1
    return z


# ---- functions called in loops -----------------------------------------------------------
def _twice(x):
    return x * 2


class _Scaler:
    def method(self, x):
        return x * 4


@case(args=[(i64(0), _twice), (i64(2), _twice), (i64(1), _Scaler().method), (i64(2), abs)])
def while_bound_by_a_call(n, fn):
    i = 0
    acc = 0
    while i < fn(n):
        acc = acc * 10 + i
        i += 1
    return acc


@case(args=[(i64(0),), (i64(2),)])
def while_reads_a_closure(n):
    i = 0

    def offset():
        return i + 2

    acc = 0
    while i < n:
        acc = acc * 10 + offset()
        i += 1
    return acc


@case(args=[(_ints(1),), (_ints(1, 2),)])
def for_reads_a_lambda_closure(values):
    i = 0
    acc = 0
    shifted = lambda: i + 2  # noqa: E731
    for i in values:
        acc = acc * 10 + shifted()
    return acc, i


# ---- lists grown, read and popped in loops -----------------------------------------------
@case(args=[(i64(1),), (i64(4),)])
def fill_with_range(n):
    items = []
    for i in range(n):
        items.append(i)
    return rt.to_tensor(items), len(items)


@case(args=[(i64(3),), (i64(5),)])
def fibonacci_read_write(n):
    items = [rt.to_tensor(1), rt.to_tensor(1)]
    for i in range(2, n):
        items.append(items[i - 1] + items[i - 2])
        items[i - 2] = -items[i - 2]
    return rt.stack(items)


@case(args=[(i64(0),), (i64(2),), (i64(4),)])
def pop_from_a_python_list(n):
    items = [1, 2, 3, 4]
    acc = 0
    for _ in range(n):
        acc += items.pop()
    return items, acc


# ---- values whose shape a loop changes ---------------------------------------------------
@case(args=[(i64(0),), (i64(1),), (i64(3),)])
def vector_grows_in_while(n):
    v = rt.to_tensor([0, 0])
    i = 0
    while i < n:
        v = rt.concat([v, rt.to_tensor([i], dtype="int64")], 0)
        i += 1
    return v


@case(args=[(i64(0),), (i64(2),)])
def matrix_padded_each_trip(n):
    m = rt.zeros([2, 2])
    for i in range(n):
        m = F.pad(m, [1, 1, 1, 1], value=1.0)
    return m


@case(args=[(i64(1),), (i64(2),), (i64(6),)])
def growth_cut_short_inside_if(n):
    v = rt.to_tensor([0, 0])
    if n > 1:
        for i in range(n):
            v = rt.concat([v, rt.to_tensor([i], dtype="int64")], 0)
            if i > 2:
                break
    else:
        v = rt.to_tensor([1, 2, 3])
    return v


# ---- expressions, helpers and generators -------------------------------------------------
@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
def ifexp_with_a_python_and_a_tensor_arm(x):
    scale = (2 if x.sum() > 0
             else 0.5)
    pick = (x.max() if x.min() < -1.5
            else x.min())
    return x * scale, pick


def _adjacent(values):
    for i in range(len(values) - 1):
        yield values[i], values[i + 1]


@case(args=[(f32([1.0, 3.0, 2.0]),), (f32([3.0, 2.0, 1.0]),)])
def rises_from_a_generator(values):
    rises = 0
    for a, b in _adjacent(values):
        if b > a:
            rises += 1
    return rises


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, 0.0]),)])
def annotated_locals(x: rt.Tensor) -> rt.Tensor:
    total: rt.Tensor = x.sum()
    count: int = 0
    if total > 0:
        count = 1
    return total * count


@case(args=[(f32([0.5, 0.2]),), (f32([1.5, 0.2]),)], raises=(AssertionError,))
def assert_below_one(x):
    assert x.max() < 1.0, "values must be probabilities"
    return x * 2


@case(args=[(f32([1.0, 2.0]), f32([0.0, 1.0])), (f32([-1.0, 2.0]), f32([0.0, 0.0]))])
def logical_and_or_of_tensors(a, b):
    if a.min() > 0 and b.max() > 0 or (a * b).sum() > 5:
        return a + b
    return a - b

