"""Shape: triangles and diagonals, flips and rolls, repeats, splits, moved dims, broadcasting,
grids, stacks and differences.

Each op records its own node where torch's graph shows one (TrilBackward0, SplitBackward0,
...) and is composed from other ops where torch composes it (movedim is a permute, meshgrid a
view and an expand, vstack a cat of unsqueezed tensors, diff a difference of slices). Views
(diagonal, movedim, swapaxes, unflatten, split and chunk pieces, broadcast_to) share their
base's storage and version counter, as torch's do; the other ops copy.
"""

import warnings

import numpy as np

from .._creation import _check_device
from .._derivatives import DERIVATIVES as D
from .._dtype import int64, to_numpy_dtype
from ..autograd.callsite import user_stacklevel
from .. import _registry
from .._registry import export, method, records
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.formula import keep_raw, keep_raw_of, negative, record, record_outputs
from ..autograd.graph import _preserved_copy
from ._common import _TORCH_SCALAR, _as_tensor, _broadcast_error, _needs
from .arithmetic import sub
from .indexing import _alias_view
from .inplace import _check_inplace, _commit, _write
from .pointwise import clone
from .views import (_getitem_view, _make_view, _view_op, cat, expand, flatten, narrow, permute,
                    reshape, transpose, unsqueeze, view)


def _unsupported(op, arg):
    return NotImplementedError(f"gradviz: torch.{op}({arg}=...) is not implemented by gradviz's "
                               "core; run with --backend torch to use PyTorch")


def _int_tuple(xs):
    if isinstance(xs, (tuple, list)):
        if len(xs) == 1 and isinstance(xs[0], (tuple, list)):
            xs = xs[0]
        return tuple(int(x) for x in xs)
    return (int(xs),)


def _check_dims_unique(dims, ndim):
    wrapped = tuple(_wrap_dim(d, ndim) for d in dims)
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped


# ----- Triangles, diagonals, trace ---------------------------------------------------------

def _triangle(self, diagonal, name, fn):
    a = self._data
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    out = _make(fn(a, diagonal))
    if _needs(self):
        record(D[name], out, (self,), (diagonal,))
    return out


@export()
@records("tril")
def tril(self, diagonal=0):
    """The lower triangle (TrilBackward0): `torch.tril(torch.ones(2, 2))`."""
    return _triangle(self, diagonal, "tril", np.tril)


@export()
@records("triu")
def triu(self, diagonal=0):
    """The upper triangle (TriuBackward0): `torch.triu(torch.ones(2, 2), 1)`."""
    return _triangle(self, diagonal, "triu", np.triu)


def _diagonal_view(a, offset, d1, d2):
    """A writable NumPy view of a's diagonal (np.diagonal's is read-only), laid out as
    torch's: the other dims in order, then the diagonal."""
    key = [slice(None)] * a.ndim
    if offset >= 0:
        key[d2] = slice(offset, None)
    else:
        key[d1] = slice(-offset, None)
    b = a[tuple(key)]
    length = max(min(b.shape[d1], b.shape[d2]), 0)
    others = [d for d in range(a.ndim) if d not in (d1, d2)]
    shape = tuple(a.shape[d] for d in others) + (length,)
    strides = tuple(b.strides[d] for d in others) + (b.strides[d1] + b.strides[d2],)
    return np.lib.stride_tricks.as_strided(b, shape, strides)


def _diagonal_dims(self, dim1, dim2):
    n = self.dim()
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _triangle_(self, diagonal, name, fn):
    _check_inplace(self)
    if self._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    _write(self, fn(self._data, diagonal))
    _commit(self, D[name], (self,), (diagonal,), name + "_")
    return self


@method("tril_")
@records("tril")
def tril_(self, diagonal=0):
    """tril in place (TrilBackward0 on the edited tensor)."""
    return _triangle_(self, diagonal, "tril", np.tril)


@method("triu_")
@records("triu")
def triu_(self, diagonal=0):
    """triu in place (TriuBackward0 on the edited tensor)."""
    return _triangle_(self, diagonal, "triu", np.triu)


