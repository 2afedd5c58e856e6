"""The idioms of Paddle's dygraph-to-static `if`/`else` tests (test_ifelse.py and its
ifelse_simple_func.py), in new words: `.numpy()` read in a condition, names created in both
branches and used after, early returns in an elif chain, `and`/`or` mixing `is None` with
tensors, a class defined in the function, a tensor used as a truth value, Python counters
returned from both branches, and a Layer that keeps constants in a dict on `self`."""
import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, neg, pos, rand, signed


@case(args=[(f32([[7.0, 9.0], [8.0, 6.0]]), None), (f32([[0.2, 0.7], [0.4, 0.1]]), None),
            (f32([[0.2, 0.7], [0.4, 0.1]]), i64([[1], [0]]))])
def mean_numpy_threshold(x, label):
    """A condition read through `.numpy()`, then a Python test of an optional label."""
    if paddle.mean(x).numpy() > 4:
        x = x - 3
    else:
        x = x + 0.5
    if label is not None:
        probs = F.softmax(x, axis=-1)
        return F.cross_entropy(probs, label, reduction="none", use_softmax=False)
    return x


@case(args=[(f32([[1.0, 5.0, 2.0], [0.5, 0.5, 0.5]]), 1),
            (f32([[4.0, 0.1, 0.2], [9.0, 9.0, 9.0]]), 50)])
def column_chosen_by_python_then_tensor(x, col):
    """A Python test of an argument against a static size picks a tensor index; the tensor
    test then reads an element at that index."""
    row = 0
    if abs(col) > x.shape[-1]:
        col = paddle.full([], 0, dtype="int64")
    else:
        col = paddle.full([], col, dtype="int64")
    if paddle.mean(x) > x[row][col]:
        y = F.relu(paddle.pow(x, 2))
    else:
        y = paddle.tanh(paddle.pow(x, 2))
    return y


@case(args=[(pos(2, 3),), (neg(2, 3) * 10,)], batch=lambda b: (signed(b, 3) * 4,))
def names_made_in_both_branches(x):
    """Several names created inside both branches and read after the `if`."""
    shifted = x + 1
    if paddle.mean(x) > -2:
        x = x + 1
        first = x + 2
        second = x + 3
        unused = x * 0
    else:
        shifted = shifted + 1
        first = x - 2
        second = x + 3
        unused = x * 1  # noqa: F841
    second = second + first
    total = second + shifted
    return total


@case(args=[(i64([0]),), (i64([4]),)])
def early_return_then_fall_through(flag):
    if flag == 0:
        small = paddle.zeros([2, 2])
        big = paddle.zeros([3, 3])
        return small, big
    small = paddle.ones([2, 2]) * flag.astype("float32")
    return small, paddle.ones([3, 3]) + 1


@case(args=[(i64([0]),), (i64([1]),), (i64([6]),)])
def early_returns_in_elif_chain(flag):
    if flag == 0:
        return paddle.zeros([2]), paddle.zeros([3])
    elif flag == 1:
        a = paddle.ones([2]) * 2
        b = paddle.ones([3]) * 2
        return a, b
    c = paddle.ones([2]) * 5
    return c, paddle.ones([3]) * 5


@case(args=[(rand(2), True), (rand(2), False)])
def comprehension_in_python_if(x, build):
    if build:
        y = paddle.add_n([paddle.full([2], float(v)) for v in range(4)])
    else:
        y = x
    return y + x


@case(args=[(neg(4, 3) * 0.05,), (neg(4, 3) * 5,), (pos(4, 3),), (pos(5, 3),)])
def nested_if_with_runtime_batch(x):
    """A batch size that becomes a tensor when the shape differs, compared inside nested
    tensor `if`s."""
    batch = 4
    feat = x.shape[-1]
    bias = paddle.full([feat], 1.0)
    if x.shape[0] != batch:
        batch = paddle.shape(x)[0]
    if paddle.mean(x) < 0:
        y = x + bias
        w = paddle.full([feat], 10.0)
        if y[0][0] < 10:
            y = F.relu(y * w)
            if paddle.mean(y) < batch:
                y = paddle.abs(y) + 1
            else:
                y = y - paddle.full(y.shape, -1.0)
        else:
            y = y * w
    else:
        y = F.relu((x - bias) * 10)
    return y


@case(args=[(rand(3),), (rand(0),)])
def name_only_in_untaken_python_branch(x):
    """`z` is set only in a Python branch that is never taken, and in a branch a shape picks."""
    y = paddle.reshape(x, [-1, 1])
    limit = 2
    if limit < 1:
        z = y
    if x.shape[0] < 1:
        res = paddle.full([1], 2.0)
        z = y + 1  # noqa: F841
    else:
        res = x * 3
    return res


