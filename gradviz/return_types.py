"""Named result tuples, as torch.return_types: `torch.max(x, 0)` gives a `max` whose fields are
`values` and `indices` (type(r).__name__ == "max", as in torch)."""

__all__ = ["max", "min", "sort", "topk", "median", "nanmedian", "kthvalue", "cummax", "cummin",
           "histogram", "linalg_svd", "svd"]


class _ValuesIndices(tuple):
    """(values, indices), readable by position or by name."""

    __slots__ = ()

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return (f"torch.return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")

    def __reduce__(self):
        return (type(self), tuple(self))


class max(_ValuesIndices):  # noqa: A001  (torch.return_types.max)
    __slots__ = ()


class min(_ValuesIndices):  # noqa: A001  (torch.return_types.min)
    __slots__ = ()


class sort(_ValuesIndices):
    __slots__ = ()


class topk(_ValuesIndices):
    __slots__ = ()


class median(_ValuesIndices):
    __slots__ = ()


class nanmedian(_ValuesIndices):
    __slots__ = ()


class kthvalue(_ValuesIndices):
    __slots__ = ()


class cummax(_ValuesIndices):
    __slots__ = ()


class cummin(_ValuesIndices):
    __slots__ = ()


class histogram(tuple):
    """(hist, bin_edges), readable by position or by name."""

    __slots__ = ()

    def __new__(cls, hist, bin_edges):
        return tuple.__new__(cls, (hist, bin_edges))

    @property
    def hist(self):
        return self[0]

    @property
    def bin_edges(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.histogram(\nhist={self[0]!r},\nbin_edges={self[1]!r})"

    def __reduce__(self):
        return (type(self), tuple(self))


class _Triple(tuple):
    """Three named results, readable by position or by name (`_fields` gives the names)."""

    __slots__ = ()
    _fields = ()

    def __new__(cls, a, b, c):
        return tuple.__new__(cls, (a, b, c))

    def __getattr__(self, name):
        try:
            return self[self._fields.index(name)]
        except ValueError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'{name}'") from None

    def __repr__(self):
        parts = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{parts})"

    def __reduce__(self):
        return (type(self), tuple(self))


class linalg_svd(_Triple):
    __slots__ = ()
    _fields = ("U", "S", "Vh")


class svd(_Triple):
    __slots__ = ()
    _fields = ("U", "S", "V")
