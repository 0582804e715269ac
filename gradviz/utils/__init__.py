"""gradviz.utils: torch.utils.data (datasets, samplers and the DataLoader over tensors)."""

from . import data

__all__ = ["data"]
