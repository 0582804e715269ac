"""Printing tensors exactly as PyTorch 2.13 prints them.

A port of torch's `torch/_tensor_str.py` for NumPy arrays: the same print options, the same
`_Formatter` rules (int_mode, the sci_mode decision, precision 4, one width for every element),
the same summarization with `...` above 1000 elements, the same line wrapping and the same
suffixes (`size=`, `dtype=`, `grad_fn=`/`requires_grad=`) in the same order.

Every number is formatted by Python's `format` on a Python float, as torch does (its formatter
formats `tensor.item()` and `tensor.tolist()` values); NumPy's own float printing rounds
differently and is never used.
"""

import math

import numpy as np

from gradviz._dtype import get_default_dtype

__all__ = ["tensor_repr", "set_printoptions", "get_printoptions"]


# ----- Print options ---------------------------------------------------------------------------

# torch keeps these in a dataclass, PRINT_OPTS; a dict keeps get_printoptions() a plain copy.
_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
             "sci_mode": None}
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
_OPTS = dict(_DEFAULTS)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set options for printing tensors, as `torch.set_printoptions` does.

    `profile` ("default", "short" or "full") is applied first, then the other arguments that are
    not None. As in torch, `sci_mode` is always assigned, so leaving it out resets it to None
    (automatic).

        >>> set_printoptions(precision=2)
        >>> tensor_repr(np.array([1.12345], dtype=np.float32), "float32")
        'tensor([1.12])'
        >>> set_printoptions(profile="default")
    """
    if profile is not None and profile in _PROFILES:
        _OPTS.update(_PROFILES[profile])
    if precision is not None:
        _OPTS["precision"] = precision
    if threshold is not None:
        _OPTS["threshold"] = threshold
    if edgeitems is not None:
        _OPTS["edgeitems"] = edgeitems
    if linewidth is not None:
        _OPTS["linewidth"] = linewidth
    _OPTS["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options, as a dict that `set_printoptions(**opts)` accepts.

        >>> get_printoptions()["precision"]
        4
    """
    return dict(_OPTS)


# ----- Formatting elements ---------------------------------------------------------------------

def _format_floats(values, precision, sci_opt):
    """Strings for a flat list of Python floats, and the width torch's `_Formatter` computes.

    Only the nonzero finite values decide int_mode, sci_mode and the width; zeros, nan and inf
    may be wider than the width and are then not padded (torch: `tensor([nan, 0., -0.])`).
    """
    isfinite = math.isfinite
    nonzero_finite = [v for v in values if v and isfinite(v)]
    if not nonzero_finite:
        # torch returns early: int_mode, no sci_mode (even if sci_mode=True is set), width 1.
        return [_int_mode_str(v) for v in values], 1
    int_mode = True
    for v in nonzero_finite:
        # torch: `value != torch.ceil(value)`; ceil is exact in every float dtype.
        if v != math.ceil(v):
            int_mode = False
            break
    if sci_opt is None:
        # torch compares in float64; the values are already exact Python floats.
        lo = min(abs(v) for v in nonzero_finite)
        hi = max(abs(v) for v in nonzero_finite)
        sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
    else:
        sci_mode = sci_opt
    if sci_mode:
        spec = f".{precision}e"
        strs = [format(v, spec) for v in values]
    elif int_mode:
        strs = [_int_mode_str(v) for v in values]
    else:
        spec = f".{precision}f"
        strs = [format(v, spec) for v in values]
    width = max(len(s) for v, s in zip(values, strs) if v and isfinite(v))
    return [s if len(s) >= width else s.rjust(width) for s in strs], width


def _int_mode_str(v):
    # torch: integer-valued floats print as `1.`; nan and inf get no dot.
    s = format(v, ".0f")
    return s + "." if math.isfinite(v) else s


def _format_others(values):
    """Strings for ints and bools: `str` of each, right-aligned to the widest (torch)."""
    strs = [str(v) for v in values]
    width = max(len(s) for s in strs)
    if width > 1:
        strs = [s.rjust(width) for s in strs]
    return strs, width


# ----- Layout ----------------------------------------------------------------------------------