@export()
@records("diag_embed")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) diagonals hold self's last dim (DiagEmbedBackward0):
    `torch.diag_embed(torch.ones(2, 3)).shape`."""
    a = self._data
    n = a.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = (a.shape[-1] if a.ndim else 1) + abs(offset)
    shape = list(a.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, size)
    out = np.zeros(shape, dtype=a.dtype)
    _diagonal_view(out, offset, d1, d2)[...] = a
    out = _make(out)
    if _needs(self):
        record(D["diag_embed"], out, (self,), (offset, dim1, dim2))
    return out


@export()
@records("diagonal")
def diagonal(self, offset=0, dim1=0, dim2=1):
    """The diagonal as a view (DiagonalBackward0): `torch.eye(3).diagonal()`."""
    d1, d2 = _diagonal_dims(self, dim1, dim2)
    out = _view_op(self, D["diagonal"], (_diagonal_view, (offset, d1, d2)),
                   (self.shape, offset, d1, d2))
    if dim1 < 0 or dim2 < 0:
        keep_raw_of(out, D["diagonal"], dim1=dim1, dim2=dim2)   # torch saves the dims as given
    return out


@export()
@records("diag_embed", "diagonal_copy")
def diag(self, diagonal=0):
    """A vector's diagonal matrix (DiagEmbedBackward0) or a copy of a matrix's diagonal
    (DiagonalBackward0_copy): `torch.diag(torch.ones(3))`."""
    a = self._data
    if a.ndim == 1:
        out = _make(np.diag(a, diagonal))
        if _needs(self):
            # torch saves diag_embed's default dims, -2 and -1.
            record(D["diag_embed"], out, (self,), (diagonal, -2, -1))
        return out
    if a.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")
    out = _make(np.diagonal(a, diagonal).copy())
    if _needs(self):
        record(D["diagonal_copy"], out, (self,), (self.shape, diagonal, 0, 1))
    return out


@export()
@records("trace")
def trace(self):
    """The sum of the diagonal of a matrix (TraceBackward0): `torch.eye(3).trace()`."""
    a = self._data
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    if a.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    r = np.trace(a)
    if a.dtype.kind in "biu":
        r = np.int64(r)
    out = _make(np.asarray(r, dtype=r.dtype))
    if _needs(self):
        record(D["trace"], out, (self,), (self.shape,))
    return out


# ----- Flips and rolls ---------------------------------------------------------------------

@export(torch=False)
@records("flip")
def flip(self, *dims, **kwargs):
    """A copy reversed along dims (FlipBackward0): `torch.arange(3).flip(0)`."""
    if kwargs:
        if set(kwargs) != {"dims"} or dims:
            raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'")
        dims = (_dims_tuple(kwargs["dims"], ""),)
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')   # torch's
    given = _int_tuple(dims)
    dims = _check_dims_unique(given, max(self.dim(), 1))
    a = self._data
    if a.ndim:
        # torch writes the flip into empty_like(self), laid out as self (preserve_format);
        # NumPy's flip is a view of negative strides
        r = _preserved_copy(a)
        r[...] = np.flip(a, dims)
    else:
        r = a.copy()
    out = _make(r)
    if _needs(self):
        node = record(D["flip"], out, (self,), (dims,))
        if negative(given):
            keep_raw(node, "dims", given)       # torch saves the dims as given
    return out


_NO_DIMS = object()     # (torch.flip(x) names flip(), not this function, in its error)


@export("flip", tensor=False)
def _flip_function(input, dims=_NO_DIMS):
    """torch.flip(input, dims): dims a tuple or list (only the method takes ints one by one).

    >>> import gradviz as torch
    >>> torch.flip(torch.arange(3), (0,))
    tensor([2, 1, 0])
    """
    if dims is _NO_DIMS:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')   # torch's
    return flip(input, _dims_tuple(dims, " (position 2)"))


def _dims_tuple(dims, where):
    if isinstance(dims, int) and not isinstance(dims, bool):
        raise TypeError(f"flip(): argument 'dims'{where} must be tuple of ints, not int")
    return dims


@export()
def fliplr(self):
    """flip(1), for tensors of 2 or more dims: `torch.eye(2).fliplr()`."""
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(self, 1)


@export()
def flipud(self):
    """flip(0), for tensors of 1 or more dims: `torch.arange(3).flipud()`."""
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(self, 0)


@method("__reversed__")
def _reversed(self):
    """reversed(t): t.flip(0), a 0-d tensor itself, as torch's Tensor.__reversed__ (d2l's
    BiRNN runs `self.b_rnn(reversed(inputs))`)."""
    if self.dim() == 0:
        return self
    return flip(self, 0)


@export()
@records("roll")
def roll(self, shifts, dims=None):
    """Elements shifted circularly along dims, or over the flattened tensor when dims is None
    (RollBackward0): `torch.arange(4).roll(1)`."""
    shifts = _int_tuple(shifts)
    dims = () if dims is None else _int_tuple(dims)
    if len(shifts) != len(dims) and not (not dims and len(shifts) == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    a = self._data
    if dims and not a.ndim:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    wrapped = tuple(_wrap_dim(d, a.ndim) for d in dims)
    if dims:
        r = np.roll(a, shifts, axis=wrapped)
    else:
        r = np.roll(a, shifts[0]) if a.ndim else a.copy()
    out = _make(np.ascontiguousarray(r) if a.ndim else r)
    if _needs(self):
        node = record(D["roll"], out, (self,), (wrapped, shifts))
        if negative(dims):
            keep_raw(node, "dims", dims)        # torch saves the dims as given
    return out


@export()
@records("rot90")
def rot90(self, k=1, dims=(0, 1)):
    """A copy rotated by k quarter turns from dims[0] towards dims[1] (Rot90Backward0):
    `torch.rot90(torch.eye(2))`."""
    dims = _int_tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = self.dim()
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    out = _make(np.ascontiguousarray(np.rot90(self._data, k, axes=(d0, d1))))
    if _needs(self):
        record(D["rot90"], out, (self,), (dims, k))
    return out


# ----- Repeats -----------------------------------------------------------------------------

@method("repeat")
@records("repeat")
def repeat(self, *repeats, **kwargs):
    """The tensor tiled `repeats` times along each dim (RepeatBackward0):
    `torch.arange(2).repeat(2)`."""
    if kwargs:
        if set(kwargs) != {"repeats"} or repeats:
            raise TypeError(f"repeat() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        repeats = (kwargs["repeats"],)
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    repeats = _int_tuple(repeats)
    if len(repeats) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    a = self._data
    padded = a.reshape((1,) * (len(repeats) - a.ndim) + a.shape)
    target = [r * s for r, s in zip(repeats, padded.shape)]
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(target)}: "
                           f"{target}")
    out = _make(np.tile(padded, repeats))
    if _needs(self):
        record(D["repeat"], out, (self,), (repeats, self.shape))
    return out


@export()
def tile(self, *dims, **kwargs):
    """repeat, with dims padded by leading ones (torch composes it so): `torch.arange(2).tile(2)`.
    """
    if kwargs:
        if set(kwargs) != {"dims"} or dims:
            raise TypeError(f"tile() got an unexpected keyword argument '{next(iter(kwargs))}'")
        dims = (kwargs["dims"],)
    if not dims:
        raise TypeError('tile() missing 1 required positional arguments: "dims"')
    dims = _int_tuple(dims)
    if len(dims) < self.dim():
        dims = (1,) * (self.dim() - len(dims)) + dims
    return repeat(self, dims)


@export()
def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
    """Each element repeated `repeats` times along dim (the flattened tensor when dim is
    None): `torch.arange(3).repeat_interleave(2)`. An int count is composed as torch composes
    it: unsqueeze, expand, clone, flatten."""
    if repeats is None:
        # torch.repeat_interleave(counts): each index repeated counts[i] times.
        counts = _counts(self)
        return _make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if isinstance(repeats, Tensor):
        return _repeat_by_tensor(self, repeats, dim, output_size)
    if not isinstance(repeats, int):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be int or Tensor, not "
                        f"{type(repeats).__name__}")
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x = self
    if dim is None:
        x = flatten(x)
        d = 0
    else:
        d = _wrap_dim(dim, max(x.dim(), 1))
    if x.dim() == 0:
        x = reshape(x, 1)
    if output_size is not None and output_size != x.shape[d] * repeats:
        raise RuntimeError("Allocated size does not match required size")
    shape = list(x.shape)
    shape.insert(d + 1, repeats)
    y = clone(expand(unsqueeze(x, d + 1), *shape))
    return flatten(y, d, d + 1)


def _counts(repeats):
    r = repeats._data
    if r.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if r.dtype.kind not in "iu":
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{_TORCH_SCALAR[r.dtype.name]}'")
    if np.any(r < 0):
        raise RuntimeError("repeats can not be negative")
    return r.reshape(-1)


def _repeat_by_tensor(self, repeats, dim, output_size):
    """Counts given as a tensor: torch selects the repeated indices (IndexSelectBackward0)."""
    index_select = getattr(_registry.ops, "index_select", None)
    if index_select is None:
        raise _unsupported("repeat_interleave", "repeats")
    x = flatten(self) if dim is None else self
    d = 0 if dim is None else _wrap_dim(dim, max(x.dim(), 1))
    counts = _counts(repeats)
    size = x.shape[d] if x.dim() else 1
    if counts.size == 1:
        counts = np.full(size, counts[0], dtype=counts.dtype)
    elif counts.size != size:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size({d}) = {size}")
    if output_size is not None and output_size != int(counts.sum()):
        raise RuntimeError("allocated size does not match required size")
    index = _make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    return index_select(x, d, index)


# ----- Splits ------------------------------------------------------------------------------

def _pieces(self, sizes, d, entry, args):
    a = self._array()
    outs, start = [], 0
    for s in sizes:
        key = (slice(None),) * d + (slice(start, start + s),)
        outs.append(_make_view(self, _getitem_view(a, key), (_getitem_view, (key,)), True))
        start += s
    if _needs(self) and outs:
        record_outputs(entry, outs, (self,), args)
    return tuple(outs)


@export()
@records("split", "split_with_sizes")
def split(self, split_size_or_sections=None, dim=0, *, split_size=None):
    """Views of consecutive pieces along dim, of one size (SplitBackward0) or of the sizes
    listed (SplitWithSizesBackward0): `torch.arange(5).split(2)`. (Tensor.split names its
    first argument split_size, torch.split split_size_or_sections.)"""
    if split_size is not None:
        if split_size_or_sections is not None:
            raise TypeError("split() got multiple values for argument 'split_size'")
        split_size_or_sections = split_size
    if split_size_or_sections is None:
        raise TypeError("split() missing 1 required positional argument: 'split_size'")
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, self.dim())
    size = self.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(int(s) for s in split_size_or_sections)
        shown = ", ".join(map(str, sizes))
        if any(s < 0 for s in sizes):
            # torch checks the signs first: [-1, 7] on 6 rows sums right but is refused
            raise RuntimeError("split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes=[{shown}]")
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"[{shown}]")
        outs = _pieces(self, sizes, d, D["split_with_sizes"], (d, self.shape, sizes))
        if dim < 0 and outs:
            keep_raw_of(outs[0], D["split_with_sizes"], dim=dim)   # torch saves dim as given
        return outs
    n = int(split_size_or_sections)
    if n < 0 or (n == 0 and size != 0):
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    if n == 0:
        sizes = (0,)
    else:
        sizes = tuple(min(n, size - s) for s in range(0, size, n)) or (0,)
    outs = _pieces(self, sizes, d, D["split"], (d, self.shape, n))
    if dim < 0 and outs:
        keep_raw_of(outs[0], D["split"], dim=dim)       # torch saves dim as given
    return outs


@export()
def chunk(self, chunks, dim=0):
    """split into pieces of ceil(size / chunks) (torch records SplitBackward0):
    `torch.arange(5).chunk(2)`."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    size = self.shape[_wrap_dim(dim, self.dim())]
    if size == 0:
        # torch: `chunks` empty pieces (split_with_sizes).
        return split(self, [0] * chunks, dim)
    return split(self, -(-size // chunks), dim)


@export()
def tensor_split(self, indices_or_sections, dim=0):
    """Views split at the given indices, or into n near-equal sections (slices, as torch
    records them): `torch.arange(5).tensor_split(2)`."""
    if self.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    if isinstance(indices_or_sections, Tensor):
        raise _unsupported("tensor_split", "indices_or_sections as a tensor")
    d = _wrap_dim(dim, self.dim())
    size = self.shape[d]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    else:
        n = int(indices_or_sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    outs = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        start = min(max(start + size if start < 0 else start, 0), size)
        end = min(max(end + size if end < 0 else end, 0), size)
        outs.append(narrow(self, d, start, max(end - start, 0)))
    return tuple(outs)


# ----- Moved dims, unflatten ---------------------------------------------------------------

@export("movedim", "moveaxis")
def movedim(self, source, destination):
    """The dims at source moved to destination, as a view (a permute, as torch records it):
    `torch.zeros(2, 3, 4).movedim(0, -1).shape`."""
    n = self.dim()
    src = _int_tuple(source)
    dst = _int_tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    ws = tuple(_wrap_dim(d, max(n, 1)) for d in src)
    wd = tuple(_wrap_dim(d, max(n, 1)) for d in dst)
    if len(set(ws)) != len(ws):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(wd)) != len(wd):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    if n == 0:
        # torch's movedim of a 0-d tensor is an alias (AliasBackward0), not a permute
        return _view_op(self, D["alias"], (_alias_view, ()), ())
    order = [-1] * n
    for s, d in zip(ws, wd):
        order[d] = s
    rest = iter(d for d in range(n) if d not in ws)
    order = [o if o != -1 else next(rest) for o in order]
    return permute(self, tuple(order))


@export()
def swapaxes(self, axis0, axis1):
    """transpose under NumPy's name (a view, TransposeBackward0): `torch.zeros(2, 3).swapaxes(0,
    1).shape`."""
    return transpose(self, axis0, axis1)


@export()
def swapdims(self, dim0, dim1):
    """transpose under another name (a view, TransposeBackward0)."""
    return transpose(self, dim0, dim1)


@export()
def adjoint(self):
    """The conjugate transpose of the last two dims, a view; for real tensors transpose(-2,
    -1): `torch.zeros(2, 3).adjoint().shape`."""
    return transpose(self, -2, -1)


def _H(self):
    if self.dim() != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor.")
    return transpose(self, 0, 1)


def _mH(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got "
                           f"{self.dim()}-D tensor.")
    return transpose(self, -2, -1)


# The conjugate transposes; real tensors, so plain transposes (views).
method("H")(property(_H))
method("mH")(property(_mH))


@export()
def unflatten(self, dim, sizes):
    """dim split into `sizes`, as a view (ViewBackward0): `torch.zeros(6).unflatten(0, (2, 3))`.
    """
    n = self.dim()
    if n == 0:
        raise RuntimeError("unflatten: Dimension size must be non-zero")
    d = _wrap_dim(dim, n)
    sizes = _int_tuple(sizes)
    size = self.shape[d]
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if sizes.count(-1) > 1 or (-1 not in sizes and known != size) or (
            -1 in sizes and (known == 0 or size % known)):
        raise RuntimeError(f"unflatten: Provided sizes [{', '.join(map(str, sizes))}] don't "
                           f"multiply up to the size of dim {dim} ({size}) in the input tensor")
    shape = tuple(self.shape[:d]) + sizes + tuple(self.shape[d + 1:])
    # torch's unflatten is a view, even of a non-contiguous tensor whose dim can be split.
    return view(self, shape)


# ----- Broadcasting and grids --------------------------------------------------------------

@export()
def broadcast_to(self, size):
    """expand under NumPy's name (a view, ExpandBackward0): `torch.ones(3).broadcast_to((2,
    3)).shape`."""
    return expand(self, _int_tuple(size))


@export(tensor=False)
def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (those already of that shape are returned
    as they are, as torch does): `torch.broadcast_tensors(torch.ones(3), torch.ones(2, 1))`."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = [_as_tensor(t) for t in tensors]
    shape = ()
    for t in tensors:
        try:
            shape = np.broadcast_shapes(shape, t.shape)
        except ValueError:
            raise _broadcast_error(np.empty(shape), t._data, None) from None
    return tuple(t if tuple(t.shape) == shape else expand(t, tuple(shape)) for t in tensors)


@export(tensor=False)
def broadcast_shapes(*shapes):
    """The broadcast of the shapes: `torch.broadcast_shapes((3,), (2, 1))`."""
    from .._dtype import Size
    shapes = [(s,) if isinstance(s, int) else _int_tuple(s) for s in shapes]
    result = [1] * max((len(s) for s in shapes), default=0)
    for idx, shape in enumerate(shapes):
        for i in range(-1, -len(shape) - 1, -1):
            s, r = shape[i], result[i]
            if s == 1 or s == r:
                continue
            if r != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s} at {i}! "
                                   f"Mismatching argument at index {idx} had {tuple(shape)}; "
                                   f"but expected shape should be broadcastable to {result}")
            result[i] = s
    return Size(result)


