"""for loops: range with Python and tensor bounds (both step signs), tensor rows, lists, tuples,
dict items, enumerate, zip, for-else."""
import runtime as rt

from .registry import case, f32, i64, neg, pos, signed


@case(args=[(pos(2), 0), (pos(2), 3)], ref=lambda x, n: x + sum(range(n)))
def range_python_bound(x, n):
    for i in range(n):
        x = x + i
    return x


@case(args=[(f32([1.0, -1.0, -2.0]),), (f32([1.0, 2.0, 3.0]),), (f32([-1.0, -2.0, -3.0]),)])
def range_tensor_bound(x):
    n = (x > 0).astype("int64").sum()
    acc = rt.zeros_like(x)
    for _ in range(n):
        acc = acc + x
    return acc


@case(args=[(pos(2), i64(1), i64(8)), (pos(2), i64(5), i64(2)), (pos(2), i64(0), i64(3))])
def range_tensor_start_stop_step(x, start, stop):
    for i in range(start, stop, 2):
        x = x * 1.5 + i
    return x


@case(args=[(pos(2), 5), (pos(2), 0)])
def range_negative_python_step(x, start):
    for i in range(start, 0, -2):
        x = x - i
    return x


@case(args=[(f32([4.0]),), (f32([1.0]),), (f32([0.0]),)])
def range_negative_tensor_step(x):
    n = x.astype("int64").sum()
    total = rt.zeros([1])
    for i in range(n, 0, -1):
        total = total * 2 + i
    return total


@case(args=[(f32([[1.0, 2.0], [-3.0, 1.0], [2.0, 2.0]]),), (neg(3, 2),)],
      batch=lambda b: (signed(b, 2),))
def over_tensor_rows(x):
    acc = rt.zeros([2])
    for row in x:
        if row.sum() > 0:
            acc = acc + row
        else:
            acc = acc - row * 0.5
    return acc


@case(args=[(f32([1.0, 1.0]), f32([2.0, 2.0])), (neg(2), neg(2))])
def over_list_of_tensors(x, y):
    best = rt.zeros([2])
    for t in [x, y, x * y]:
        if rt.sum(t) > rt.sum(best):
            best = t
    return best


@case(args=[(pos(3),), (neg(3),)])
def over_tuple_of_numbers(x):
    for w in (0.5, 1.0, 2.0):
        if rt.mean(x) > 0:
            x = x * w
        else:
            x = x + w
    return x


@case(args=[(pos(2),), (neg(2),)])
def over_dict_items(x):
    weights = {"a": 1.0, "b": -2.0, "c": 3.0}
    out = rt.zeros([2])
    for key, w in weights.items():
        if rt.sum(x * w) > 0 or key == "c":
            out = out + x * w
    return out


@case(args=[(pos(2), 0.1), (pos(2), 3.0)])
def over_enumerate_list(x, w):
    ws = [w, w * 2, w * 3]
    for i, v in enumerate(ws):
        x = x + v * i
        if rt.max(x) > 5:
            x = x / 2
    return x


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def over_zip(x, y):
    out = rt.zeros([2])
    for t, scale in zip([x, y], [1.0, 2.0]):
        if rt.mean(t) > 0:
            out = out + t * scale
        else:
            out = out - scale
    return out


@case(args=[(f32([[1.0, 1.0], [-2.0, 0.0], [3.0, 3.0]]),), (pos(3, 2),)],
      batch=lambda b: (signed(b, 2),))
def enumerate_tensor_rows(x):
    acc = rt.zeros([2])
    for i, row in enumerate(x):
        if row.mean() > 0:
            acc = acc + row * i
    return acc


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([1.0, 20.0, 3.0]),)])
def for_else_tensor_break(x):
    found = rt.zeros([1])
    for i in range(3):
        if x[i] > 10:
            found = x[i:i + 1]
            break
    else:
        found = found - 1
    return found


@case(args=[(pos(2), 2), (pos(2), 0)])
def for_else_python(x, n):
    for i in range(n):
        x = x * 2
    else:  # noqa: PLW0120  (for-else is what this case is about)
        x = x + 1
    return x


