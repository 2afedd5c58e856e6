"""The idioms of the rest of Paddle's dygraph-to-static tests (test_tsm.py, test_jit_setitem.py,
test_tensor_hook.py, test_pylayer.py, test_detach.py, test_convert_call.py,
test_convert_call_generator.py, test_backward_without_params.py, test_tensor_array.py-style
`create_array` loops, test_capture_free_vars.py, test_multi_forward.py), in new words: a TSM
block, item assignment that carries a gradient, gradient hooks, a PyLayer, helpers the
converter must leave alone, generators, tensor arrays grown in a graph loop, and free
variables of the module."""
import d2s
import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, neg, pos, rand, signed

SCALE_TABLE = {"small": 0.5, "large": 4.0}


class TemporalShiftBlock(nn.Layer):
    """A TSM residual block: frames of a clip shifted along time, then a conv."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2D(4)

    def forward(self, x):
        shifted = F.temporal_shift(x, seg_num=2, shift_ratio=0.25)
        y = self.bn(self.conv(shifted))
        if y.mean() > 0:
            y = F.relu(y)
        return x + y


case(args=[(pos(4, 4, 3, 3),), (neg(4, 4, 3, 3),)],
     batch=lambda b: (signed(2 * b, 4, 3, 3),))(TemporalShiftBlock)


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([-1.0, 2.0, -3.0]),)])
def setitem_carries_gradient(x):
    x.stop_gradient = False
    buf = paddle.zeros([2, 3])
    buf[0] = x * 2
    if x.sum() > 0:
        buf[1] = x * x
    else:
        buf[1, 1:] = x[1:] * 3
    loss = buf.sum()
    (g,) = paddle.grad(loss, x)
    return buf, g


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
def gradient_hook_doubles(x):
    x.stop_gradient = False
    y = x * 3
    y.register_hook(lambda g: g * 2)
    if y.sum() > 0:
        z = (y * y).sum()
    else:
        z = y.sum()
    (g,) = paddle.grad(z, x)
    return z, g


class _ClampGrad(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensor()
        return paddle.clip(grad * 2 * x, -1.0, 1.0)


@case(args=[(f32([0.1, 3.0]),), (f32([0.5, -0.2]),)])
def pylayer_with_clamped_gradient(x):
    x.stop_gradient = False
    y = _ClampGrad.apply(x)
    if y.sum() > 1:
        y = y * 2
    (g,) = paddle.grad(y.sum(), x)
    return y, g


@case(args=[(f32([1.0, 2.0]),), (f32([-4.0, 1.0]),)])
def detach_stops_gradient(x):
    x.stop_gradient = False
    y = x * 2
    frozen = y.detach()
    if frozen.sum() > 0:
        out = y * frozen
    else:
        out = y + frozen
    (g,) = paddle.grad(out.sum(), x)
    return out, g, frozen.stop_gradient


@d2s.not_to_static
def _python_only_scale(x, name):
    return x * SCALE_TABLE[name]


@case(args=[(f32([1.0, 2.0]), "small"), (f32([-3.0, 1.0]), "large")])
def helper_left_unconverted(x, name):
    y = _python_only_scale(x, name)
    if y.mean() > 0:
        y = y + 1
    return y


def _pairs(x, n):
    for i in range(n):
        yield i, x * (i + 1)


@case(args=[(f32([1.0, -1.0]), 3), (f32([1.0, -1.0]), 1)])
def generator_helper(x, n):
    total = paddle.zeros([2])
    for i, v in _pairs(x, n):
        if v.sum() >= 0:
            total = total + v
        else:
            total = total - i
    return total


def _helper_with_loop(x, limit):
    while x.sum() < limit:
        x = x * 2
    return x


class CallsHelperTwice(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        y = _helper_with_loop(paddle.abs(self.fc(x)) + 0.1, 4.0)
        return _helper_with_loop(y, 20.0)


case(args=[(rand(2, 2),)])(CallsHelperTwice)


@case(args=[(f32([1.0, 2.0]), i64([3])), (f32([1.0, 2.0]), i64([0]))])
def tensor_array_grown_in_while(x, n):
    arr = paddle.tensor.create_array("float32")
    i = paddle.zeros([1], dtype="int64")
    while i < n:
        paddle.tensor.array_write(x * i.astype("float32"), i, array=arr)
        i += 1
    last = paddle.zeros([2])
    if paddle.tensor.array_length(arr) > 0:
        last = paddle.tensor.array_read(arr, paddle.tensor.array_length(arr) - 1)
    return last, paddle.tensor.array_length(arr)


@case(args=[(f32([2.0]), "small"), (f32([2.0]), "large")])
def module_free_variable_read(x, name):
    scale = SCALE_TABLE[name]
    if x * scale > 3:
        x = x - scale
    return x


_FREE_WEIGHT = paddle.ones([3])
_FREE_WEIGHT.stop_gradient = False


@case(args=[(rand(2, 3),), (rand(2, 3) + 3,)])
def backward_without_layer_parameters(x):
    """`backward()` in the function with no Layer: the gradient goes to a module-level leaf it
    reads. (Paddle's test sets `stop_gradient=False` on the argument: a converted step gives no
    gradient to its arguments; and `.grad` of a leaf made inside the function has no static
    form: docs/d2s.md "Known limitations".)"""
    _FREE_WEIGHT.clear_grad()
    loss = (paddle.tanh(x) * _FREE_WEIGHT).mean()
    if loss > 0.5:
        loss = loss * 10
    loss.backward()
    return loss, _FREE_WEIGHT.grad


class TwoForwardMethods(nn.Layer):
    """A Layer whose forward calls another method that has its own control flow."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 4)
        self.dec = nn.Linear(4, 3)

    def encode(self, x):
        h = self.enc(x)
        if h.mean() > 0:
            h = F.relu(h)
        return h

    def forward(self, x, decode):
        h = self.encode(x)
        if decode:
            return self.dec(h)
        return h