_MESHGRID_WARNED = []


@export(tensor=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-D tensors (each a view, expanded; torch records view then expand):
    `torch.meshgrid(torch.arange(2), torch.arange(3), indexing="ij")`."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        if not _MESHGRID_WARNED:
            # torch's TORCH_WARN_ONCE: once per process.
            _MESHGRID_WARNED.append(True)
            warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                          "the indexing argument.", UserWarning, stacklevel=user_stacklevel())
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f'{indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    n = len(ts)
    grids = []
    for i, t in enumerate(ts):
        view_shape = [1] * n
        view_shape[i] = -1
        grids.append(expand(view(t, *view_shape), *shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ----- Stacks ------------------------------------------------------------------------------

def _stack_args(tensors, name):
    """The *stack functions' tensors, as torch checks them: a non-empty list or tuple."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return [_as_tensor(t) for t in tensors]


def _each(one, tensors):
    """atleast_*d's calling forms: one tensor gives one; several, or a sequence, a tuple."""
    if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)):
        return one(tensors[0])
    ts = tensors[0] if len(tensors) == 1 else tensors
    return tuple(one(t) for t in ts)


def _at_least_1d(t):
    return reshape(t, 1) if t.dim() == 0 else t


def _at_least_2d(t):
    if t.dim() == 0:
        return reshape(t, 1, 1)
    return unsqueeze(t, 0) if t.dim() == 1 else t


