"""Scratch arrays kept from one call to the next: the attention kernel's (..., L, S) scores.

scaled_dot_product_attention makes one score array in its forward and two in its backward,
internal to the kernel (torch's kernel works on blocks and makes none). Fresh each step, they
make the heap grow by their size and shrink again when they are freed: glibc gives the top of
the heap back to the system once it is larger than its trim threshold (twice the largest
mmapped block freed so far), and the next step then touches those pages anew, one page fault
each. On the attention benchmark (8 x 4 heads x 64 x 64 float32, 512 KB per array) that was
about 500 faults and 1.5 ms of a 7.5 ms step. Kept here, the same arrays serve every step.

Only arrays that no one else holds are kept (reference counts), at most two of one shape and
dtype (a new shape replaces them) and none larger than _LARGEST bytes, so the memory kept is
bounded by 2 * _LARGEST. Taking is a list pop, atomic under the GIL: two threads never get
the same array (the second makes a fresh one).
"""

import sys

import numpy as np

__all__ = ["give_back", "take"]

_LARGEST = 8 << 20          # bytes per kept array
_KEPT = 2
_SPARE = {}                 # (shape, dtype) -> arrays no one holds


def take(shape, dtype):
    """An uninitialized array of shape and dtype: a kept one when there is one.

    >>> take((2, 3), np.float32).shape
    (2, 3)
    """
    dtype = np.dtype(dtype)
    spare = _SPARE.get((shape, dtype))
    if spare:
        try:
            return spare.pop()
        except IndexError:      # another thread took the last one meanwhile
            pass
    return np.empty(shape, dtype)


def give_back(a):
    """Keep the array a (from take) for a later take, if no one but the caller holds it."""
    # a's references: the caller's name, our parameter, getrefcount's argument (a view of a
    # would hold one more, through its base)
    if sys.getrefcount(a) > 3 or a.nbytes > _LARGEST or a.base is not None:
        return
    key = (a.shape, a.dtype)
    spare = _SPARE.get(key)
    if spare is None:
        _SPARE.clear()
        spare = _SPARE[key] = []
    if len(spare) < _KEPT:
        spare.append(a)
