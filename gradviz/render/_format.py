"""Text helpers shared by the DOT and table renderers: shapes and value summaries.

Values arrive as the report's plain data (nested lists, numbers, None), never as tensors. The
report writes NaN and infinities as the strings "nan", "inf" and "-inf" (JSON has no NaN).
"""

import math

import numpy as np

__all__ = ["HARMLESS", "briefs", "changed_mark", "format_shape", "is_modified", "saved_value",
           "summarize", "version"]

# A value with at most this many elements is shown whole even when summarizing.
_SMALL = 6
_NONFINITE = ("nan", "inf", "-inf")


def briefs(entries):
    """A report's "tensors" or "nodes" as briefs, the keys every entry has that the tables read
    of all of them (a lazy report's Entries, gradviz/inspect/report.py, builds an entry whole
    only when it is read); entries in a list are their own briefs.

    >>> briefs([{"id": "n0"}])
    [{'id': 'n0'}]
    """
    return getattr(entries, "briefs", entries)


def changed_mark(indices):
    """The note on a .grad that a hook changed.

    >>> changed_mark([0, 2])
    ' (changed by hook #1, #3)'
    >>> changed_mark([])
    ''
    """
    if not indices:
        return ""
    return " (changed by hook " + ", ".join(f"#{k + 1}" for k in indices) + ")"


def format_shape(shape):
    """Return a shape as torch.Size lists it.

    >>> format_shape([2, 3]), format_shape([3]), format_shape([]), format_shape(None)
    ('[2, 3]', '[3]', '[]', '?')
    """
    if shape is None:
        return "?"
    return "[" + ", ".join(map(str, shape)) + "]"


def summarize(value, full=False):
    """Return a short text for a value from the report (nested lists or a number).

    Small values are shown whole; larger ones as min/max/mean, with NaN/inf counted.
    full=True always gives the whole value, at full precision.

    >>> summarize([[0.25, 0.5], [1.0, 2.0]])
    '[[0.25, 0.5], [1, 2]]'
    >>> summarize([1.0] * 10)
    'all 1 (10 values)'
    >>> summarize([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, "nan"])
    'min=0 max=5 mean=2.5 nan=1 (7 values)'
    >>> summarize([0.4047999978065491, 0.1], full=True)
    '[0.4048, 0.1]'
    """
    if value is None:
        return "None"
    if type(value) is float and not full:  # a 0-d value, the most common (_number)
        return f"{value:.4g}"
    flat = _flatten(value)
    if full or len(flat) <= _SMALL:
        return _nested(value, full)
    numbers = [x for x in map(_as_number, flat) if x is not None]
    finite = [float(x) for x in numbers if math.isfinite(x)]
    parts = []
    if finite and min(finite) == max(finite) and len(finite) == len(flat):
        parts.append("all " + _number(finite[0], False))
    elif finite:
        mean = math.fsum(finite) / len(finite)
        for key, x in (("min", min(finite)), ("max", max(finite)), ("mean", mean)):
            parts.append(f"{key}={_number(x, False)}")
    nans = sum(1 for x in numbers if isinstance(x, float) and math.isnan(x))
    infs = sum(1 for x in numbers if isinstance(x, float) and math.isinf(x))
    if nans:
        parts.append(f"nan={nans}")
    if infs:
        parts.append(f"inf={infs}")
    parts.append(f"({len(flat)} values)")
    return " ".join(parts)


def version(v):
    """Return a version number as text, '?' when unknown (torch does not say what a tensor's
    version was when it was saved).

    >>> version(3), version(None)
    ('3', '?')
    """
    return "?" if v is None else str(v)


# A saved tensor modified in place after backward freed it (opt.step() does this to every weight).
HARMLESS = "modified after backward (harmless: the graph was already used)"


def is_modified(saved):
    """True when a saved tensor's version now differs from the version it was saved at.

    >>> is_modified({"saved_version": 0, "version": 1})
    True
    >>> is_modified({"saved_version": None, "version": 1})  # unknown: not claimed modified
    False
    """
    before, now = saved.get("saved_version"), saved.get("version")
    return before is not None and now is not None and before != now


def saved_value(saved):
    """Return the text for a saved entry that is not a tensor: a value, or a freed buffer.

    >>> saved_value({"name": "_saved_alpha", "value": 1})
    '_saved_alpha = 1'
    >>> saved_value({"name": "_saved_self", "freed": True})
    '_saved_self (freed)'
    """
    if saved.get("freed"):
        return f"{saved['name']} (freed)"
    return f"{saved['name']} = {summarize(saved.get('value'))}"


def _as_number(x):
    if isinstance(x, str) and x in _NONFINITE:
        return float(x)
    return x if isinstance(x, (int, float)) else None


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
        # The report's numbers are float32 values widened to float64: print the shortest text
        # that gives the float32 back, as torch does (0.4048, not 0.4047999978065491).
        single = np.float32(x)
        return str(single) if math.isfinite(x) and float(single) == x else repr(x)
    return f"{x:.4g}"