def _at_least_3d(t):
    if t.dim() == 0:
        return reshape(t, 1, 1, 1)
    if t.dim() == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if t.dim() == 2 else t


@export(tensor=False)
def atleast_1d(*tensors):
    return _each(_at_least_1d, tensors)


@export(tensor=False)
def atleast_2d(*tensors):
    return _each(_at_least_2d, tensors)


@export(tensor=False)
def atleast_3d(*tensors):
    return _each(_at_least_3d, tensors)


@export(tensor=False)
def hstack(tensors):
    """cat along dim 1 (dim 0 for 1-D tensors), after atleast_1d: `torch.hstack([a, b])`."""
    ts = [atleast_1d(t) for t in _stack_args(tensors, "hstack")]
    return cat(ts, 0 if ts[0].dim() == 1 else 1)


@export("vstack", "row_stack", tensor=False)
def vstack(tensors):
    """cat along dim 0 after atleast_2d: `torch.vstack([a, b])`."""
    ts = [atleast_2d(t) for t in _stack_args(tensors, "vstack")]
    return cat(ts, 0)


@export(tensor=False)
def dstack(tensors):
    """cat along dim 2 after atleast_3d: `torch.dstack([a, b])`."""
    ts = [atleast_3d(t) for t in _stack_args(tensors, "dstack")]
    return cat(ts, 2)


