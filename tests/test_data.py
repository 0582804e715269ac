"""torch.utils.data against torch 2.13: datasets, collation, the DataLoader's batches and
shuffled order (torch's for the same seed, with and without a generator), the draws it makes
from the default generator, random_split, errors and refused arguments; Tensor.random_()."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def plain(x):
    """Batches as plain data: a tensor is (dtype, values)."""
    if hasattr(x, "tolist") and hasattr(x, "dtype"):
        return (str(x.dtype), x.tolist())
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return x


def both(fn):
    out = []
    for mod in (torch, gradviz):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = plain(fn(mod))
            out.append((result, [str(w.message) for w in caught]))
        except Exception as exc:  # noqa: BLE001 - the error is the observable
            out.append((type(exc).__name__, str(exc)))
    return out


def _dataset(mod, n=10):
    x = mod.arange(n * 2, dtype=mod.float32).reshape(n, 2)
    y = mod.arange(n) % 3
    return mod.utils.data.TensorDataset(x, y)


def epochs(mod, k=3, **kw):
    loader = mod.utils.data.DataLoader(_dataset(mod), **kw)
    out = [len(loader)]
    for _ in range(k):
        out.append([batch for batch in loader])
    out.append(mod.rand(3))      # the default generator moved as torch's
    return out


LOADERS = {
    "sequential": {"batch_size": 4},
    "drop_last": {"batch_size": 4, "drop_last": True},
    "shuffle": {"batch_size": 3, "shuffle": True},
    "shuffle_drop_last": {"batch_size": 3, "shuffle": True, "drop_last": True},
    "batch_size_1": {},
    "no_batching": {"batch_size": None},
    "whole": {"batch_size": 100},
}


@pytest.mark.parametrize("case", list(LOADERS))
@pytest.mark.parametrize("seed", [0, 7])
def test_loader_batches_and_order_are_torchs(case, seed):
    def run(mod):
        mod.manual_seed(seed)
        return epochs(mod, **LOADERS[case])
    ref, got = both(run)
    assert got == ref


def test_shuffle_with_a_generator_draws_from_it():
    def run(mod):
        mod.manual_seed(1)
        g = mod.Generator().manual_seed(42)
        return epochs(mod, batch_size=4, shuffle=True, generator=g), g.initial_seed()
    ref, got = both(run)
    assert got == ref


def test_samplers_and_batch_sampler():
    def run(mod):
        mod.manual_seed(3)
        D = mod.utils.data
        ds = _dataset(mod, 7)
        rs = D.RandomSampler(ds, replacement=True, num_samples=40)
        bs = D.BatchSampler(D.SequentialSampler(ds), 3, drop_last=False)
        loader = D.DataLoader(ds, batch_sampler=bs)
        return list(rs), len(rs), list(bs), len(bs), [b for b in loader]
    ref, got = both(run)
    assert got == ref


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), batch=st.integers(1, 12), drop=st.booleans(),
       seed=st.integers(0, 2 ** 31))
def test_shuffled_order_for_any_size(n, batch, drop, seed):
    def run(mod):
        mod.manual_seed(seed)
        ds = mod.utils.data.TensorDataset(mod.arange(n))
        loader = mod.utils.data.DataLoader(ds, batch_size=batch, shuffle=True, drop_last=drop)
        return [b for (b,) in loader], len(loader)
    ref, got = both(run)
    assert got == ref


COLLATE = {
    "numbers": [(1, 2.5, True), (3, 4.5, False)],
    "dicts": [{"a": 1.0, "b": [1, 2]}, {"a": 2.0, "b": [3, 4]}],
    "strings": [("x", 1), ("y", 2)],
    "numpy": [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    "numpy_scalars": [np.float32(1.5), np.float32(2.5)],
    "ragged": [[1, 2], [3]],
    "object": [object(), object()],
}


@pytest.mark.parametrize("case", list(COLLATE))
def test_default_collate_is_torchs(case):
    def run(mod):
        out = mod.utils.data.default_collate(COLLATE[case])
        return out if case != "object" else None
    ref, got = both(run)
    if case == "object":   # the message names the type: compare its start
        assert ref[0] == got[0] == "TypeError"
        assert got[1].split("found")[0] == ref[1].split("found")[0]
    else:
        assert got == ref


def test_collate_stacks_tensors_and_tuples_become_lists():
    def run(mod):
        batch = [(mod.tensor([1.0, 2.0]), mod.tensor(0)), (mod.tensor([3.0, 4.0]), mod.tensor(1))]
        return mod.utils.data.default_collate(batch)
    ref, got = both(run)
    assert got == ref
    assert got[0][0] == "list"


def test_random_split_is_torchs():
    def run(mod):
        mod.manual_seed(5)
        ds = _dataset(mod, 11)
        a, b, c = mod.utils.data.random_split(ds, [0.5, 0.3, 0.2])
        g = mod.Generator().manual_seed(1)
        d, e = mod.utils.data.random_split(range(9), [4, 5], generator=g)
        return (list(a.indices), list(b.indices), list(c.indices), a[0], len(b),
                list(d), list(e), mod.rand(2))
    ref, got = both(run)
    assert got == ref


def test_concat_and_subset():
    def run(mod):
        D = mod.utils.data
        ds = D.ConcatDataset([_dataset(mod, 3), _dataset(mod, 2)])
        return len(ds), ds[4], ds[-1], (_dataset(mod, 2) + _dataset(mod, 1))[2], len(
            D.Subset(ds, [0, 4]))
    ref, got = both(run)
    assert got == ref


ERRORS = {
    "size_mismatch": lambda m: m.utils.data.TensorDataset(m.ones(3), m.ones(4)),
    "sampler_and_shuffle": lambda m: m.utils.data.DataLoader(
        _dataset(m), sampler=m.utils.data.SequentialSampler(_dataset(m)), shuffle=True),
    "batch_sampler": lambda m: m.utils.data.DataLoader(
        _dataset(m), batch_size=2, batch_sampler=[[0, 1]]),
    "none_drop_last": lambda m: m.utils.data.DataLoader(_dataset(m), batch_size=None,
                                                        drop_last=True),
    "negative_workers": lambda m: m.utils.data.DataLoader(_dataset(m), num_workers=-1),
    "timeout": lambda m: m.utils.data.DataLoader(_dataset(m), timeout=-1),
    "prefetch": lambda m: m.utils.data.DataLoader(_dataset(m), prefetch_factor=2),
    "persistent": lambda m: m.utils.data.DataLoader(_dataset(m), persistent_workers=True),
    "batch_size": lambda m: m.utils.data.DataLoader(_dataset(m), batch_size=0),
    "num_samples": lambda m: m.utils.data.RandomSampler(_dataset(m), num_samples=0),
    "split_sum": lambda m: m.utils.data.random_split(range(5), [2, 2]),
    "split_fraction": lambda m: m.utils.data.random_split(range(5), [1.5, -0.5]),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_are_torchs(case):
    ref, got = both(ERRORS[case])
    assert isinstance(ref[0], str), ref
    assert got == ref


def test_pin_memory_warns_as_torch_without_an_accelerator():
    ref, got = both(lambda m: [b for b in m.utils.data.DataLoader(_dataset(m, 2),
                                                                   pin_memory=True)])
    assert got == ref and got[1]


def test_iterable_datasets_are_refused():
    class Stream(gradviz.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(NotImplementedError, match=r"DataLoader\(an iterable-style dataset\) is "
                                                  r"not implemented"):
        gradviz.utils.data.DataLoader(Stream())


def test_workers_are_refused():
    with pytest.raises(NotImplementedError) as err:
        gradviz.utils.data.DataLoader(_dataset(gradviz), num_workers=2)
    assert str(err.value) == ("gradviz: torch.utils.data.DataLoader(num_workers=2) is not "
                              "implemented by gradviz's core; run with --backend torch to use "
                              "PyTorch")


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool",
                                   "float64", "float32", "float16"])
def test_random_without_bounds_is_torchs(dtype):
    def run(mod):
        mod.manual_seed(11)
        t = mod.empty((3, 4), dtype=getattr(mod, dtype))
        v = t._version
        t.random_()
        g = mod.Generator().manual_seed(2)
        return t, t._version - v, mod.empty(5, dtype=getattr(mod, dtype)).random_(generator=g)
    ref, got = both(run)
    assert got == ref