def _summarized(arr, edge):
    """Keep the first and last `edge` items of every dimension longer than 2 * edge.

    This is torch's `get_summarized_data`: the formatter sees only the elements printed.
    Returns the kept array and, per dimension, whether a `...` goes after item `edge`.
    """
    cut = []
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            idx = np.r_[0:edge, n - edge:n]
            arr = np.take(arr, idx, axis=axis)
            cut.append(True)
        else:
            cut.append(False)
    return arr, cut


def _layout(strs, width, shape, cut, edge, linewidth):
    """Nest the flat element strings into torch's bracketed text (`_tensor_str_with_formatter`).

    Elements are consumed in order from an iterator; recursion goes one level per dimension.
    """
    it = iter(strs)

    def block(dim, indent):
        n = shape[dim]
        if dim == len(shape) - 1:
            # torch's _vector_str: a fixed number of elements per line, from the width
            # (not from the actual strings, which may be wider: nan, inf, zeros).
            items = [next(it) for _ in range(n)]
            if cut[dim]:
                items.insert(edge, " ...")
            per_line = max(1, math.floor((linewidth - indent) / (width + 2)))
            if len(items) <= per_line:
                return "[" + ", ".join(items) + "]"
            lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
            return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
        slices = [block(dim + 1, indent + 1) for _ in range(n)]
        if cut[dim]:
            slices.insert(edge, "...")
        sep = "," + "\n" * (len(shape) - 1 - dim) + " " * (indent + 1)
        return "[" + sep.join(slices) + "]"

    return block(0, len("tensor("))


def _add_suffixes(text, suffixes, indent, linewidth):
    """Append `, suffix` items, breaking the line as torch's `_add_suffixes` does."""
    parts = [text]
    # torch's arithmetic: two more than the last line's real length; kept so the wraps match.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


# ----- tensor_repr -----------------------------------------------------------------------------

def tensor_repr(data, dtype_name, *, grad_fn_name=None, requires_grad=False):
    """The repr of a tensor holding `data`, character for character as torch 2.13 prints it.

        >>> tensor_repr(np.ones((2, 2), dtype=np.float32), "float32", requires_grad=True)
        'tensor([[1., 1.],\\n        [1., 1.]], requires_grad=True)'
        >>> tensor_repr(np.float32(7.389056), "float32", grad_fn_name="ExpBackward0")
        'tensor(7.3891, grad_fn=<ExpBackward0>)'
    """
    arr = np.asarray(data)
    if arr.dtype.name != dtype_name:
        arr = arr.astype(dtype_name)
    opts = _OPTS
    edge = opts["edgeitems"]
    linewidth = opts["linewidth"]
    default_float = get_default_dtype().name
    suffixes = []
    shape = arr.shape

    if arr.size == 0:
        # torch prints the shape unless it is (0,), and always the dtype unless it is the default
        # float dtype: an empty tensor has no elements to show it is int64 or bool.
        text = "tensor([]"
        if len(shape) != 1:
            suffixes.append("size=" + str(shape))
        if dtype_name != default_float:
            suffixes.append("dtype=torch." + dtype_name)
    else:
        if not edge:
            suffixes.append("size=" + str(shape))
        if dtype_name not in (default_float, "int64", "bool"):
            suffixes.append("dtype=torch." + dtype_name)
        text = "tensor(" + _contents(arr, dtype_name, edge, linewidth, opts)

    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if not suffixes:
        return text + ")"
    return _add_suffixes(text, suffixes, len("tensor("), linewidth)


def _contents(arr, dtype_name, edge, linewidth, opts):
    """The bracketed numbers of a non-empty tensor (torch's `_tensor_str`)."""
    floating = dtype_name.startswith("float")
    if arr.ndim == 0:
        v = arr.item()
        if floating:
            return _format_floats([v], opts["precision"], opts["sci_mode"])[0][0]
        return str(v)

    cut = [False] * arr.ndim
    if arr.size > opts["threshold"]:
        if not edge:
            # torch with edgeitems=0: nothing but an ellipsis, in every dimension count.
            return "[...]"
        arr, cut = _summarized(arr, edge)
    values = arr.ravel().tolist()
    if floating:
        strs, width = _format_floats(values, opts["precision"], opts["sci_mode"])
    else:
        strs, width = _format_others(values)
    return _layout(strs, width, arr.shape, cut, edge, linewidth)
