"""torch.searchsorted / torch.bucketize and nn.ParameterDict against torch 2.13."""

from collections import OrderedDict

import numpy as np
import pytest

import gradviz

real = pytest.importorskip("torch")

NAN = float("nan")


def _search_cases(torch):
    s = torch.tensor([1.0, 3, 5, 7, 9])
    v = torch.tensor([[3.0, 6, 9], [3, NAN, 0]])
    s2 = torch.tensor([[1.0, 3, 5], [2, 4, 6]])
    unsorted = torch.tensor([5.0, 1, 9, 3, 7])
    return {
        "left": lambda: torch.searchsorted(s, v),
        "right": lambda: torch.searchsorted(s, v, right=True),
        "side": lambda: torch.searchsorted(s, v, side="right", out_int32=True),
        "side_left": lambda: torch.searchsorted(s, v, side="left", right=False),
        "scalar": lambda: torch.searchsorted(s, 5),
        "float_scalar": lambda: torch.searchsorted(s, 5.5),
        "batched": lambda: torch.searchsorted(s2, torch.tensor([[3.0, 5], [1, 7]])),
        "batched_column": lambda: torch.searchsorted(s2, torch.tensor([[3.0], [3]])),
        "sorter": lambda: torch.searchsorted(unsorted, v, sorter=torch.argsort(unsorted)),
        "int_boundaries": lambda: torch.searchsorted(torch.tensor([1, 3, 5]),
                                                     torch.tensor([2.5, 3.0])),
        "int_values": lambda: torch.searchsorted(torch.tensor([1.0, 2]), torch.tensor([1, 2])),
        "0d_value": lambda: torch.searchsorted(torch.tensor([1.0, 2]), torch.tensor(1.5)),
        "out": lambda: torch.searchsorted(s, v, out=torch.empty(2, 3, dtype=torch.long)),
        "bucketize": lambda: torch.bucketize(v, s),
        "bucketize_right": lambda: torch.bucketize(v, s, right=True, out_int32=True),
        "bucketize_scalar": lambda: torch.bucketize(3, s),
        "bucketize_ints": lambda: torch.bucketize(torch.tensor([1, 2]), torch.tensor([1.5])),
        "requires_grad": lambda: torch.searchsorted(
            torch.tensor([1.0, 3, 5], requires_grad=True),
            torch.tensor([2.5, 3.0], requires_grad=True)),
    }


@pytest.mark.parametrize("case", sorted(_search_cases(real)))
def test_searchsorted_matches_torch(case):
    ours, theirs = _search_cases(gradviz)[case](), _search_cases(real)[case]()
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.grad_fn is None and not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _search_error(torch, case):
    s = torch.tensor([1.0, 3, 5, 7, 9])
    v = torch.tensor([[3.0, 6, 9], [3, NAN, 0]])
    s2 = torch.tensor([[1.0, 3, 5], [2, 4, 6]])
    order = torch.argsort(s)
    cases = {
        "opposites": lambda: torch.searchsorted(s, v, right=True, side="left"),
        "bad_side": lambda: torch.searchsorted(s, v, side="middle"),
        "batch_mismatch": lambda: torch.searchsorted(s2, torch.rand(3, 1)),
        "batch_ndim": lambda: torch.searchsorted(s2, torch.rand(2, 3, 1)),
        "scalar_2d": lambda: torch.searchsorted(s2, 3.0),
        "0d_boundaries": lambda: torch.searchsorted(torch.tensor(1.0), v),
        "sorter_size": lambda: torch.searchsorted(s, v, sorter=order[:3]),
        "sorter_dtype": lambda: torch.searchsorted(s, v, sorter=order.float()),
        "sorter_range": lambda: torch.searchsorted(s, v, sorter=order * 9),
        "out_dtype": lambda: torch.searchsorted(s, v, out=torch.empty(2, 3)),
        "out_int32": lambda: torch.searchsorted(s, v, out_int32=True,
                                                out=torch.empty(2, 3, dtype=torch.long)),
        "bucketize_2d": lambda: torch.bucketize(v, s2),
        "bucketize_0d": lambda: torch.bucketize(v, torch.tensor(2.0)),
    }
    with pytest.raises(RuntimeError) as info:
        cases[case]()
    return str(info.value)


@pytest.mark.parametrize("case", ["opposites", "bad_side", "batch_mismatch", "batch_ndim",
                                  "scalar_2d", "0d_boundaries", "sorter_size", "sorter_dtype",
                                  "sorter_range", "out_dtype", "out_int32", "bucketize_2d",
                                  "bucketize_0d"])
def test_searchsorted_errors_match_torch(case):
    assert _search_error(gradviz, case) == _search_error(real, case)


def _dict_story(torch):
    nn = torch.nn
    log = []
    d = nn.ParameterDict({"b": nn.Parameter(torch.ones(2, 3)), "a": torch.zeros(3), "c": 5})
    log.append(repr(d))
    log.append([(n, type(p).__name__, tuple(p.shape)) for n, p in d.named_parameters()])
    log.append((d["c"], list(d.keys()), len(d), "a" in d, "q" in d, d.get("q", 7)))
    d["z"] = torch.ones(1)
    d.update(OrderedDict([("y", torch.ones(2)), ("x", torch.ones(4))]))
    d.update([("w", torch.ones(1))])
    log.append(list(d))
    log.append((tuple(d.pop("z").shape), list(d.keys()), d.popitem()[0], list(reversed(d))))
    log.append(d.setdefault("v", torch.ones(3)).requires_grad)
    m = nn.Module()
    m.p = d
    log.append(repr(m))
    log.append(list(m.state_dict().keys()))
    log.append(sorted((d | nn.ParameterDict({"u": torch.ones(1)})).keys()))
    for bad in (lambda: d(1), lambda: d[3], lambda: d.update([("k",)]), lambda: d.update(5)):
        try:
            bad()
        except (RuntimeError, TypeError, ValueError) as e:
            log.append((type(e).__name__, str(e)))
    d.clear()
    log.append(len(d))
    return log


def test_parameter_dict_matches_torch():
    for ours, theirs in zip(_dict_story(gradviz), _dict_story(real)):
        assert ours == theirs