case(args=[(rand(2, 3), True), (rand(2, 3), False)])(TwoForwardMethods)


@case(args=[(pos(2, 3),), (neg(2, 3),)], batch=lambda b: (signed(b, 3),))
def getattr_dispatch_over_functions(x):
    name = "relu" if x.shape[-1] == 3 else "tanh"
    act = getattr(F, name)
    y = act(x)
    if y.sum() == 0:
        y = y + x * 0.1
    return y


class ManualLSTMLanguageModel(nn.Layer):
    """PTB-LM style: one LSTM cell written with matmul and `paddle.split` into gates, unrolled
    over the time steps of the input by a Python loop, hidden states kept in lists."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.weight = self.create_parameter([8, 16])
        self.bias = self.create_parameter([16], is_bias=True)
        self.out = nn.Linear(4, 10)

    def forward(self, ids, init_h, init_c):
        x = self.embed(ids)
        h, c = init_h, init_c
        steps = []
        for t in range(x.shape[1]):
            gates = paddle.matmul(paddle.concat([x[:, t, :], h], axis=1), self.weight) + self.bias
            i, j, f, o = paddle.split(gates, num_or_sections=4, axis=-1)
            c = c * F.sigmoid(f) + F.sigmoid(i) * paddle.tanh(j)
            h = paddle.tanh(c) * F.sigmoid(o)
            steps.append(paddle.unsqueeze(h, 1))
        logits = self.out(paddle.concat(steps, axis=1))
        loss = F.cross_entropy(logits[:, :-1], ids[:, 1:].unsqueeze(-1))
        if loss > 100:
            loss = loss * 0  # a diverged batch is skipped
        return loss, h, c


case(args=[(i64([[1, 2, 3], [4, 5, 6]]), rand(2, 4), rand(2, 4)),
           (i64([[7, 8, 9, 1, 2], [3, 4, 5, 6, 7]]), rand(2, 4), rand(2, 4))],
     batch=lambda b: (i64([[i % 10, (i + 1) % 10, (i + 2) % 10] for i in range(b)]),
                      rand(b, 4), rand(b, 4)))(ManualLSTMLanguageModel)


class GreedyDecoder(nn.Layer):
    """Seq2seq greedy decoding: a graph loop stopped by `paddle.all(finished)` or a step
    budget, with `paddle.logical_or` to track finished rows."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(6, 4)
        self.cell = nn.GRUCell(4, 4)
        self.proj = nn.Linear(4, 6)

    def forward(self, state, max_len):
        token = paddle.zeros([state.shape[0]], dtype="int64")
        finished = paddle.zeros([state.shape[0]], dtype="bool")
        outs = []
        step = paddle.zeros([1], dtype="int64")
        while paddle.logical_not(paddle.all(finished)) and step < max_len:
            _, state = self.cell(self.embed(token), state)
            token = paddle.argmax(self.proj(state), axis=-1)
            token = paddle.where(finished, paddle.zeros_like(token), token)
            finished = paddle.logical_or(finished, token == 5)
            outs.append(token)
            step += 1
        return paddle.stack(outs, axis=1), step


case(args=[(rand(2, 4) * 3, i64([4])), (rand(3, 4) * 3, i64([1]))])(GreedyDecoder)


class MaskedSelfAttention(nn.Layer):
    """BERT style: an input mask turned into an additive bias `(1 - mask) * -1e4`, unsqueezed
    to the heads' rank; a Python flag chooses whether attention probabilities are returned."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.heads = 2

    def forward(self, x, mask, return_probs):
        b, s, d = x.shape
        q, k, v = paddle.split(self.qkv(x), 3, axis=-1)
        q = q.reshape([b, s, self.heads, d // self.heads]).transpose([0, 2, 1, 3])
        k = k.reshape([b, s, self.heads, d // self.heads]).transpose([0, 2, 1, 3])
        v = v.reshape([b, s, self.heads, d // self.heads]).transpose([0, 2, 1, 3])
        bias = paddle.unsqueeze((1.0 - mask.astype("float32")) * -1e4, axis=[1, 2])
        scores = paddle.matmul(q, k, transpose_y=True) / (d // self.heads) ** 0.5 + bias
        probs = F.softmax(scores, axis=-1)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, d])
        if return_probs:
            return ctx, probs
        return ctx


case(args=[(rand(2, 3, 8), i64([[1, 1, 0], [1, 1, 1]]), True),
           (rand(2, 3, 8), i64([[1, 0, 0], [1, 1, 0]]), False)])(MaskedSelfAttention)
