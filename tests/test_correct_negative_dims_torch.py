"""Saved dims as torch 2.13 shows them: torch keeps a dim argument as it was given, and its
getter for an int64_t or int[] reads a negative one as 2**64 + dim (x.sum(-1)'s `_saved_dim` is
(18446744073709551615,)); gradviz normalised them. Every non-tensor saved value of every node
of each snippet (reductions, scans, softmax, views, splits, sorting, gathers, in-place scans
and fills, direct and through a view) is compared with torch's, and so are slices by
indexing, whose start and end torch keeps as Python gave them (None: 0 and 2**63 - 1). A Scalar
stays signed (add's alpha, clamp's min)."""

import warnings

import numpy as np
import pytest

import gradviz

try:
    from .graphwalk import graph_nodes
except ImportError:
    from graphwalk import graph_nodes

torch = pytest.importorskip("torch")

CASES = {
 "sum": lambda m, x: x.sum(-1), "sum_keep": lambda m, x: x.sum((-1, 0), keepdim=True), "mean": lambda m, x: x.mean(-1),
 "prod": lambda m, x: x.prod(-1), "amax": lambda m, x: x.amax(-1), "max": lambda m, x: x.max(-1)[0],
 "min": lambda m, x: x.min(-1)[0], "cumsum": lambda m, x: x.cumsum(-1), "cumprod": lambda m, x: x.cumprod(-1),
 "logsumexp": lambda m, x: x.logsumexp(-1), "softmax": lambda m, x: x.softmax(-1), "log_softmax": lambda m, x: x.log_softmax(-1),
 "var": lambda m, x: x.var(-1), "std": lambda m, x: x.std(-1), "norm": lambda m, x: x.norm(dim=-1),
 "unsqueeze": lambda m, x: x.unsqueeze(-1), "squeeze": lambda m, x: x.unsqueeze(-1).detach().requires_grad_().squeeze(-1),
 "transpose": lambda m, x: x.transpose(-1, -2), "select": lambda m, x: x.select(-1, 0), "narrow": lambda m, x: x.narrow(-1, 0, 1),
 "slice": lambda m, x: x[..., -2:], "cat": lambda m, x: m.cat([x, x], -1), "stack": lambda m, x: m.stack([x, x], -1),
 "split": lambda m, x: x.split(1, -1)[0], "chunk": lambda m, x: x.chunk(3, -1)[0], "unbind": lambda m, x: x.unbind(-1)[0],
 "flip": lambda m, x: x.flip(-1), "roll": lambda m, x: x.roll(1, -1), "gather": lambda m, x: x.gather(-1, m.zeros(2, 1, dtype=m.int64)),
 "index_select": lambda m, x: x.index_select(-1, m.tensor([0])), "sort": lambda m, x: x.sort(-1)[0], "topk": lambda m, x: x.topk(1, -1)[0],
 "kthvalue": lambda m, x: x.kthvalue(1, -1)[0], "median": lambda m, x: x.median(-1)[0], "diagonal": lambda m, x: x.diagonal(0, -2, -1),
 "diag_embed": lambda m, x: m.diag_embed(x, 0, -2, -1), "movedim": lambda m, x: x.movedim(-1, 0), "permute": lambda m, x: x.permute(-1, -2),
 "flatten": lambda m, x: x.flatten(-2), "unflatten": lambda m, x: x.unflatten(-1, (3, 1)), "repeat_interleave": lambda m, x: x.repeat_interleave(2, -1),
 "glu": lambda m, x: m.nn.functional.glu(m.cat([x, x], -1), -1), "cross": lambda m, x: m.linalg.cross(x, x.flip(0), dim=-1),
 "scatter": lambda m, x: x.scatter(-1, m.zeros(2, 1, dtype=m.int64), 1.0), "index_fill": lambda m, x: x.index_fill(-1, m.tensor([0]), 1.0),
 "cumsum_": lambda m, x: x.clone().cumsum_(-1), "cumsum_view": lambda m, x: x.clone()[:, :2].cumsum_(-1), "cumprod_": lambda m, x: x.clone().cumprod_(-2), "index_fill_": lambda m, x: x.clone().index_fill_(-1, m.tensor([0]), 2.0), "index_fill_t": lambda m, x: x.index_fill(-2, m.tensor([0]), m.tensor(2.0, dtype=m.float64)), "index_fill_view": lambda m, x: x.clone()[1:].index_fill_(-1, m.tensor([0]), 2.0), "max_neg": lambda m, x: x.max(dim=-2).values, "sort_default": lambda m, x: x.sort()[0], "topk_default": lambda m, x: x.topk(2)[0], "cross_default": lambda m, x: m.linalg.cross(x.reshape(2,3), x.flip(0)),"var_list": lambda m, x: x.var([-1, 0]), "squeeze_neg": lambda m, x: x.unsqueeze(1).squeeze(-2), "diag_mixed": lambda m, x: x.diagonal(0, 0, -1), "transpose_mixed": lambda m, x: x.transpose(0, -1), "split_sizes": lambda m, x: x.split([1, 2], -1)[1], "std_mean": lambda m, x: m.std_mean(x, -1)[0], "var_mean": lambda m, x: m.var_mean(x, dim=-1)[1], "amin_list": lambda m, x: x.amin((-1, -2)), "logcumsumexp": lambda m, x: x.logcumsumexp(-1),
 "cummax": lambda m, x: x.cummax(-1)[0], "nll_ignore": lambda m, x: m.nn.functional.nll_loss(x, m.tensor([0, 1])),
 "pad": lambda m, x: m.nn.functional.pad(x, (0, -1)), "normalize": lambda m, x: m.nn.functional.normalize(x, dim=-1),
 "cosine_similarity": lambda m, x: m.nn.functional.cosine_similarity(x, x + 1, dim=-1), "unfold": lambda m, x: x.unfold(-1, 2, 1),
 "tensor_split": lambda m, x: x.tensor_split(2, -1)[0], "take_along_dim": lambda m, x: m.take_along_dim(x, m.zeros(2, 1, dtype=m.int64), -1),
 "squeeze_dims": lambda m, x: x.unsqueeze(0).squeeze((-3,)), "sum_neg2": lambda m, x: x.sum(-2),
}
CASES.pop("logcumsumexp")       # not in gradviz's core
_KEYS = ["[1:]", "[:2]", "[-1:]", "[:-1]", "[..., -2:]", "[:, 1:]", "[::2]", "[1:3]", "[5:]",
         "[:10]", "[-10:]", "[1:-1]", "[0:]", "[:, :2]", "[np.int64(1):]", "[1::2]", "[-2:-1]",
         "[:, -3:]", "[-1]", "[:, -1]", "[1:][-1:]"]
