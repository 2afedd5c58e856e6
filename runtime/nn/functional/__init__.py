"""`rt.nn.functional` (import as `F`): the functional form of every layer, Paddle 2.x names.

>>> import runtime as rt
>>> import runtime.nn.functional as F
>>> F.relu(rt.to_tensor([-1.0, 1.0])).tolist()
[0.0, 1.0]
"""
from .activation import (  # noqa: F401
    elu,
    gelu,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    mish,
    prelu,
    relu,
    relu6,
    sigmoid,
    silu,
    softmax,
    softplus,
    softsign,
    swish,
    tanh,
)
from .attention import scaled_dot_product_attention  # noqa: F401
from .common import (  # noqa: F401
    cosine_similarity,
    dropout,
    embedding,
    interpolate,
    linear,
    normalize,
    one_hot,
    pad,
    pixel_shuffle,
    temporal_shift,
    upsample,
)
from .conv import conv1d, conv2d, conv2d_transpose  # noqa: F401
from .loss import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    ctc_loss,
    kl_div,
    l1_loss,
    log_loss,
    margin_ranking_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
    softmax_with_cross_entropy,
    square_error_cost,
)
from .norm import batch_norm, group_norm, instance_norm, layer_norm  # noqa: F401
from .patches import unfold  # noqa: F401
from .pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from .sampling import affine_grid, grid_sample  # noqa: F401
from .sequence import (  # noqa: F401
    crf_decoding,
    gather_tree,
    label_smooth,
    linear_chain_crf,
    sequence_mask,
)
from .volume import (  # noqa: F401
    adaptive_avg_pool3d,
    adaptive_max_pool3d,
    avg_pool3d,
    conv3d,
    max_pool3d,
)
