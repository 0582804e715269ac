"""gc_paused: the cyclic garbage collector off while gradviz builds big plain data.

Shared by the inspector (the report, its JSON) and the renderer (the DOT text), which must not
depend on each other for it.
"""

import contextlib
import gc

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector off, as it was before afterwards: building the report of
    a 100,000-node graph makes millions of objects that are all kept, and every collection
    would walk them again (a third of the report's time).

    >>> with gc_paused():
    ...     gc.isenabled()
    False
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
