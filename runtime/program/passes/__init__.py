"""Program-to-program passes. Each returns a new program (sharing the parameter Tensors) and
records its name in `program.passes`; the input program is left unchanged.

- `eliminate_dead_code(program, keep)`: drop ops whose outputs nothing needs.
- `fold_constants(program)`: evaluate ops whose inputs are all constants, once.
- `eliminate_common_subexpressions(program)`: reuse the first of two identical ops.
- `fold_batch_norm(program, keep)`: move an eval-mode BatchNorm into the convolution or
  linear layer before it (for inference programs: parameters are taken as constants).
- `fuse_batch_norm_relu(program, keep)`: a BatchNorm whose output only a ReLU reads becomes
  one `batch_norm_relu` op (native forward and backward).

Ops with effects (`print`, `assert`, persistable writes) and random ops are never removed,
merged or folded.
"""
from .batch_norm_relu import fuse_batch_norm_relu, fuse_batch_norm_relu_in_place
from .common import SIDE_EFFECTS, is_pure, rename_uses  # noqa: F401
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .fold import fold_constants
from .fold_batch_norm import fold_batch_norm

__all__ = ["eliminate_common_subexpressions", "eliminate_dead_code", "fold_batch_norm",
           "fold_constants", "fuse_batch_norm_relu", "fuse_batch_norm_relu_in_place"]