class ConstantsInDict(nn.Layer):
    """A Layer keeping constants in a dict on `self`, rewritten in nested tensor `if`s."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 5, weight_attr=paddle.ParamAttr(
            initializer=nn.initializer.Constant(0.3)), bias_attr=paddle.ParamAttr(
            initializer=nn.initializer.Constant(0.1)))
        self.alpha = 0.5
        self.constants = {}

    def forward(self, x):
        if x.shape[-1] != 4:
            raise ValueError(f"expected 4 features, got {x.shape[-1]}")
        self.constants["bias"] = paddle.full([5], 1.0)
        out = self.fc(x)
        if paddle.mean(out) < 0:
            y = out + self.constants["bias"]
            self.constants["w"] = paddle.full([5], 3.0)
            if y[0][0] < self.alpha:
                y = F.relu(y * self.constants["w"])
                if y[0][-1] < self.alpha:
                    y = paddle.abs(y) + 2
                else:
                    y = y - 1
        else:
            y = out - self.constants["bias"]
        return paddle.mean(y)


case(args=[(pos(2, 4) * -4,), (pos(2, 4) * 4,), (neg(2, 4) * 0.1,)],
     batch=lambda b: (signed(b, 4) * 4,))(ConstantsInDict)


@case(args=[(pos(3, 2), None), (neg(3, 2), None), (neg(3, 2), i64([[0], [1], [1]])),
            (neg(1, 2), None)])
def and_or_with_none_checks(x, label):
    n = paddle.shape(x)
    if x is not None and (paddle.mean(x) > 0 or label is not None) and n[0] > 1 and True:
        x = x - 1
    else:
        x = x + 1
    if label is not None:
        return F.cross_entropy(F.softmax(x), label, reduction="none", use_softmax=False)
    return x


@case(args=[(pos(3, 2), None), (neg(1, 2), f32([1.0])), (pos(1, 2), f32([1.0]))])
def and_or_groups(x, y):
    n = paddle.shape(x)
    m = paddle.mean(x)
    if (x is not None and n[0] > 1) or (y is not None and m > 0):
        x = x + 1
    if (x is not None or n[0] > 1) and (y is not None or m > 0):
        x = x - 3
    return x


@case(args=[(rand(1, 2),), (rand(4, 2),)], batch=lambda b: (rand(b, 2),))
def local_class_in_condition(x):
    class Offsets:
        def __init__(self):
            self.low = 1
            self.step = 2

    off = Offsets()
    if paddle.shape(x)[0] > off.low:
        x = x + off.step
    else:
        x = x - off.step
    return x


@case(args=[(f32([[1.0, 2.0], [3.0, 4.0]]),), (f32([[1.0, -1.0], [2.0, -2.0]]),),
            (f32([[0.0, 3.0], [-3.0, 0.0]]),)])
def tensor_as_truth_value(x):
    """`if mean:` on a tensor, Python loops with `break` inside its branches, `and`/`or`
    joining tensors and Python values, and `not` of a tensor `and`."""
    x = paddle.assign(x)
    mean = paddle.mean(x)
    if mean:
        for i in range(8):
            if i > 3:
                x += 1
                break
            x += 1
    else:
        for i in range(20):
            x += 2
            break
    if paddle.mean(x) + 1 and mean > 1 and x is not None or 3 > 4:  # noqa: PLR0133
        x -= 1
    if not (x[0][0] and (mean * x)[0][1]):
        x += 10
    return x


@case(args=[(f32([3.0, 4.0]), i64([1])), (f32([3.0, 4.0]), i64([0]))])
def python_counter_from_both_branches(x, pred):
    index = 0
    if pred:
        y = x[index] + 1
        index = index + 1
        return y, index
    else:
        y = x[index] + 2
        index = index + 1
        return y, index


@case(args=[(pos(3),), (neg(3),)], stdout=("a constant flag",))
def expression_statement_in_branch(x):
    flag = True
    if flag:
        print("a constant flag")
    if paddle.mean(x) < 0:
        x + 1
    return x * 2


@case(args=[(f32([0.5]),), (f32([-3.0]),), (f32([12.0]),)])
def conditional_expression_in_while(x):
    step = x + 1 if paddle.mean(x) > 0 else x - 1
    while (step if step > 0 else -step) < 10:
        step = step * 2 if step > 0 else step * 3
    return step


@case(args=[(rand(2, 3), 1), (rand(2, 3), -1)])
def python_sign_picks_layer_function(x, sign):
    act = F.relu if sign > 0 else paddle.tanh
    y = act(x)
    if paddle.max(y) > 0.5:
        y = y / paddle.max(y)
    return y
