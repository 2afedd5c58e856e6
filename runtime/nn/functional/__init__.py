"""`rt.nn.functional` (import as `F`): the functional form of every layer, Paddle 2.x names.

>>> import runtime as rt
>>> import runtime.nn.functional as F
>>> F.relu(rt.to_tensor([-1.0, 1.0])).tolist()
[0.0, 1.0]
"""
from .activation import (  # noqa: F401
    celu,
    elu,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    maxout,
    mish,
    prelu,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softplus,
    softshrink,
    softsign,
    swish,
    tanh,
    tanhshrink,
    thresholded_relu,
)
from .attention import scaled_dot_product_attention  # noqa: F401
from .common import (  # noqa: F401
    alpha_dropout,
    channel_shuffle,
    cosine_similarity,
    dropout,
    dropout2d,
    dropout3d,
    embedding,
    interpolate,
    linear,
    normalize,
    one_hot,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
    temporal_shift,
    upsample,
    zeropad2d,
)
from .conv import conv1d, conv1d_transpose, conv2d, conv2d_transpose  # noqa: F401
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
from .margin_losses import (  # noqa: F401
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    multi_label_soft_margin_loss,
    pairwise_distance,
    poisson_nll_loss,
    sigmoid_focal_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from .norm import (  # noqa: F401
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
)
from .patches import unfold  # noqa: F401
from .pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
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
