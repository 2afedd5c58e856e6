"""More of the idioms of TensorFlow AutoGraph's reference tests (see `cases_autograph.py`):
plain `while` / `for` loops over tensors and `range` of a tensor, `while ... else` and
`for ... else`, scoping of loop variables, nested loops and ifs, `try`/`finally` and `with`
around `continue` / `break`, helpers, closures and lambdas called from loops, lists grown,
read and popped in loops, values whose shape grows each trip, conditional expressions,
generators, annotations, asserts and `and` / `or` of tensor conditions."""
import contextlib

import runtime as rt
import runtime.nn.functional as F

from .registry import case, f32, i64


def _ints(*values):
    return i64(list(values))


# ---- loops of the basic kinds ------------------------------------------------------------
@case(args=[(i64(1), i64(2)), (i64(2), i64(3))])
def rows_of_python_lists(m, n):
    mat = []
    for _ in range(m):
        row = []
        for j in range(n):
            row.append(j)  # noqa: PERF402
        mat.append(row)
    return mat


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
        fns.append(lambda: v * 10)  # (late binding: the last item, after the loop)
    for f in fns:
        results.append(f())
    return results


# ---- nested control flow -----------------------------------------------------------------
@case(args=[(i64(-1),), (i64(1),), (i64(4),)])
def inner_if_that_may_rebind(x):
    y = 0
    if x > 0:  # noqa: SIM102
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
    shifted = lambda: i + 2
    for i in values:
        acc = acc * 10 + shifted()
    return acc, i


# ---- lists grown, read and popped in loops -----------------------------------------------
@case(args=[(i64(1),), (i64(4),)])
def fill_with_range(n):
    items = []
    for i in range(n):
        items.append(i)  # noqa: PERF402
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

