"""The DataLoader (single process) and default_collate.

Each pass over a DataLoader draws, as torch's does, one int64 base seed from its generator
(the default generator when none is given) before the first batch; a shuffling sampler then
draws its own seed. Both draws move the default generator exactly as torch's, so that random
numbers drawn after a loop over a DataLoader are still torch's for the same seed.
"""

import collections.abc
import copy
import warnings

import numpy as np

from ..._creation import as_tensor, empty, tensor
from ..._dtype import float64, int64
from ..._ops.views import stack
from ..._tensor import Tensor
from ...autograd.callsite import user_stacklevel
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]

_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


def _like(mapping, out):
    """out (a dict) in the type of mapping when that is mutable: torch copies the mapping and
    updates the copy, so a subclass of dict (an OrderedDict, a defaultdict) keeps its type."""
    if isinstance(mapping, collections.abc.MutableMapping):
        clone = copy.copy(mapping)
        clone.update(out)
        return clone
    return out


def default_collate(batch):
    """Stack a list of samples into a batch: tensors are stacked along a new first dim,
    numbers become a tensor (float64 for floats), tuples and lists are collated element-wise
    (a tuple becomes a list, as torch's), dicts key by key.

    >>> import gradviz as torch
    >>> default_collate([(torch.tensor([1.0]), 0), (torch.tensor([2.0]), 1)])
    [tensor([[1.],
            [2.]]), tensor([0, 1])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SaUO":
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return as_tensor(np.array(batch))
    if isinstance(elem, bool) or isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _like(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, collections.abc.MutableSequence) and not isinstance(elem, tuple):
            clone = copy.copy(elem)
            clone[:] = columns
            return clone
        return columns
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data):
    """Without batching (batch_size=None): NumPy arrays and scalars become tensors, a tuple
    becomes a list (as torch's), containers are converted element-wise, the rest is kept."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in "SaUO" else as_tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _like(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return [default_convert(d) for d in data]
    return data


def _refuse(what):
    raise NotImplementedError(f"gradviz: torch.utils.data.DataLoader({what}) is not "
                              "implemented by gradviz's core; run with --backend torch to use "
                              "PyTorch")


class DataLoader:
    """Batches of a map-style dataset, in order or shuffled (torch's order for the same seed).

    >>> import gradviz as torch
    >>> from gradviz.utils.data import DataLoader, TensorDataset
    >>> g = torch.Generator().manual_seed(0)
    >>> loader = DataLoader(TensorDataset(torch.arange(6)), batch_size=4, shuffle=True,
    ...                     generator=g)
    >>> [b.tolist() for (b,) in loader]
    [[5, 1, 0, 3], [2, 4]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if num_workers > 0:
            _refuse(f"num_workers={num_workers!r}")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             "loading (num_workers > 0), but got num_workers=0")
        if isinstance(dataset, IterableDataset) or not hasattr(dataset, "__getitem__"):
            _refuse("an iterable-style dataset")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        # worker_init_fn is never called: there are no workers.
        vars(self).update(
            dataset=dataset, num_workers=num_workers, prefetch_factor=prefetch_factor,
            pin_memory=pin_memory, pin_memory_device=pin_memory_device, timeout=timeout,
            worker_init_fn=worker_init_fn, multiprocessing_context=multiprocessing_context,
            in_order=in_order, batch_size=batch_size, drop_last=drop_last, sampler=sampler,
            batch_sampler=batch_sampler, generator=generator,
            persistent_workers=persistent_workers)
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self):
        if self.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        indices = iter(self._index_sampler)
        if self.pin_memory:
            # torch on a machine without an accelerator: pinning is skipped, with this warning
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.",
                          stacklevel=user_stacklevel())
        # torch draws the workers' base seed even with no workers: the draw moves the generator
        empty((), dtype=int64).random_(generator=self.generator)
        return self._batches(indices)

    def _batches(self, indices):
        dataset, collate = self.dataset, self.collate_fn
        for index in indices:
            if self.batch_sampler is None:
                yield collate(dataset[index])
            elif hasattr(dataset, "__getitems__"):
                yield collate(dataset.__getitems__(index))
            else:
                yield collate([dataset[i] for i in index])

    def __len__(self):
        return len(self._index_sampler)