@export(tensor=False)
def column_stack(tensors):
    """cat along dim 1, 0-d and 1-D tensors reshaped to columns: `torch.column_stack([a, b])`."""
    ts = _stack_args(tensors, "column_stack")
    return cat([reshape(t, t.numel(), 1) if t.dim() <= 1 else t for t in ts], 1)


# ----- Differences -------------------------------------------------------------------------

@export()
def diff(self, n=1, dim=-1, prepend=None, append=None):
    """n-th forward differences along dim, composed as torch composes them (slices
    subtracted): `torch.tensor([1, 4, 9]).diff()`."""
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, self.dim())
    x = self
    if prepend is not None or append is not None:
        parts = []
        for extra in (prepend, x, append):
            if extra is None:
                continue
            extra = _as_tensor(extra, like=self)
            if extra is not x and extra.dim() not in (0, x.dim()):
                raise RuntimeError("diff expects prepend or append to be the same dimension as "
                                   "input")
            if extra is not x and extra.dim() == 0:
                shape = list(x.shape)
                shape[d] = 1
                extra = expand(extra, tuple(shape))
            parts.append(extra)
        x = cat(parts, d)
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        hi, lo = narrow(x, d, 1, length - 1), narrow(x, d, 0, length - 1)
        if x._data.dtype == np.bool_:
            x = _make(np.logical_xor(hi._data, lo._data))
        else:
            x = sub(hi, lo)
    return x


