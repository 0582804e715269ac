"""torch.utils.data over tensors: Dataset, TensorDataset, Subset, random_split, the samplers,
default_collate and a single-process DataLoader whose shuffled order is torch's for the same
seed.

>>> import gradviz as torch
>>> from gradviz.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(5.0), torch.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""

from ..._missing import module_getattr as _module_getattr
from .dataloader import DataLoader, default_collate, default_convert
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "DataLoader",
           "default_collate", "default_convert"]

# `torch.utils.data.WeightedRandomSampler`: gradviz's core lacks it, and says so in torch's
# module's name (not "module 'gradviz.utils.data' has no attribute"), with --backend torch
__getattr__ = _module_getattr("utils.data", __name__, __all__)
