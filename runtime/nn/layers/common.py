"""Common layers (as Paddle's `layer/common.py`): Linear, Embedding, and the parameter-free
Identity, Flatten, Dropout (Dropout2D / Dropout3D: whole channels; AlphaDropout), Pad2D,
ZeroPad2D, Upsample."""
from __future__ import annotations

from ...ops.shape import flatten
from .. import functional as F
from ..layer import Layer
from .compat import check_ignored, refuse


class Linear(Layer):
    """A fully connected layer. The weight is `[in_features, out_features]` (Paddle's layout,
    the transpose of PyTorch's), initialised XavierUniform; the bias is zeros.
    `bias_attr=False` drops the bias.

    >>> import runtime as rt
    >>> fc = rt.nn.Linear(4, 3)
    >>> fc.weight.shape, fc.bias.shape, fc.weight.name.endswith('.w_0')
    ([4, 3], [3], True)
    """

    def __init__(self, in_features: int, out_features: int, weight_attr=None, bias_attr=None,
                 name: str | None = None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.bias = self.create_parameter([out_features], attr=bias_attr, is_bias=True)
        self._name = name

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        name = f", name={self._name}" if self._name else ""
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._dtype}{name}")


class Embedding(Layer):
    """Rows of `weight` picked by integer ids. `padding_idx` (may be negative) gives a row
    that is zero at creation, is returned as zeros and receives no gradient. The weight is
    initialised XavierUniform, as in Paddle.

    >>> import runtime as rt
    >>> emb = rt.nn.Embedding(10, 4, padding_idx=0)
    >>> emb(rt.to_tensor([[0, 3], [5, 9]])).shape
    [2, 2, 4]
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None, weight_attr=None, name=None):
        super().__init__()
        check_ignored("Embedding", sparse=sparse)
        if max_norm is not None:
            refuse("Embedding", "max_norm", max_norm, "renormalising looked-up rows")
        if scale_grad_by_freq:
            refuse("Embedding", "scale_grad_by_freq", True, "gradients scaled by id frequency")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} is out of range for "
                                 f"{num_embeddings} embeddings")
            padding_idx %= num_embeddings
        self._num_embeddings, self._embedding_dim = num_embeddings, embedding_dim
        self._padding_idx, self._sparse = padding_idx, sparse
        self.weight = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr)
        if _weight is not None:  # initial values given directly (Paddle 3 / PyTorch)
            values = _weight.numpy() if hasattr(_weight, "numpy") else _weight
            self.weight.set_value(values)
        self.weight.stop_gradient = bool(_freeze)
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)
        if padding_idx is not None:
            values = self.weight.numpy().copy()
            values[padding_idx] = 0
            self.weight.set_value(values)

    def forward(self, x):
        return F.embedding(x, self.weight, padding_idx=self._padding_idx, sparse=self._sparse)

    def extra_repr(self) -> str:
        pad = f", padding_idx={self._padding_idx}" if self._padding_idx is not None else ""
        return f"{self._num_embeddings}, {self._embedding_dim}{pad}"

class Identity(Layer):
    """Returns its input unchanged (a placeholder, e.g. for a removed head).

    >>> import runtime as rt
    >>> rt.nn.Identity()(rt.ones([2])).shape
    [2]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Layer):
    """Merge axes `start_axis..stop_axis` into one (default: all but the batch axis).

    >>> import runtime as rt
    >>> rt.nn.Flatten()(rt.ones([2, 3, 4])).shape
    [2, 12]
    """

    def __init__(self, start_axis: int = 1, stop_axis: int = -1):
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, input):
        return flatten(input, self.start_axis, self.stop_axis)

    def extra_repr(self) -> str:
        return f"start_axis={self.start_axis}, stop_axis={self.stop_axis}"