# ----- Splits by sizes and along fixed dims ------------------------------------------------

@export()
def split_with_sizes(self, split_sizes, dim=0):
    """Views of consecutive pieces of the sizes listed (SplitWithSizesBackward0):
    `torch.arange(5).split_with_sizes([2, 3])`."""
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 1) must be tuple "
                        f"of ints, not {type(split_sizes).__name__}")
    return split(self, split_sizes, dim)


def _split_along(self, sections, dim, name, least):
    """torch's hsplit / vsplit / dsplit: tensor_split along dim, refusing a tensor of fewer
    than `least` dims and a number of sections that does not divide the dim."""
    if self.dim() < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, "
                           f"but got a tensor with {self.dim()} dimensions!")
    if not isinstance(sections, (list, tuple)):
        size = self.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size"
                               f" {sections}!")
    return tensor_split(self, sections, dim)


@export()
def hsplit(self, sections):
    """tensor_split along dim 1 (dim 0 for a 1-D tensor), in equal parts or at indices:
    `torch.hsplit(torch.zeros(2, 4), 2)`."""
    return _split_along(self, sections, 1 if self.dim() > 1 else 0, "hsplit", 1)


@export()
def vsplit(self, sections):
    """tensor_split along dim 0 of a tensor of 2 or more dims: `torch.vsplit(torch.zeros(4, 2), 2)`."""
    return _split_along(self, sections, 0, "vsplit", 2)


