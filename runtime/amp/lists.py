"""The AMP op lists: Paddle 3.3.1's (`paddle/amp/amp_lists.py`), spelled with this registry's
op names, and the few places where this runtime chooses differently (each with its reason).

The table here decides an op's category under auto_cast; an op's own `amp=` in its registry
entry is the fallback for ops the table does not name. `tests/amp/test_amp_lists.py` checks
that every op the registry marks white or black is named here, so a new op cannot change the
lists without this file (and docs/training.md) saying so.
"""
from __future__ import annotations

# Paddle's lists, verbatim (Paddle's op names).
PADDLE_WHITE = frozenset({
    "conv2d", "einsum", "matmul", "matmul_v2", "linear_v2", "max_pool2d_with_index", "mul",
    "fused_gemm_epilogue", "fused_rotary_position_embedding", "flash_attn"})
PADDLE_BLACK = frozenset({  # FP16_BLACK_LIST == BF16_BLACK_LIST: float32 under O1
    "tan", "acos", "asin", "sinh", "cosh", "atanh", "tanh_shrink", "erfinv", "exp", "expm1",
    "log", "log10", "log2", "reciprocal", "rsqrt", "pow", "square", "reduce_sum", "mean",
    "reduce_mean", "reduce_prod", "cumprod", "cumsum", "dist", "pnorm", "frobenius_norm",
    "renorm", "group_norm", "layer_norm", "softmax", "softmin", "softplus", "log_softmax",
    "softmax_with_cross_entropy", "sigmoid_cross_entropy_with_logits",
    "c_softmax_with_cross_entropy", "c_softmax_with_multi_label_cross_entropy",
    "cross_entropy", "cross_entropy2", "nll_loss", "huber_loss", "triplet_margin_loss",
    "log_loss", "hsigmoid_loss", "margin_cross_entropy"})
PADDLE_EXTRA_BLACK = frozenset({  # float32 under O1 and O2 (slow low-precision grads)
    "linear_interp_v2", "nearest_interp_v2", "bilinear_interp_v2", "bicubic_interp_v2",
    "trilinear_interp_v2", "lookup_table", "lookup_table_v2", "scatter"})

# Paddle's name -> this registry's name, where they differ.
ALIASES = {
    "matmul_v2": "matmul", "mul": "matmul", "linear_v2": "linear", "reduce_sum": "sum",
    "reduce_mean": "mean", "reduce_prod": "prod", "pnorm": "p_norm",
    "softmax_with_cross_entropy": "cross_entropy", "cross_entropy2": "cross_entropy",
    "lookup_table": "embedding", "lookup_table_v2": "embedding",
    "linear_interp_v2": "resize2d", "nearest_interp_v2": "resize2d",
    "bilinear_interp_v2": "resize2d", "bicubic_interp_v2": "resize2d",
    "trilinear_interp_v2": "resize2d",
}


def _ours(names) -> frozenset:
    return frozenset(ALIASES.get(n, n) for n in names)


# Deliberate differences: our op name -> (our category, Paddle's, why).
DIFFERENCES = {
    "max_pool2d": ("promote", "white (max_pool2d_with_index)",
                   "Paddle whitelists its return_mask=True kernel (max_pool2d_with_index) and "
                   "promotes plain pool2d; one op here serves both, and promotes"),
    "batch_norm": ("black", "promote (by x's dtype)",
                   "the kernel takes one dtype for x and its float32 statistics; a float16 "
                   "variance of large activations overflows"),
    "batch_norm_relu": ("black", "(no op: batch_norm then relu)",
                        "batch_norm with its relu fused by a program: batch_norm's precision"),
    "batch_norm_relu_grad": ("black", "(no op: part of batch_norm_grad)",
                             "the fused op's backward runs in batch_norm's precision"),
    "log1p": ("black", "promote", "the same range hazard as log, which Paddle keeps in float32"),
    "logsumexp": ("black", "promote", "exp inside: the same range hazard as exp"),
    "conv2d_grad_input": ("white", "(no op: part of conv2d_grad)",
                          "conv2d's backward ops run in conv2d's precision"),
    "conv2d_grad_filter": ("white", "(no op: part of conv2d_grad)",
                           "conv2d's backward ops run in conv2d's precision"),
    "nll_loss_grad": ("black", "(no op: part of nll_loss_grad)",
                      "nll_loss's backward runs in nll_loss's precision"),
    "logcumsumexp": ("black", "promote", "exp inside: the same range hazard as exp"),
    **{name: ("black", "promote (its kernels take float32 and float64 only)",
              "NumPy's and CuPy's linalg take no float16, and a determinant or a solve "
              "leaves float16's range") for name in ("det", "slogdet", "solve", "cholesky")},
}
# Under O2 Paddle keeps only PADDLE_EXTRA_BLACK in float32 and runs the rest of its O1 black
# list (exp, log, softmax, cumsum, pow, ...) in low precision. Here O2 keeps the whole O1
# black list in float32 as well: the same overflows (a cumsum of 4,096 values near 30) would
# otherwise come back under O2. `custom_white_list` moves any of them back to low precision.
O2_KEEPS_O1_BLACK = True

WHITE = _ours(PADDLE_WHITE) | {n for n, (c, _, _) in DIFFERENCES.items() if c == "white"}
WHITE = WHITE - {n for n, (c, _, _) in DIFFERENCES.items() if c != "white"}
BLACK_O1 = (_ours(PADDLE_BLACK | PADDLE_EXTRA_BLACK)
            | {n for n, (c, _, _) in DIFFERENCES.items() if c == "black"})
BLACK_O2 = BLACK_O1 if O2_KEEPS_O1_BLACK else (
    _ours(PADDLE_EXTRA_BLACK) | {n for n, (c, _, _) in DIFFERENCES.items() if c == "black"})
# Ops the registry marks white that Paddle runs by promotion: the table follows Paddle.
PROMOTE = frozenset({"conv2d_transpose"})
NAMED = WHITE | BLACK_O1 | frozenset(DIFFERENCES) | PROMOTE


def category(name: str, registered: str, level: str) -> str:
    """An op's AMP category at `level` (before custom lists): the table's, else the op's."""
    if name in WHITE:
        return "white"
    if name in (BLACK_O2 if level == "O2" else BLACK_O1):
        return "black"
    if name in NAMED:
        return "promote"
    return registered


def paddle_category(name: str, level: str) -> str:
    """What Paddle 3.3.1 does with our op `name` at `level` (for the docs' table)."""
    paddle = {n for n in PADDLE_WHITE if ALIASES.get(n, n) == name}
    if paddle:
        return "white"
    black = PADDLE_EXTRA_BLACK | (PADDLE_BLACK if level == "O1" else frozenset())
    if any(ALIASES.get(n, n) == name for n in black):
        return "black"
    return "promote"
