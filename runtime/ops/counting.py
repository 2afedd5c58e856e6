"""Ops whose results depend on the values, not only the shapes: `nonzero`, `unique`,
`bincount` (their lengths are known only at run time: -1 in static shapes, as
`masked_select`'s), and the sorted-search ops `searchsorted` / `bucketize`. None carries a
gradient."""
from __future__ import annotations

from ..core import is_tensor
from ..dtypes import convert_dtype, int32, int64
from . import infer as I
from .creation import full
from .registry import Meta, OpError, OpTypeError, bind, register


def _int_name(op: str, dtype) -> str:
    dt = convert_dtype(dtype)
    if dt not in (int32, int64):
        raise OpTypeError(f"{op}: dtype must be int32 or int64, got {dt.name}")
    return dt.name


# ---- nonzero ---------------------------------------------------------------------------------

def _nonzero_infer(x):
    I.check_tensor("nonzero", "x", x)
    return Meta((-1, len(x.shape)), int64)


NONZERO = register(
    "nonzero", kernel=lambda xp, x: xp.argwhere(x).astype("int64"), nondiff=True, amp="keep",
    infer=_nonzero_infer,
    doc="The indices of x's non-zero elements, one row each ([n, x.ndim], n known at run "
        "time).")


def nonzero(x, as_tuple: bool = False, name=None):
    """Indices of the non-zero (true) elements: an int64 tensor [n, x.ndim], or with
    `as_tuple=True` one 1-D tensor per axis.

    >>> import runtime as rt
    >>> rt.nonzero(rt.to_tensor([[0, 3], [5, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    rows = bind(NONZERO, (x,), {})
    if not as_tuple:
        return rows
    return tuple(rows[:, k] for k in range(len(x.shape)))


# ---- unique ----------------------------------------------------------------------------------

def _unique_kernel(xp, x, axis=None, dtype="int64"):
    flat = x.reshape(-1) if axis is None else x
    out, index, inverse, counts = xp.unique(flat, return_index=True, return_inverse=True,
                                            return_counts=True, axis=axis)
    return out, index.astype(dtype), inverse.reshape(-1).astype(dtype), counts.astype(dtype)


def _unique_infer(x, axis=None, dtype="int64"):
    I.check_tensor("unique", "x", x)
    idx = convert_dtype(dtype)
    if axis is None:
        n = -1 if -1 in x.shape else _size(x.shape)
        return Meta((-1,), x.dtype), Meta((-1,), idx), Meta((n,), idx), Meta((-1,), idx)
    a = I.norm_axis("unique", axis, len(x.shape))
    shape = tuple(-1 if i == a else d for i, d in enumerate(x.shape))
    return (Meta(shape, x.dtype), Meta((-1,), idx), Meta((x.shape[a],), idx),
            Meta((-1,), idx))


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


UNIQUE = register(
    "unique", kernel=_unique_kernel, infer=_unique_infer, nondiff=True, amp="keep",
    doc="The sorted distinct values of x (flattened, or slices along `axis`), with the "
        "index of each one's first occurrence, the inverse map and the counts.")


def unique(x, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis=None, dtype="int64", name=None):
    """The sorted distinct values of `x` (flattened unless `axis` is given), and on request
    the index of each one's first occurrence, where each element of `x` went (the inverse)
    and how often each occurs; returned in that order (Paddle's).

    >>> import runtime as rt
    >>> out, counts = rt.unique(rt.to_tensor([3, 1, 3, 2]), return_counts=True)
    >>> out.tolist(), counts.tolist()
    ([1, 2, 3], [1, 1, 2])
    """
    attrs = {"dtype": _int_name("unique", dtype)}
    if axis is not None:
        attrs["axis"] = int(axis)
    out, index, inverse, counts = bind(UNIQUE, (x,), attrs)
    extra = [t for t, want in ((index, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    return (out, *extra) if extra else out


# ---- bincount --------------------------------------------------------------------------------

def _bincount_kernel(xp, x, weights=None, length=None, minlength=0, numpy_empty=False):
    if length is not None:  # (a 0-d int array: a length computed by the program)
        minlength = _min_length(int(length))
    if numpy_empty and weights is not None and not x.size:
        raise OpError(  # (`np.bincount(t, weights=w)` in converted code: NumPy's dtype)
            "np.bincount of an empty array with weights: NumPy ignores the weights of no "
            "values and gives int64 counts, where the program's counts are float64 (a "
            "program fixes a dtype when it is built). Skip the call where the array may be "
            "empty, or count with rt.bincount")
    if x.size and int(x.min()) < 0:
        raise OpError(f"bincount: x holds a negative value ({int(x.min())}); values must be "
                      ">= 0")
    out = xp.bincount(x, weights=weights, minlength=minlength)
    return out if weights is None else out.astype(weights.dtype)


def _bincount_infer(x, weights=None, length=None, minlength=0, numpy_empty=False):
    I.check_tensor("bincount", "x", x)
    if length is not None and (len(length.shape) != 0 or length.dtype.kind not in "iu"):
        raise OpTypeError(f"bincount: minlength must be an int or a 0-d int tensor, got "
                          f"{length.dtype.name}{I.fmt(length.shape)}")
    if len(x.shape) != 1 or x.dtype.kind not in "iu":
        raise OpTypeError(f"bincount: x must be a 1-D integer tensor, got "
                          f"{x.dtype.name}{I.fmt(x.shape)}")
    if weights is not None and I.is_meta(weights) and tuple(weights.shape) != tuple(x.shape):
        raise OpError(f"bincount: weights has shape {I.fmt(weights.shape)} but x has shape "
                      f"{I.fmt(x.shape)}; they must match")
    return Meta((-1,), int64 if weights is None else weights.dtype)


BINCOUNT = register(
    "bincount", kernel=_bincount_kernel, infer=_bincount_infer, nondiff=True, amp="keep",
    doc="How often each value 0..max(x) occurs in x (or the sum of `weights` there); at "
        "least `minlength` long.")


def bincount(x, weights=None, minlength=0, name=None):
    """Count each value of the non-negative 1-D int tensor `x` (summing `weights` instead
    when given); the result has `max(x) + 1` entries, at least `minlength` (an int, or a
    0-d int tensor).

    >>> import runtime as rt
    >>> rt.bincount(rt.to_tensor([1, 1, 3])).tolist()
    [0, 2, 0, 1]
    """
    if is_tensor(minlength):  # (`int(batch.max()) + 1` in converted code: known at run time)
        return bind(BINCOUNT, (x, weights, minlength), {})
    return bind(BINCOUNT, (x, weights), {"minlength": _min_length(int(minlength))})


def _min_length(n: int) -> int:
    if n < 0:
        raise OpError(f"bincount: minlength must be >= 0, got {n}")
    return n


# ---- searchsorted / bucketize ----------------------------------------------------------------

def _searchsorted_kernel(xp, seq, values, right=False, dtype="int64"):
    side = "right" if right else "left"
    if seq.ndim == 1:
        return xp.searchsorted(seq, values, side=side).astype(dtype)
    lead = seq.shape[:-1]
    s, v = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
    out = xp.stack([xp.searchsorted(s[i], v[i], side=side) for i in range(s.shape[0])])
    return out.reshape(*lead, values.shape[-1]).astype(dtype)


def _searchsorted_infer(seq, values, right=False, dtype="int64"):
    I.check_tensor("searchsorted", "sorted_sequence", seq)
    I.check_tensor("searchsorted", "values", values)
    if len(seq.shape) > 1 and (len(values.shape) != len(seq.shape) or any(
            a != b and -1 not in (a, b) for a, b in zip(seq.shape[:-1], values.shape[:-1]))):
        raise OpError(f"searchsorted: sorted_sequence has shape {I.fmt(seq.shape)} and values "
                      f"{I.fmt(values.shape)}; an N-D sequence needs values with the same "
                      "leading dims")
    return Meta(values.shape, convert_dtype(dtype))


SEARCHSORTED = register(
    "searchsorted", kernel=_searchsorted_kernel, infer=_searchsorted_infer, nondiff=True,
    amp="keep", doc="Where each value would be inserted into the sorted last axis of "
                    "sorted_sequence to keep it sorted.")


def searchsorted(sorted_sequence, values, out_int32: bool = False, right: bool = False,
                 name=None):
    """For each of `values`, the index in the sorted `sorted_sequence` (its last axis; leading
    dims pair with `values`' leading dims) where it would be inserted: before equal entries,
    or after them with `right=True`.

    >>> import runtime as rt
    >>> rt.searchsorted(rt.to_tensor([1, 3, 5]), rt.to_tensor([3, 6])).tolist()
    [1, 3]
    """
    return bind(SEARCHSORTED, (sorted_sequence, values),
                {"right": bool(right), "dtype": "int32" if out_int32 else "int64"})


def bucketize(x, sorted_sequence, out_int32: bool = False, right: bool = False, name=None):
    """The bucket of each element of `x` between the boundaries of the 1-D `sorted_sequence`
    (`searchsorted(sorted_sequence, x)`).

    >>> import runtime as rt
    >>> rt.bucketize(rt.to_tensor([0.5, 2.0, 9.0]), rt.to_tensor([1.0, 2.0, 4.0])).tolist()
    [0, 1, 3]
    """
    if len(sorted_sequence.shape) != 1:
        raise OpError(f"bucketize: sorted_sequence has shape {list(sorted_sequence.shape)}; "
                      "it must be 1-D")
    return searchsorted(sorted_sequence, x, out_int32, right)


# ---- histogram -------------------------------------------------------------------------------

def _histogram_kernel(xp, x, lo=None, hi=None, bins=100, min=0.0, max=0.0):
    if lo is not None:  # (bounds the program computes: checked when it runs)
        min, max = float(lo), float(hi)
        _check_range(min, max)
    lo, hi = float(min), float(max)
    if lo == hi == 0.0 and x.size:  # Paddle: the data's own range
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1.0, hi + 1.0
    return xp.histogram(x.astype("float64", copy=False), bins=bins, range=(lo, hi))[0].astype(
        "int64")


def _histogram_infer(x, lo=None, hi=None, bins=100, min=0.0, max=0.0):
    I.check_tensor("histogram", "input", x)
    for name, b in (("min", lo), ("max", hi)):
        if b is not None and (tuple(b.shape) != () or b.dtype.kind not in "biuf"):
            raise OpTypeError(f"histogram: {name} must be a number or a 0-d tensor, got "
                              f"{b.dtype.name}{I.fmt(b.shape)}")
    return Meta((bins,), int64)


def _check_range(lo, hi) -> None:
    if hi < lo:
        raise OpError(f"histogram: max ({hi}) must not be less than min ({lo})")


HISTOGRAM = register(
    "histogram", kernel=_histogram_kernel, infer=_histogram_infer, nondiff=True, amp="keep",
    doc="How many elements fall in each of `bins` equal bins over [min, max].")


def histogram(input, bins: int = 100, min: float = 0, max: float = 0, name=None):
    """How many elements of `input` fall in each of `bins` equal-width bins over [min, max]
    (both 0: the data's own minimum and maximum; values outside are not counted), int64.

    >>> import runtime as rt
    >>> rt.histogram(rt.to_tensor([1.0, 2.0, 1.0, 4.0]), bins=3, min=1, max=4).tolist()
    [2, 1, 1]
    """
    if not isinstance(bins, int) or bins < 1:
        raise OpError(f"histogram: bins must be a positive int, got {bins!r}")
    if is_tensor(min) or is_tensor(max):  # (`float(x.max())` in converted code: a run-time
        # value; the range is checked when the program runs)
        lo, hi = (b if is_tensor(b) else full([], float(b), "float64") for b in (min, max))
        return bind(HISTOGRAM, (input, lo, hi), {"bins": bins})
    _check_range(min, max)
    return bind(HISTOGRAM, (input,), {"bins": bins, "min": float(min), "max": float(max)})


METHODS = {"nonzero": nonzero, "unique": unique, "bincount": bincount, "bucketize": bucketize,
           "histogram": histogram}

__all__ = ["bincount", "bucketize", "histogram", "nonzero", "searchsorted", "unique"]