@case(args=[(f32([1.0, 2.0, 30.0]),), (f32([1.0, 2.0, 3.0]),)])
def nested_range_inner_break(x):
    total = rt.zeros([1])
    for i in range(3):
        for j in range(3):
            v = x[j:j + 1] * (i + 1)
            if v > 20:
                break
            total = total + v
    return total


@case(args=[(pos(4, 2),), (neg(4, 2),)],
      batch=lambda b: (signed(b, 2),))
def range_len_indexing(x):
    s = rt.zeros([2])
    for i in range(len(x)):
        if x[i].sum() > 0:
            s = s + x[i]
        else:
            s = s * 0.5 + x[i]
    return s


@case(args=[(pos(2, 3),), (neg(4, 1),), (pos(4),)])
def over_shape_dims(x):
    size = 1
    for d in x.shape:
        size = size * d
    mean = x.sum() / size
    return mean if mean > 0 else -mean


@case(args=[(i64(3),), (i64(0),), (i64(1),)])
def over_arange(n):
    total = rt.zeros([], dtype="int64")
    for v in rt.arange(n):
        total = total + v * v
    return total


@case(args=[(pos(2), 2), (neg(2), 3)])
def loop_var_used_after(x, n):
    for i in range(n):
        x = x * 2 if rt.sum(x) > 0 else x - 1
    return x + i


@case(args=[(f32([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]),),
            (f32([[3.0, 3.0], [2.0, 2.0], [1.0, 1.0]]),)])
def rows_with_running_max(x):
    best = x[0]
    for row in x[1:]:
        if row.sum() > best.sum():
            best = row
    return best


@case(args=[(pos(2),), (neg(2),)])
def over_dict_keys(x):
    table = {"double": 2.0, "shift": 0.5}
    for name in table:
        if name == "double" and rt.mean(x) > 0:
            x = x * 2
        else:
            x = x + len(name)
    return x


@case(args=[(f32([[1.0, 2.0], [3.0, 0.0], [-1.0, 9.0]]),), (f32([[5.0, 5.0], [1.0, 1.0]]),)])
def best_row_starting_from_none(x):
    best = None
    for row in x:
        if best is None or row.sum() > best.sum():
            best = row
    return best


@case(args=[(pos(3), pos(3)), (pos(3), neg(3))])
def builtin_all_over_generator(x, y):
    if all(rt.sum(t) > 0 for t in [x, y]):
        return x + y
    return x - y


@case(args=[(f32([1.0, 3.0, 2.0]),), (f32([3.0, 1.0, 2.0]),)])
def argmax_condition(x):
    if rt.argmax(x) == 0:
        return x * 2
    return x


@case(args=[(pos(5, 2),), (neg(5, 2),)], batch=lambda b: (signed(b, 2),))
def min_with_batch_dim(x):
    n = min(3, x.shape[0])
    acc = rt.zeros([2])
    for i in range(n):
        acc = acc + x[i] if rt.sum(x[i]) > 0 else acc - x[i]
    return acc


@case(args=[(f32([1.0]),), (f32([50.0]),)])
def reassign_loop_variable(x):
    s = rt.zeros([1])
    for i in range(4):
        i = i * 2
        s = s + i * x
        if rt.sum(s) > 100:
            break
    return s


@case(args=[(f32([1.0]),), (f32([30.0]),)])
def range_bound_changes_in_body(x):
    n = 3
    s = rt.zeros([1])
    for _ in range(n):
        n = n + 1
        s = s + x
        if rt.sum(s) > 50:
            break
    return s, n


@case(args=[(f32([1.0, 1.0, -1.0]),), (f32([1.0, -1.0, -1.0]),)])
def loop_var_after_tensor_bound_loop(x):
    n = (x > 0).astype("int64").sum()
    acc = rt.zeros([3])
    for i in range(n):
        acc = acc + x * (i + 1)
    return acc, i


@case(args=[(f32([1.0, 5.0, 1.0, 1.0]),), (f32([1.0, 1.0, 1.0, 1.0]),)])
def loop_var_after_tensor_break(x):
    for i in range(4):
        if x[i] > 3:
            break
    return x * i


@case(args=[(f32([[1.0, 1.0], [-2.0, 0.0], [3.0, 3.0]]),), (pos(3, 2),)],
      batch=lambda b: (signed(b, 2),))
def row_after_break_over_rows(x):
    for row in x:
        if row.sum() < 0:
            break
    return row * 2
