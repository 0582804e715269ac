"""Text helpers shared by the DOT and table renderers: shapes and value summaries.

Values arrive as the report's plain data (nested lists, numbers, None), never as tensors.
"""

import math

__all__ = ["format_shape", "summarize"]

# A value with at most this many elements is shown whole even when summarizing.
_SMALL = 6


def format_shape(shape):
    """Return a shape as a Python tuple would print.

    >>> format_shape([2, 3]), format_shape([3]), format_shape([]), format_shape(None)
    ('(2, 3)', '(3,)', '()', '?')
    """
    if shape is None:
        return "?"
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(s) for s in shape) + ")"


def summarize(value, full=False):
    """Return a short text for a value from the report (nested lists or a number).

    Small values are shown whole; larger ones as min/max/mean, with NaN/inf counted.
    full=True always gives the whole value, at full precision.

    >>> summarize([[0.25, 0.5], [1.0, 2.0]])
    '[[0.25, 0.5], [1, 2]]'
    >>> summarize([1.0] * 10)
    'all 1 (10 values)'
    >>> summarize([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, float("nan")])
    'min=0 max=5 mean=2.5 nan=1 (7 values)'
    """
    if value is None:
        return "None"
    flat = _flatten(value)
    if full or len(flat) <= _SMALL:
        return _nested(value, full)
    numbers = [x for x in flat if isinstance(x, (int, float))]
    finite = [float(x) for x in numbers if math.isfinite(x)]
    parts = []
    if finite and min(finite) == max(finite) and len(finite) == len(flat):
        parts.append("all " + _number(finite[0], False))
    elif finite:
        lo, hi, mean = min(finite), max(finite), math.fsum(finite) / len(finite)
        parts.append(f"min={_number(lo, False)} max={_number(hi, False)} mean={_number(mean, False)}")
    nans = sum(1 for x in numbers if isinstance(x, float) and math.isnan(x))
    infs = sum(1 for x in numbers if isinstance(x, float) and math.isinf(x))
    if nans:
        parts.append(f"nan={nans}")
    if infs:
        parts.append(f"inf={infs}")
    parts.append(f"({len(flat)} values)")
    return " ".join(parts)


def _flatten(value):
    if not isinstance(value, list):
        return [value]
    flat, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        else:
            flat.append(item)
    return flat


def _nested(value, full):
    # Nesting depth is the tensor's ndim, so recursion here is bounded and small.
    if isinstance(value, list):
        return "[" + ", ".join(_nested(v, full) for v in value) + "]"
    return _number(value, full)


def _number(x, full):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if full:
        return repr(x)
    return f"{x:.4g}"
