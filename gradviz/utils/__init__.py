"""gradviz.utils: torch.utils.data (datasets, samplers and the DataLoader over tensors)."""

from .._missing import module_getattr as _module_getattr
from . import data

__all__ = ["data"]

# `torch.utils.checkpoint`: gradviz's core lacks it, and says so (not "module 'gradviz.utils'")
__getattr__ = _module_getattr("utils", __name__, __all__)
