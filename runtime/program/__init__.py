"""The static IR and everything that works on it (see docs/ir.md).

`ir` (Program, Block, Op), `variable` (Variable), `builder` (static-mode bind, program_guard),
`origin` (user source locations), `printer` (text form), `verify`, `control_flow` (cond,
while_loop, switch_case), `debug_ops` (Print, Assert), `codegen`
(compiles programs for the executor), `backward` (append_backward, gradients), `passes`,
`serialize` (JSON + .npz). Tensor arrays are ops (`runtime/ops/arrays.py`).
"""
# (they register their ops; conv_native and conv_depthwise_native install the C convolution
# kernels in nn_conv, pool_native the C max pooling; cuda_rows the CUDA softmax and LayerNorm
# in front of the C ones, which it imports first; lstm_native the C LSTM recurrence in nn_rnn,
# gru_native the C GRU recurrence; cuda_batch_norm the CUDA batch norm; batch_norm_native
# BatchNorm + ReLU in C or CUDA)
from . import (  # noqa: F401
    batch_norm_native,
    control_flow,
    conv_depthwise_native,
    conv_native,
    cuda_batch_norm,
    cuda_rows,
    debug_ops,
    gru_native,
    layernorm_native,
    lstm_native,
    pool_native,
    softmax_native,
    train_step,
)
from .builder import (  # noqa: F401
    Builder,
    default_main_program,
    default_startup_program,
    disable_static,
    enable_static,
    in_dynamic_mode,
    program_guard,
)
from .ir import Block, Literal, Op, Program  # noqa: F401
from .variable import Variable  # noqa: F401