for _k in _KEYS:
    CASES["getitem" + _k] = lambda m, x, k=_k: eval("x" + k, {"x": x, "np": np})
CASES["scalar_alpha"] = lambda m, x: x.add(x, alpha=-2)
CASES["clamp_negative"] = lambda m, x: x.clamp(min=-1)
CASES["leaky_negative"] = lambda m, x: m.nn.functional.leaky_relu(x, -0.5)
CASES["nll_default_ignore"] = lambda m, x: m.nn.functional.nll_loss(x, m.tensor([0, 1]))
CASES["linalg_norm_fro"] = lambda m, x: m.linalg.norm(x, "fro")
CASES["linalg_norm_fro_dims"] = lambda m, x: m.linalg.norm(x.unsqueeze(0), "fro", dim=(-2, -1))
CASES["linalg_norm_1"] = lambda m, x: m.linalg.norm(x, 1)
CASES["linalg_norm_inf_dims"] = lambda m, x: m.linalg.norm(x, float("inf"), dim=(-1, -2))
CASES["norm_fro_dims"] = lambda m, x: m.norm(x, "fro", dim=(-1, 0))
CASES["pad_negative"] = lambda m, x: m.nn.functional.pad(x, (1, -1))


def _plain(node):
    out = {}
    for name in dir(node):
        if name.startswith("_saved_") and name not in ("_saved_items", "_saved_lookup"):
            try:
                v = getattr(node, name)
            except RuntimeError as exc:       # a tensor freed by backward, in both
                out[name] = ("freed", str(exc).split(".")[0])
                continue
            if not hasattr(v, "shape"):
                out[name] = (type(v).__name__, v)
    return out


def _observe(m, case, backward):
    x = m.arange(6.0, dtype=m.float64).reshape(2, 3).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = case(m, x)
    nodes = graph_nodes(y.grad_fn)
    if backward:
        y.sum().backward()      # numbers stay readable once the tensors are freed
    return [(n.name(), _plain(n)) for n in nodes]


@pytest.mark.parametrize("backward", [False, True], ids=["before", "after_backward"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_dims_as_torch(name, backward):
    assert _observe(gradviz, CASES[name], backward) == _observe(torch, CASES[name], backward)