@export()
def dsplit(self, sections):
    """tensor_split along dim 2 of a tensor of 3 or more dims:
    `torch.dsplit(torch.zeros(1, 2, 4), 2)`."""
    return _split_along(self, sections, 2, "dsplit", 3)


# ----- Indices of a triangle ----------------------------------------------------------------

def _triangle_indices(name, row, col, offset, dtype, device, layout, lower):
    _check_device(device)
    if layout is not None and str(layout) != "torch.strided":
        raise _unsupported(name, "layout")
    for what, n in (("row", row), ("col", col), ("offset", offset)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{name}(): argument '{what}' (position "
                            f"{('row', 'col', 'offset').index(what) + 1}) must be int, not "
                            f"{type(n).__name__}")
    for what, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{what} must be non-negative, got{n}")
    dt = to_numpy_dtype(int64 if dtype is None else dtype)
    if dt.kind not in "iu":
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{_TORCH_SCALAR[dt.name]}'")
    r, c = np.indices((row, col)).reshape(2, -1)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return _make(np.stack([r[keep], c[keep]]).astype(dt))


@export(tensor=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of the lower triangle of a row x col matrix, in row-major
    order (as a 2 x N tensor): `torch.tril_indices(3, 3)`."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, layout, True)


@export(tensor=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of the upper triangle of a row x col matrix, in row-major
    order (as a 2 x N tensor): `torch.triu_indices(3, 3, 1)`."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, layout, False)