class Dropout(Layer):
    """Zero elements with probability `p` while training (scaled by 1/(1-p) in Paddle's
    default 'upscale_in_train' mode); the identity in eval mode.

    >>> import runtime as rt
    >>> drop = rt.nn.Dropout(0.5)
    >>> drop.eval()(rt.ones([3])).numpy().tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5, axis=None, mode: str = "upscale_in_train", name=None,
                 inplace: bool = False):
        super().__init__()
        check_ignored("Dropout", inplace=inplace)
        self.p, self.axis, self.mode = p, axis, mode

    def forward(self, input):
        return F.dropout(input, p=self.p, axis=self.axis, training=self.training,
                         mode=self.mode)

    def extra_repr(self) -> str:
        return f"p={self.p}, axis={self.axis}, mode={self.mode}"


class Dropout2D(Layer):
    """Zero whole channels of [N, C, H, W] with probability `p` while training (see
    `F.dropout2d`); the identity in eval mode."""

    _function = staticmethod(F.dropout2d)

    def __init__(self, p: float = 0.5, data_format: str = "NCHW", name=None):
        super().__init__()
        self.p, self._data_format = p, data_format

    def forward(self, input):
        return self._function(input, p=self.p, training=self.training,
                              data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"p={self.p}, data_format={self._data_format}"


class Dropout3D(Dropout2D):
    """Zero whole channels of [N, C, D, H, W] with probability `p` while training."""

    _function = staticmethod(F.dropout3d)

    def __init__(self, p: float = 0.5, data_format: str = "NCDHW", name=None):
        super().__init__(p, data_format)


class AlphaDropout(Layer):
    """Dropout for SELU networks (see `F.alpha_dropout`); the identity in eval mode."""

    def __init__(self, p: float = 0.5, name=None):
        super().__init__()
        self.p = p

    def forward(self, input):
        return F.alpha_dropout(input, p=self.p, training=self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class ZeroPad2D(Layer):
    """Zeros around the height and width: `padding` is an int or [left, right, top, bottom].

    >>> import runtime as rt
    >>> rt.nn.ZeroPad2D([1, 0, 2, 0])(rt.ones([1, 1, 2, 2])).shape
    [1, 1, 4, 3]
    """

    def __init__(self, padding, data_format: str = "NCHW", name=None):
        super().__init__()
        self._pad = [padding] * 4 if isinstance(padding, int) else list(padding)
        self._data_format = data_format

    def forward(self, x):
        return F.zeropad2d(x, self._pad, data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"padding={self._pad}, data_format={self._data_format}"


class Pad2D(Layer):
    """Pad the last two spatial dims: `padding` is an int or [left, right, top, bottom];
    mode 'constant' (with `value`), 'reflect', 'replicate' or 'circular'.

    >>> import runtime as rt
    >>> rt.nn.Pad2D([1, 1, 2, 0])(rt.ones([1, 1, 2, 2])).shape
    [1, 1, 4, 4]
    """

    def __init__(self, padding, mode: str = "constant", value: float = 0.0,
                 data_format: str = "NCHW", name=None):
        super().__init__()
        self._pad = [padding] * 4 if isinstance(padding, int) else list(padding)
        self._mode, self._value, self._data_format = mode, value, data_format

    def forward(self, x):
        return F.pad(x, self._pad, mode=self._mode, value=self._value,
                     data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"padding={self._pad}, mode={self._mode}, value={self._value}"


class Upsample(Layer):
    """Resize images to `size` or by `scale_factor` ('nearest' or 'bilinear').

    >>> import runtime as rt
    >>> rt.nn.Upsample(scale_factor=2)(rt.ones([1, 3, 4, 5])).shape
    [1, 3, 8, 10]
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool = False, align_mode: int = 0, data_format: str | None = None,
                 recompute_scale_factor: bool | None = None, name=None):
        super().__init__()
        check_ignored("Upsample", recompute_scale_factor=recompute_scale_factor)
        data_format = "NCHW" if data_format is None else data_format  # images are 4-D here
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.align_mode, self.data_format = (align_corners, align_mode,
                                                                 data_format)

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.align_mode, self.data_format)

    def extra_repr(self) -> str:
        which = f"size={self.size}" if self.size is not None else \
            f"scale_factor={self.scale_factor}"
        return f"{which}, mode={self.mode}"
