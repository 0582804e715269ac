"""Issue #11's surface as runnable cases: every torch/Tensor function, nn.functional function,
nn module, loss, nn.init function, optimizer, scheduler, autograd feature, scaffolding call,
random draw and hook error the issue lists, each a function of the backend module (`torch` or
`gradviz`). tests/test_issue11_surface_torch.py runs each on both and compares what it returns.

A case returns either (outputs, leaves): tensors whose values, dtypes, shapes, grad_fn graphs
(names and next_functions) and saved names are compared, then the gradients of a weighted sum
of the outputs with respect to the leaves; or a dict of plain data (tensors inside are compared
by value). Leaves are deterministic (arange-based), float64 unless a module needs float32.
"""

import numpy as np

ITEMS = []


def L(t, *shape, pos=False, dtype=None):
    """A leaf of the given shape: arange * 0.37 - 1.1 (positive: |.| + 0.2)."""
    n = int(np.prod(shape)) if shape else 1
    x = t.arange(n, dtype=t.float64) * 0.37 - 1.1
    x = (x.abs() + 0.2) if pos else x
    return x.reshape(shape).to(dtype or t.float64).detach().requires_grad_()


def U(name, expr, *shapes, pos=False):
    """A case expr(t, *leaves) on leaves of the given shapes."""
    def case(t):
        xs = [L(t, *s, pos=pos) for s in shapes]
        return expr(t, *xs), xs
    ITEMS.append((name, case))


# ----- torch / Tensor functions ------------------------------------------------------------
for n in ["tan", "atan", "sinh", "cosh", "erf", "expm1", "exp2", "frac"]:
    U(n, lambda t, x, n=n: getattr(t, n)(x), (2, 3))
    U(n + "_method", lambda t, x, n=n: getattr(x, n)(), (2, 3))
for n in ["log1p", "log2", "log10", "rsqrt"]:
    U(n, lambda t, x, n=n: getattr(t, n)(x), (2, 3), pos=True)
U("asin", lambda t, x: t.asin(x * 0.3), (2, 3))
U("acos", lambda t, x: x.mul(0.3).acos(), (2, 3))
U("atan2", lambda t, x, y: t.atan2(x, y), (2, 3), (3,))
U("softplus", lambda t, x: t.nn.functional.softplus(x), (2, 3))
U("hypot", lambda t, x, y: t.hypot(x, y), (2, 3), (3,))
U("lerp", lambda t, x, y: t.lerp(x, y, 0.3), (2, 3), (3,))
U("lerp_tensor", lambda t, x, y, w: x.lerp(y, w), (2, 3), (3,), (3,))
U("addcmul", lambda t, x, a, b: t.addcmul(x, a, b, value=0.5), (2, 3), (3,), (2, 1))
U("addcdiv", lambda t, x, a, b: t.addcdiv(x, a, b, value=0.5), (2, 3), (3,), (2, 1))
U("logaddexp", lambda t, x, y: t.logaddexp(x, y), (2, 3), (3,))
U("xlogy", lambda t, x, y: t.xlogy(x, y), (2, 3), (3,), pos=True)
U("fmod", lambda t, x, y: t.fmod(x, y), (2, 3), (3,), pos=True)
U("fmod_scalar", lambda t, x: x.fmod(0.7), (2, 3))
U("var", lambda t, x: t.var(x, 1), (2, 3))
U("var_correction", lambda t, x: x.var(dim=0, correction=0, keepdim=True), (2, 3))
U("std", lambda t, x: t.std(x), (2, 3))
U("std_unbiased_false", lambda t, x: x.std(1, unbiased=False), (2, 3))
U("var_mean", lambda t, x: t.var_mean(x, 1), (2, 3))
U("std_mean", lambda t, x: t.std_mean(x), (2, 3))
U("norm", lambda t, x: x.norm(), (2, 3))
U("norm_p1_dim", lambda t, x: t.norm(x, p=1, dim=1), (2, 3))
U("norm_fro", lambda t, x: x.norm(p="fro"), (2, 3))
U("norm_inf", lambda t, x: x.norm(float("inf")), (2, 3))
U("linalg_norm", lambda t, x: t.linalg.norm(x), (2, 3))
U("linalg_norm_ord1_mat", lambda t, x: t.linalg.norm(x, ord=1), (2, 3))
U("linalg_norm_dim", lambda t, x: t.linalg.norm(x, dim=1), (2, 3))
U("linalg_vector_norm", lambda t, x: t.linalg.vector_norm(x, 3, dim=0), (2, 3))
U("cumsum", lambda t, x: t.cumsum(x, 1), (2, 3))
U("cumprod", lambda t, x: x.cumprod(dim=0), (2, 3))
U("logsumexp", lambda t, x: t.logsumexp(x, 1), (2, 3))
U("amax", lambda t, x: x.amax(1), (2, 3))
U("amin", lambda t, x: t.amin(x, 0), (2, 3))
U("sort", lambda t, x: t.sort(x, 1), (2, 3))
U("argsort", lambda t, x: t.argsort(x, dim=1, descending=True), (2, 3))
U("topk", lambda t, x: x.topk(2, dim=1), (2, 3))
U("topk_smallest", lambda t, x: t.topk(x, 2, largest=False, sorted=True), (6,))
U("median", lambda t, x: x.median(), (2, 3))
U("median_dim", lambda t, x: t.median(x, 1), (2, 3))
U("gather", lambda t, x: t.gather(x, 1, t.tensor([[0, 2], [1, 1]])), (2, 3))
U("scatter", lambda t, x, s: x.scatter(1, t.tensor([[0, 2], [1, 0]]), s), (2, 3), (2, 2))
U("scatter_reduce_arg", lambda t, x, s: x.scatter(1, t.tensor([[0, 2], [1, 0]]), s, reduce="add"),
        (2, 3), (2, 2))
U("scatter_add", lambda t, x, s: t.scatter_add(x, 1, t.tensor([[0, 0], [1, 0]]), s), (2, 3), (2,
        2))
U("index_select", lambda t, x: t.index_select(x, 0, t.tensor([1, 1, 0])), (2, 3))
U("index_add", lambda t, x, s: x.index_add(0, t.tensor([1, 1]), s, alpha=2), (2, 3), (2, 3))
U("masked_fill", lambda t, x: x.masked_fill(t.tensor([True, False, True]), -1.0), (2, 3))
U("masked_select", lambda t, x: t.masked_select(x, t.tensor([True, False, True])), (2, 3))
U("take_along_dim", lambda t, x: t.take_along_dim(x, t.tensor([[0], [2]]), dim=1), (2, 3))
U("take_along_dim_flat", lambda t, x: x.take_along_dim(t.tensor([4, 0])), (2, 3))
U("nonzero", lambda t, x: t.nonzero(x > 0), (2, 3))
U("nonzero_tuple", lambda t, x: x.nonzero(as_tuple=True), (2, 3))
U("all", lambda t, x: [t.all(x > -2), x.gt(0).all(1)], (2, 3))
U("any", lambda t, x: [t.any(x > 0), (x > 0).any(dim=0)], (2, 3))
U("isclose", lambda t, x: t.isclose(x, x + 1e-9), (2, 3))
U("allclose", lambda t, x: t.allclose(x, x + 1e-9), (2, 3))
U("count_nonzero", lambda t, x: [t.count_nonzero(x > 0), x.count_nonzero(dim=1)], (2, 3))
U("tril", lambda t, x: t.tril(x, 1), (3, 4))
U("triu", lambda t, x: x.triu(-1), (3, 4))
U("diag_vec", lambda t, x: t.diag(x), (3,))
U("diag_mat", lambda t, x: x.diag(1), (3, 4))
U("diagonal", lambda t, x: t.diagonal(x, 0, 0, 1), (3, 4))
U("trace", lambda t, x: t.trace(x), (3, 4))
U("flip", lambda t, x: t.flip(x, [0]), (3, 4))
U("roll", lambda t, x: x.roll(1, 1), (3, 4))
U("repeat", lambda t, x: x.repeat(2, 1), (3, 4))
U("repeat_interleave", lambda t, x: t.repeat_interleave(x, 2, dim=0), (3, 4))
U("repeat_interleave_tensor", lambda t, x: x.repeat_interleave(t.tensor([1, 0, 2]), dim=0), (3, 4))
U("tile", lambda t, x: t.tile(x, (2,)), (3, 4))
U("split", lambda t, x: t.split(x, 2, 1), (3, 4))
U("split_list", lambda t, x: x.split([1, 3], dim=1), (3, 4))
U("chunk", lambda t, x: t.chunk(x, 3, 1), (3, 4))
U("tensordot", lambda t, x, y: t.tensordot(x, y, dims=([1], [0])), (3, 4), (4, 2))
U("einsum_mm", lambda t, x, y: t.einsum("ij,jk->ik", x, y), (3, 4), (4, 2))
U("einsum_list", lambda t, x, y: t.einsum("ij,jk", [x, y]), (3, 4), (4, 2))
U("einsum_batch", lambda t, x, y: t.einsum("bij,bjk->bik", x, y), (2, 3, 4), (2, 4, 2))
U("einsum_trace", lambda t, x: t.einsum("ii", x), (3, 3))
U("einsum_outer", lambda t, x, y: t.einsum("i,j->ij", x, y), (3,), (4,))
U("einsum_ellipsis", lambda t, x, y: t.einsum("...ij,...jk", x, y), (2, 3, 4), (4, 2))
U("einsum_sum", lambda t, x: t.einsum("ij->j", x), (3, 4))
U("baddbmm", lambda t, b, x, y: t.baddbmm(b, x, y), (3, 2), (2, 3, 4), (2, 4, 2))
U("addmv", lambda t, b, m, v: t.addmv(b, m, v), (3,), (3, 4), (4,))
U("kron", lambda t, x, y: t.kron(x, y), (2, 2), (2, 3))
U("cross", lambda t, x, y: t.cross(x, y, dim=1), (2, 3), (2, 3))
U("cross_nodim", lambda t, x, y: t.cross(x, y), (2, 3), (2, 3))
U("linalg_cross", lambda t, x, y: t.linalg.cross(x, y), (2, 3), (2, 3))
U("broadcast_to", lambda t, x: t.broadcast_to(x, (2, 3, 4)), (3, 1))
U("meshgrid", lambda t, x, y: t.meshgrid(x, y, indexing="ij"), (3,), (2,))
U("meshgrid_xy", lambda t, x, y: t.meshgrid(x, y, indexing="xy"), (3,), (2,))
U("hstack", lambda t, x, y: t.hstack([x, y]), (2, 3), (2, 1))
U("vstack", lambda t, x, y: t.vstack((x, y)), (2, 3), (3,))
U("movedim", lambda t, x: t.movedim(x, 0, -1), (2, 3, 4))
U("swapaxes", lambda t, x: x.swapaxes(0, 2), (2, 3, 4))
U("unflatten", lambda t, x: x.unflatten(1, (2, 2)), (3, 4))
U("unflatten_fn", lambda t, x: t.unflatten(x, -1, (2, -1)), (3, 4))
U("diff", lambda t, x: t.diff(x), (3, 4))
U("diff_n2_prepend", lambda t, x: x.diff(n=2, dim=0, prepend=x[:1]), (3, 4))
U("cdist", lambda t, x, y: t.cdist(x, y), (3, 4), (2, 4))
U("cdist_p1", lambda t, x, y: t.cdist(x, y, p=1), (3, 4), (2, 4))
def _sq(t, x): return x + t.eye(3, dtype=t.float64) * 3
U("inverse", lambda t, x: t.inverse(_sq(t, x)), (3, 3))
U("linalg_inv", lambda t, x: t.linalg.inv(_sq(t, x)), (3, 3))
U("det", lambda t, x: t.det(_sq(t, x)), (3, 3))
U("linalg_det", lambda t, x: t.linalg.det(_sq(t, x)), (3, 3))
# ----- in-place and method forms people use ---------------------------------------------------
def _ip(name, body, *shapes):
    def f(t):
        xs = [L(t, *s) for s in shapes]
        y = xs[0] * 1
        body(t, y, *xs[1:])
        return y, xs
    ITEMS.append((name, f))
_ip("masked_fill_", lambda t, y: y.masked_fill_(y > 0, 0.5), (2, 3))
_ip("scatter_", lambda t, y, s: y.scatter_(1, t.tensor([[0, 2], [1, 0]]), s), (2, 3), (2, 2))
_ip("scatter_value_", lambda t, y: y.scatter_(1, t.tensor([[0], [1]]), 2.0), (2, 3))
_ip("scatter_add_", lambda t, y, s: y.scatter_add_(1, t.tensor([[0, 2], [1, 0]]), s), (2, 3), (2,
        2))
_ip("clamp_", lambda t, y: y.clamp_(-0.5, 0.5), (2, 3))
_ip("clamp_min_", lambda t, y: y.clamp_(min=0), (2, 3))
_ip("index_add_", lambda t, y, s: y.index_add_(0, t.tensor([1]), s), (2, 3), (1, 3))
_ip("index_fill_", lambda t, y: y.index_fill_(1, t.tensor([0]), 3.0), (2, 3))
_ip("index_copy_", lambda t, y, s: y.index_copy_(0, t.tensor([1]), s), (2, 3), (1, 3))
_ip("masked_scatter_", lambda t, y, s: y.masked_scatter_(y > 0, s), (2, 3), (6,))
_ip("tril_", lambda t, y: y.tril_(), (3, 3))
_ip("triu_", lambda t, y: y.triu_(1), (3, 3))
_ip("lerp_", lambda t, y, e: y.lerp_(e, 0.3), (2, 3), (2, 3))
_ip("addcmul_", lambda t, y, a, b: y.addcmul_(a, b, value=2), (2, 3), (2, 3), (2, 3))
_ip("addcdiv_", lambda t, y, a, b: y.addcdiv_(a, b.exp(), value=2), (2, 3), (2, 3), (2, 3))
_ip("exp_", lambda t, y: y.exp_(), (2, 3))
_ip("tanh_", lambda t, y: y.tanh_(), (2, 3))
_ip("sigmoid_", lambda t, y: y.sigmoid_(), (2, 3))
_ip("relu_", lambda t, y: y.relu_(), (2, 3))
_ip("abs_", lambda t, y: y.abs_(), (2, 3))
_ip("pow_", lambda t, y: y.pow_(2), (2, 3))
_ip("sqrt_", lambda t, y: y.abs_().sqrt_(), (2, 3))
_ip("log_", lambda t, y: y.abs_().log_(), (2, 3))
_ip("fill_diagonal_", lambda t, y: y.fill_diagonal_(0.0), (3, 3))
_ip("cumsum_", lambda t, y: y.cumsum_(1), (2, 3))
_ip("t_", lambda t, y: y.t_(), (2, 3))
_ip("unsqueeze_", lambda t, y: y.unsqueeze_(0), (2, 3))
_ip("copy_", lambda t, y, s: y.copy_(s), (2, 3), (3,))
_ip("mul_", lambda t, y, s: y.mul_(s), (2, 3), (3,))
_ip("div_", lambda t, y, s: y.div_(s), (2, 3), (3,))
_ip("sub_alpha", lambda t, y, s: y.sub_(s, alpha=2), (2, 3), (3,))

# ----- nn.functional ------------------------------------------------------------------------
F = lambda t: t.nn.functional
U("F.gelu", lambda t, x: F(t).gelu(x), (2, 3))
U("F.gelu_tanh", lambda t, x: F(t).gelu(x, approximate="tanh"), (2, 3))
U("F.silu", lambda t, x: F(t).silu(x), (2, 3))
U("F.softplus", lambda t, x: F(t).softplus(x, beta=2), (2, 3))
U("F.leaky_relu", lambda t, x: F(t).leaky_relu(x, 0.1), (2, 3))
U("F.elu", lambda t, x: F(t).elu(x), (2, 3))
U("F.hardtanh", lambda t, x: F(t).hardtanh(x), (2, 3))
U("F.relu6", lambda t, x: F(t).relu6(x * 5), (2, 3))
U("F.logsigmoid", lambda t, x: F(t).logsigmoid(x), (2, 3))
U("F.glu", lambda t, x: F(t).glu(x, 0), (2, 3))
U("F.bce", lambda t, x, y: F(t).binary_cross_entropy(x.sigmoid(), y.sigmoid().detach(),
        weight=t.tensor([1.0, 2.0, 0.5], dtype=t.float64)), (2, 3), (2, 3))
U("F.bce_logits", lambda t, x, y: F(t).binary_cross_entropy_with_logits(x, y.sigmoid(),
        pos_weight=t.tensor([1.0, 2.0, 0.5], dtype=t.float64)), (2, 3), (2, 3))
U("F.l1_loss", lambda t, x, y: F(t).l1_loss(x, y), (2, 3), (3,))
U("F.smooth_l1_loss", lambda t, x, y: F(t).smooth_l1_loss(x, y * 2, beta=0.5), (2, 3), (2, 3))
U("F.huber_loss", lambda t, x, y: F(t).huber_loss(x, y * 2, reduction="sum", delta=0.7), (2, 3),
        (2, 3))
U("F.kl_div", lambda t, x, y: F(t).kl_div(x.log_softmax(1), y.softmax(1), reduction="batchmean"),
        (2, 3), (2, 3))
U("F.kl_div_logtarget", lambda t, x, y: F(t).kl_div(x.log_softmax(1), y.log_softmax(1),
        reduction="sum", log_target=True), (2, 3), (2, 3))
U("F.nll_loss", lambda t, x: F(t).nll_loss(x.log_softmax(1), t.tensor([2, 0])), (2, 3))
U("F.nll_loss_weight_ignore", lambda t, x: F(t).nll_loss(x, t.tensor([2, 1, 0]),
        weight=t.tensor([1.0, 2.0, 3.0], dtype=t.float64), ignore_index=1), (3, 3))
U("F.cross_entropy", lambda t, x: F(t).cross_entropy(x, t.tensor([2, 0])), (2, 3))
U("F.cross_entropy_weight", lambda t, x: F(t).cross_entropy(x, t.tensor([2, 0]),
        weight=t.tensor([1.0, 2.0, 3.0], dtype=t.float64)), (2, 3))
U("F.cross_entropy_ignore", lambda t, x: F(t).cross_entropy(x, t.tensor([2, -100, 1]),
        ignore_index=-100), (3, 3))
U("F.cross_entropy_ls", lambda t, x: F(t).cross_entropy(x, t.tensor([2, 0]), label_smoothing=0.1),
        (2, 3))
U("F.cross_entropy_ls_weight_ignore", lambda t, x: F(t).cross_entropy(x, t.tensor([2, 0, 1]),
        weight=t.tensor([1.0, 2.0, 3.0],
                dtype=t.float64), ignore_index=0, label_smoothing=0.2), (3, 3))
U("F.cross_entropy_probs", lambda t, x, y: F(t).cross_entropy(x, y.softmax(1)), (2, 3), (2, 3))
U("F.cross_entropy_probs_ls", lambda t, x, y: F(t).cross_entropy(x, y.softmax(1),
        label_smoothing=0.1, weight=t.tensor([1.0, 2.0, 3.0], dtype=t.float64)), (2, 3), (2, 3))
U("F.cross_entropy_4d", lambda t, x: F(t).cross_entropy(x, t.tensor([[[0, 2], [1, 1]]]),
        reduction="none"), (1, 3, 2, 2))
U("F.embedding", lambda t, w: F(t).embedding(t.tensor([[0, 2], [1, 2]]), w), (3, 2))
U("F.embedding_pad", lambda t, w: F(t).embedding(t.tensor([[0, 2], [1, 2]]), w, padding_idx=2), (3,
        2))
U("F.dropout_eval", lambda t, x: F(t).dropout(x, 0.5, training=False), (2, 3))
def _drop(t):
    t.manual_seed(0); x = L(t, 4, 5); return F(t).dropout(x, 0.3), [x]
ITEMS.append(("F.dropout_train_seeded", _drop))
U("F.layer_norm", lambda t, x, w, b: F(t).layer_norm(x, (3,), w, b), (2, 3), (3,), (3,))
def _bn(t):
    x = L(t, 4, 3); rm = t.zeros(3, dtype=t.float64); rv = t.ones(3, dtype=t.float64)
    y = F(t).batch_norm(x, rm, rv, training=True, momentum=0.2)
    return [y, rm, rv], [x]
ITEMS.append(("F.batch_norm_running", _bn))
U("F.batch_norm_eval", lambda t, x: F(t).batch_norm(x, t.zeros(3, dtype=t.float64) + 0.1, t.ones(3,
        dtype=t.float64) * 2), (4, 3))
U("F.group_norm", lambda t, x, w, b: F(t).group_norm(x, 2, w, b), (2, 4, 3), (4,), (4,))
U("F.conv1d", lambda t, x, w, b: F(t).conv1d(x, w, b, stride=2, padding=1), (2, 3, 7), (4, 3, 3),
        (4,))
U("F.conv2d", lambda t, x, w, b: F(t).conv2d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
        (2, 4, 7, 6), (4, 2, 3, 3), (4,))
U("F.conv2d_same", lambda t, x, w: F(t).conv2d(x, w, padding="same"), (1, 2, 5, 5), (3, 2, 3, 3))
U("F.max_pool2d", lambda t, x: F(t).max_pool2d(x, 2), (1, 2, 4, 5))
U("F.max_pool2d_indices", lambda t, x: F(t).max_pool2d(x, 3, stride=2, padding=1,
        return_indices=True), (1, 2, 5, 5))
U("F.avg_pool2d", lambda t, x: F(t).avg_pool2d(x, 2, stride=1), (1, 2, 4, 5))
U("F.adaptive_avg_pool2d", lambda t, x: F(t).adaptive_avg_pool2d(x, 1), (1, 2, 4, 5))
U("F.adaptive_avg_pool2d_3", lambda t, x: F(t).adaptive_avg_pool2d(x, (3, 2)), (1, 2, 4, 5))
U("F.pad", lambda t, x: F(t).pad(x, (1, 2)), (2, 3))
U("F.pad_reflect", lambda t, x: F(t).pad(x, (1, 1, 1, 1), mode="reflect"), (1, 1, 3, 3))
U("F.one_hot", lambda t: F(t).one_hot(t.tensor([0, 2, 1]), 4))
U("F.one_hot_auto", lambda t: F(t).one_hot(t.tensor([0, 2, 1])))
U("F.normalize", lambda t, x: F(t).normalize(x, dim=1), (2, 3))
U("F.normalize_p1", lambda t, x: F(t).normalize(x, p=1, dim=0), (2, 3))
U("F.cosine_similarity", lambda t, x, y: F(t).cosine_similarity(x, y), (2, 3), (2, 3))
U("F.cosine_similarity_dim0", lambda t, x, y: F(t).cosine_similarity(x, y, dim=0), (2, 3), (2, 3))
U("F.sdpa", lambda t, q, k, v: F(t).scaled_dot_product_attention(q, k, v), (1, 2, 3, 4), (1, 2, 3,
        4), (1, 2, 3, 4))
U("F.sdpa_causal", lambda t, q, k, v: F(t).scaled_dot_product_attention(q, k, v, is_causal=True),
        (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4))
U("F.linear_3d", lambda t, x, w, b: F(t).linear(x, w, b), (2, 3, 4), (5, 4), (5,))
U("F.linear_2d", lambda t, x, w, b: F(t).linear(x, w, b), (3, 4), (5, 4), (5,))
U("F.linear_1d", lambda t, x, w: F(t).linear(x, w), (4,), (5, 4))
U("F.linear_4d_nobias", lambda t, x, w: F(t).linear(x, w), (2, 2, 3, 4), (5, 4))
U("F.softmax", lambda t, x: F(t).softmax(x, dim=1), (2, 3))
U("F.log_softmax", lambda t, x: F(t).log_softmax(x, -1), (2, 3))
U("F.mse_loss", lambda t, x, y: F(t).mse_loss(x, y), (2, 3), (2, 3))
U("F.relu", lambda t, x: F(t).relu(x), (2, 3))
U("F.tanh", lambda t, x: F(t).tanh(x), (2, 3))
U("F.sigmoid", lambda t, x: F(t).sigmoid(x), (2, 3))


# ----- nn modules, losses, init, optimizers, schedulers, autograd, scaffolding, hooks -----

def _mod(name, ctor, shape, train=True, dtype="float32"):
    def f(t):
        t.manual_seed(0)
        m = ctor(t)
        m.train(train)
        x = L(t, *shape, dtype=getattr(t, dtype))
        y = m(x)
        ps = [p for p in m.parameters()]
        return [y] + [p.detach().clone() for p in ps], [x] + ps
    ITEMS.append(("nn." + name, f))
nn = lambda t: t.nn
_mod("Conv1d", lambda t: nn(t).Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 7))
_mod("Conv2d", lambda t: nn(t).Conv2d(4, 6, 3, padding=1, groups=2, dilation=1, stride=2), (2, 4,
        6, 5))
_mod("Conv2d_nobias_same", lambda t: nn(t).Conv2d(2, 3, (3, 2), padding="same", bias=False), (1, 2,
        5, 5))
_mod("MaxPool2d", lambda t: nn(t).MaxPool2d(2, 2), (1, 2, 4, 5))
_mod("AvgPool2d", lambda t: nn(t).AvgPool2d(2), (1, 2, 4, 5))
_mod("AdaptiveAvgPool2d", lambda t: nn(t).AdaptiveAvgPool2d((1, 1)), (1, 2, 4, 5))
_mod("Flatten", lambda t: nn(t).Flatten(), (2, 3, 4))
_mod("Unflatten", lambda t: nn(t).Unflatten(1, (2, 2)), (3, 4))
def _emb(t):
    t.manual_seed(0); m = t.nn.Embedding(5, 3, padding_idx=1)
    y = m(t.tensor([[0, 1], [4, 1]]))
    return [y, m.weight.detach().clone()], [m.weight]
ITEMS.append(("nn.Embedding", _emb))
# float64: layer norm's input gradients cancel, float32 leaves them rounding noise
_mod("LayerNorm", lambda t: nn(t).LayerNorm(4).double(), (3, 4), dtype="float64")
_mod("LayerNorm_noaffine", lambda t: nn(t).LayerNorm([3, 4], elementwise_affine=False),
     (2, 3, 4), dtype="float64")
def _bn(cls, shape, suffix=""):
    def f(t):
        t.manual_seed(0); m = getattr(t.nn, cls)(shape[1], momentum=0.3)
        x = L(t, *shape, dtype=t.float32); y = m(x); y2 = m(x * 2)
        m.eval(); y3 = m(x)
        return [y, y2, y3, m.running_mean.clone(), m.running_var.clone(),
                m.num_batches_tracked.clone()], [x, m.weight, m.bias]
    ITEMS.append(("nn." + cls + suffix, f))
_bn("BatchNorm1d", (4, 3)); _bn("BatchNorm1d", (4, 3, 2), "_3d"); _bn("BatchNorm2d", (2, 3, 2, 2))
_mod("Dropout_eval", lambda t: nn(t).Dropout(0.5), (3, 4), train=False)
_mod("Dropout_train", lambda t: nn(t).Dropout(0.5), (3, 4))
_mod("GELU", lambda t: nn(t).GELU(), (3, 4))
_mod("GELU_tanh", lambda t: nn(t).GELU("tanh"), (3, 4))
_mod("SiLU", lambda t: nn(t).SiLU(), (3, 4))
_mod("LeakyReLU", lambda t: nn(t).LeakyReLU(0.2), (3, 4))
_mod("Softmax", lambda t: nn(t).Softmax(dim=1), (3, 4))
_mod("LogSoftmax", lambda t: nn(t).LogSoftmax(1), (3, 4))
_mod("Identity", lambda t: nn(t).Identity(), (3, 4))
_mod("Linear", lambda t: nn(t).Linear(4, 5), (3, 4))
_mod("Linear_3d", lambda t: nn(t).Linear(4, 5), (2, 3, 4))
_mod("Sequential", lambda t: nn(t).Sequential(nn(t).Linear(4, 8), nn(t).Tanh(), nn(t).Linear(8,
        2)), (3, 4))
def _modlist(t):
    t.manual_seed(0)
    ml = t.nn.ModuleList([t.nn.Linear(3, 3) for _ in range(2)])
    md = t.nn.ModuleDict({"a": t.nn.Linear(3, 2), "b": t.nn.ReLU()})
    pl = t.nn.ParameterList([t.nn.Parameter(t.ones(3)), t.nn.Parameter(t.zeros(2))])
    x = t.ones(1, 3)
    for m in ml: x = m(x)
    y = md["b"](md["a"](x))
    return {"y": y.detach(), "len": [len(ml), len(md), len(pl)], "keys": list(md.keys()),
            "names": [n for n, _ in ml.named_parameters()] + [n for n,
                    _ in md.named_parameters()] + [n for n, _ in pl.named_parameters()]}
ITEMS.append(("nn.ModuleList/Dict/ParameterList", _modlist))
# losses
def _loss(name, ctor, xs, target):
    def f(t):
        x = L(t, *xs)
        return ctor(t)(x, target(t)), [x]
    ITEMS.append(("nn." + name, f))
_loss("MSELoss", lambda t: nn(t).MSELoss(reduction="sum"), (2, 3), lambda t: t.ones(2, 3,
        dtype=t.float64))
_loss("L1Loss", lambda t: nn(t).L1Loss(), (2, 3), lambda t: t.ones(2, 3, dtype=t.float64))
_loss("SmoothL1Loss", lambda t: nn(t).SmoothL1Loss(beta=0.5), (2, 3), lambda t: t.ones(2, 3,
        dtype=t.float64))
_loss("HuberLoss", lambda t: nn(t).HuberLoss(delta=0.5), (2, 3), lambda t: t.ones(2, 3,
        dtype=t.float64))
def _bce(t):
    x = L(t, 2, 3); return t.nn.BCELoss(weight=t.tensor([1.0, 2, 3], dtype=t.float64))(x.sigmoid(),
            t.full((2, 3), 0.3, dtype=t.float64)), [x]
ITEMS.append(("nn.BCELoss", _bce))
_loss("BCEWithLogitsLoss", lambda t: nn(t).BCEWithLogitsLoss(pos_weight=t.tensor([1.0, 2, 3],
        dtype=t.float64)), (2, 3), lambda t: t.full((2, 3), 0.3, dtype=t.float64))
_loss("KLDivLoss", lambda t: nn(t).KLDivLoss(reduction="batchmean"), (2, 3), lambda t: t.full((2,
        3), 1 / 3, dtype=t.float64))
_loss("NLLLoss", lambda t: nn(t).NLLLoss(weight=t.tensor([1.0, 2, 3], dtype=t.float64),
        ignore_index=0), (3, 3), lambda t: t.tensor([0, 1, 2]))
_loss("CrossEntropyLoss", lambda t: nn(t).CrossEntropyLoss(label_smoothing=0.1), (3, 3),
        lambda t: t.tensor([0, 1, 2]))
_loss("CrossEntropyLoss_w_ignore", lambda t: nn(t).CrossEntropyLoss(weight=t.tensor([1.0, 2, 3],
        dtype=t.float64), ignore_index=2), (3, 3), lambda t: t.tensor([0, 1, 2]))
# init
def _init(name, call):
    def f(t):
        t.manual_seed(0); w = t.empty(4, 5); call(t, w); return {"w": w}
    ITEMS.append(("init." + name, f))
_init("uniform_", lambda t, w: t.nn.init.uniform_(w, -0.5, 0.5))
_init("normal_", lambda t, w: t.nn.init.normal_(w, 0.1, 2.0))
_init("constant_", lambda t, w: t.nn.init.constant_(w, 0.3))
_init("ones_", lambda t, w: t.nn.init.ones_(w))
_init("zeros_", lambda t, w: t.nn.init.zeros_(w))
_init("eye_", lambda t, w: t.nn.init.eye_(w))
_init("xavier_uniform_", lambda t, w: t.nn.init.xavier_uniform_(w, gain=2.0))
_init("xavier_normal_", lambda t, w: t.nn.init.xavier_normal_(w))
_init("kaiming_uniform_", lambda t, w: t.nn.init.kaiming_uniform_(w, a=5 ** 0.5))
_init("kaiming_normal_", lambda t, w: t.nn.init.kaiming_normal_(w, mode="fan_out",
        nonlinearity="relu"))
_init("trunc_normal_", lambda t, w: t.nn.init.trunc_normal_(w, std=0.02))
_init("orthogonal_", lambda t, w: t.nn.init.orthogonal_(w))
_init("calculate_gain", lambda t,
        w: w.fill_(t.nn.init.calculate_gain("tanh") + t.nn.init.calculate_gain("leaky_relu", 0.2)))
# module features
def _hooks(t):
    t.manual_seed(0)
    m = t.nn.Sequential(t.nn.Linear(3, 2), t.nn.ReLU())
    log = []
    h1 = m[0].register_forward_pre_hook(lambda mod, inp: log.append(("pre", inp[0].shape[0])))
    h2 = m[0].register_forward_hook(lambda mod, inp, out: log.append(("fwd", out.grad_fn.name())))
    h3 = m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("bwd",
            [None if g is None else g.tolist() for g in gi], [g.tolist() for g in go])))
    h4 = m[0].register_full_backward_pre_hook(lambda mod, go: log.append(("bpre",
            [g.tolist() for g in go])))
    x = t.ones(2, 3, requires_grad=True)
    y = m(x); y.sum().backward()
    h1.remove(); h2.remove(); h3.remove(); h4.remove()
    m(x).sum().backward()
    return {"log": log, "yfn": y.grad_fn.name(), "x": x.grad}
ITEMS.append(("Module hooks", _hooks))
def _hook_modify(t):
    t.manual_seed(0)
    m = t.nn.Linear(3, 2)
    m.register_forward_hook(lambda mod, inp, out: out * 2)
    m.register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,))
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
    x = t.ones(2, 3, requires_grad=True)
    y = m(x); y.sum().backward()
    return {"y": y, "x": x.grad, "w": m.weight.grad}
ITEMS.append(("Module hooks modify", _hook_modify))
def _state(t):
    class Net(t.nn.Module):
        def __init__(s):
            super().__init__()
            s.bn = t.nn.BatchNorm1d(2)
            s.fc = t.nn.Linear(2, 2)
            s.scale = t.nn.Parameter(t.ones(1))
            s.register_buffer("steps", t.zeros(1))
            s.sub = t.nn.Sequential(t.nn.Linear(2, 1))
    t.manual_seed(0); n = Net()
    sd = n.state_dict()
    n2 = Net(); r = n2.load_state_dict(sd)
    return {"keys": list(sd.keys()), "named_modules": [k for k, _ in n.named_modules()],
            "named_params": [k for k, _ in n.named_parameters()], "buffers": [k for k,
                    _ in n.named_buffers()],
            "eq": all(bool((a == b).all()) for a, b in zip(n.state_dict().values(),
                    n2.state_dict().values())),
            "ret": repr(r), "children": [k for k, _ in n.named_children()]}
ITEMS.append(("state_dict order/load/named_modules", _state))
def _apply(t):
    m = t.nn.Sequential(t.nn.Linear(2, 2), t.nn.Sequential(t.nn.Linear(2, 1)))
    seen = []
    def init(mod):
        seen.append(type(mod).__name__)
        if isinstance(mod, t.nn.Linear): t.nn.init.constant_(mod.weight, 0.5)
    r = m.apply(init)
    m.train(False)
    return {"seen": seen, "same": r is m, "w": m[0].weight.detach(),
            "training": [x.training for x in m.modules()]}
ITEMS.append(("apply/train/eval", _apply))
def _zg(t):
    m = t.nn.Linear(2, 1); m(t.ones(1, 2)).sum().backward()
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    same = g is m.weight.grad
    m.zero_grad()
    return {"same": same, "after": m.weight.grad is None, "gval": g}
ITEMS.append(("zero_grad(set_to_none=False)", _zg))
# optim
def _opt(name, ctor, steps=3, sched=None):
    def f(t):
        t.manual_seed(0)
        m = t.nn.Linear(3, 2)
        opt = ctor(t, m)
        s = sched(t, opt) if sched else None
        lrs = []
        for i in range(steps):
            opt.zero_grad()
            loss = (m(t.arange(6.0).reshape(2, 3) / 5) ** 2).sum()
            loss.backward()
            opt.step()
            if s: s.step(); lrs.append(s.get_last_lr())
        sd = opt.state_dict()
        return {"w": m.weight.detach(), "b": m.bias.detach(), "lrs": lrs, "groups": [{k: v for k,
                v in g.items() if k != "params"} for g in sd["param_groups"]],
                "state_keys": {k: sorted(v.keys()) for k, v in sd["state"].items()}}
    ITEMS.append(("optim." + name, f))
O = lambda t: t.optim
_opt("SGD", lambda t, m: O(t).SGD(m.parameters(), lr=0.1))
_opt("SGD_momentum_nesterov_wd", lambda t, m: O(t).SGD(m.parameters(), lr=0.1, momentum=0.9,
        nesterov=True, weight_decay=0.01))
_opt("Adam", lambda t, m: O(t).Adam(m.parameters(), lr=0.01))
_opt("Adam_amsgrad_wd", lambda t, m: O(t).Adam(m.parameters(), lr=0.01, amsgrad=True,
        weight_decay=0.1, betas=(0.8, 0.9)))
_opt("AdamW", lambda t, m: O(t).AdamW(m.parameters(), lr=0.01))
_opt("RMSprop", lambda t, m: O(t).RMSprop(m.parameters(), lr=0.01, momentum=0.5, centered=True))
_opt("Adagrad", lambda t, m: O(t).Adagrad(m.parameters(), lr=0.1, lr_decay=0.01))
_opt("param_groups", lambda t, m: O(t).SGD([{"params": [m.weight]}, {"params": [m.bias],
        "lr": 0.5}], lr=0.1, momentum=0.9))
_opt("StepLR", lambda t, m: O(t).SGD(m.parameters(), lr=0.1), 5, lambda t,
        o: O(t).lr_scheduler.StepLR(o, 2, gamma=0.5))
_opt("MultiStepLR", lambda t, m: O(t).SGD(m.parameters(), lr=0.1), 5, lambda t,
        o: O(t).lr_scheduler.MultiStepLR(o, [1, 3], 0.1))
_opt("ExponentialLR", lambda t, m: O(t).Adam(m.parameters(), lr=0.1), 4, lambda t,
        o: O(t).lr_scheduler.ExponentialLR(o, 0.9))
_opt("CosineAnnealingLR", lambda t, m: O(t).Adam(m.parameters(), lr=0.1), 6, lambda t,
        o: O(t).lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.01))
_opt("LambdaLR", lambda t, m: O(t).SGD(m.parameters(), lr=0.1), 4, lambda t,
        o: O(t).lr_scheduler.LambdaLR(o, lambda e: 0.5 ** e))
_opt("OneCycleLR", lambda t, m: O(t).SGD(m.parameters(), lr=0.1, momentum=0.9), 8, lambda t,
        o: O(t).lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10))
_opt("OneCycleLR_Adam_linear", lambda t, m: O(t).Adam(m.parameters(), lr=0.1), 8, lambda t,
        o: O(t).lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="linear",
                three_phase=True))
def _sched_sd(t):
    m = t.nn.Linear(1, 1)
    o = t.optim.SGD(m.parameters(), lr=0.1)
    s = t.optim.lr_scheduler.StepLR(o, 2)
    o.step(); s.step()
    return {k: v for k, v in s.state_dict().items()}
ITEMS.append(("lr_scheduler.state_dict", _sched_sd))
def _opt_load(t):
    t.manual_seed(0); m = t.nn.Linear(2, 1)
    o = t.optim.Adam(m.parameters(), lr=0.1)
    m(t.ones(1, 2)).sum().backward(); o.step()
    sd = o.state_dict()
    o2 = t.optim.Adam(m.parameters(), lr=0.5); o2.load_state_dict(sd)
    o2.step()
    return {"w": m.weight.detach(), "lr": o2.param_groups[0]["lr"],
            "step": o2.state[m.weight]["step"]}
ITEMS.append(("optim.load_state_dict", _opt_load))
# autograd
def _af(name, call):
    ITEMS.append(("autograd." + name, call))
def _f2(x): return (x ** 3).sum() + (x[0] * x[1])
_af("functional.jacobian",
        lambda t: {"j": t.autograd.functional.jacobian(lambda x: x ** 2 * x.sum(), t.tensor([1.0,
                2.0, 3.0]))})
_af("functional.jacobian_multi", lambda t: {"j": list(t.autograd.functional.jacobian(lambda x,
        y: x * y, (t.tensor([1.0, 2.0]), t.tensor([3.0, 4.0]))))})
_af("functional.hessian", lambda t: {"h": t.autograd.functional.hessian(_f2, t.tensor([1.0, 2.0,
        3.0]))})
_af("functional.vjp", lambda t: {"v": list(t.autograd.functional.vjp(lambda x: x ** 2,
        t.tensor([1.0, 2.0]), t.tensor([1.0, 0.5])))})
_af("functional.jvp", lambda t: {"v": list(t.autograd.functional.jvp(lambda x: x ** 2,
        t.tensor([1.0, 2.0]), t.tensor([1.0, 0.5])))})
_af("functional.hvp", lambda t: {"v": list(t.autograd.functional.hvp(_f2, t.tensor([1.0, 2.0,
        3.0]), t.tensor([1.0, 0.5, 2.0])))})
_af("functional.vhp", lambda t: {"v": list(t.autograd.functional.vhp(_f2, t.tensor([1.0, 2.0,
        3.0]), t.tensor([1.0, 0.5, 2.0])))})
_af("functional.jacobian_vectorize",
        lambda t: {"j": t.autograd.functional.jacobian(lambda x: x.sin(), t.tensor([1.0, 2.0]),
                vectorize=True)})
_af("functional.hessian_create_graph", lambda t: {"h": t.autograd.functional.hessian(_f2,
        t.tensor([1.0, 2.0, 3.0]), create_graph=True).detach()})
def _batched(t):
    x = t.tensor([1.0, 2.0, 3.0], requires_grad=True); y = x ** 2
    (g,) = t.autograd.grad(y, x, t.eye(3), is_grads_batched=True)
    return {"g": g}
_af("is_grads_batched", _batched)
def _sth(t):
    log = []
    def pack(x): log.append(("pack", x.shape)); return x * 1
    def unpack(x): log.append(("unpack", x.shape)); return x
    a = t.tensor([1.0, 2.0], requires_grad=True)
    with t.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (a * a).sin()
    y.sum().backward()
    return {"log": [(k, list(s)) for k, s in log], "g": a.grad}
_af("saved_tensors_hooks", _sth)
def _sth_cpu(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    with t.autograd.graph.save_on_cpu():
        y = (a * a).exp()
    y.sum().backward(); return {"g": a.grad}
_af("save_on_cpu", _sth_cpu)
def _mgh(t):
    a = t.tensor([1.0, 2.0], requires_grad=True); b = t.tensor([3.0], requires_grad=True)
    log = []
    h = t.autograd.graph.register_multi_grad_hook((a, b),
            lambda gs: log.append([None if g is None else g.tolist() for g in gs]))
    (a * 2).sum().backward()
    (a * b).sum().backward()
    h.remove(); (a * b).sum().backward()
    m2 = []
    t.autograd.graph.register_multi_grad_hook((a, b), lambda g: m2.append(g.tolist()), mode="any")
    (a * 3).sum().backward()
    return {"log": log, "any": m2}
_af("register_multi_grad_hook", _mgh)
def _pah(t):
    p = t.tensor([1.0, 2.0], requires_grad=True); log = []
    def hook(param):
        log.append(param.grad.tolist())
        with t.no_grad(): param.add_(-0.1 * param.grad)
        param.grad = None
    p.register_post_accumulate_grad_hook(hook)
    (p * p).sum().backward(); (p * 3).sum().backward()
    return {"log": log, "p": p.detach(), "grad": p.grad}
_af("register_post_accumulate_grad_hook", _pah)
def _inf(t):
    with t.inference_mode():
        x = t.ones(2)
    out = {"is_inf": x.is_inference(), "rg": x.requires_grad}
    w = t.ones(2, requires_grad=True)
    try:
        (x * w).sum().backward(); out["mul"] = "ok"
    except Exception as e: out["mul"] = type(e).__name__ + str(e)[:80]
    try:
        x.requires_grad_(); out["rg_"] = "ok"
    except Exception as e: out["rg_"] = type(e).__name__ + str(e)[:80]
    try:
        with t.no_grad(): pass
        x.add_(1); out["add_"] = "ok"
    except Exception as e: out["add_"] = type(e).__name__ + str(e)[:80]
    y = w * 2
    try:
        with t.inference_mode():
            y.mul_(2)
        out["inplace_in_inf"] = "ok"
    except Exception as e: out["inplace_in_inf"] = type(e).__name__ + str(e)[:80]
    try:
        t.autograd.grad((w * x).sum(), w); out["save"] = "ok"
    except Exception as e: out["save"] = type(e).__name__ + str(e)[:80]
    with t.inference_mode():
        z = w * 2
    try:
        (z * w).sum().backward(); out["save2"] = "ok"
    except Exception as e: out["save2"] = type(e).__name__ + str(e)[:80]
    return out
_af("inference_mode", _inf)
def _sge(t):
    @t.set_grad_enabled(False)
    def f(x): return x * 2
    x = t.ones(2, requires_grad=True)
    before = t.is_grad_enabled()
    y = f(x)
    with t.set_grad_enabled(False):
        z = x * 2
    t.set_grad_enabled(True)
    return {"before": before, "y": y.requires_grad, "after": t.is_grad_enabled(),
            "z": z.requires_grad, "w": (x * 2).requires_grad}
_af("set_grad_enabled decorator", _sge)
def _gg(t):
    x = t.tensor([0.3, 0.7], dtype=t.float64, requires_grad=True)
    return {"gc": t.autograd.gradcheck(lambda x: x.tanh(), (x,)),
            "ggc": t.autograd.gradgradcheck(lambda x: x.sigmoid() * x, (x,))}
_af("gradcheck/gradgradcheck", _gg)
def _so(t):
    names = []
    for f in ["tanh", "sigmoid", "exp", "relu", "softmax", "log_softmax", "sin", "log"]:
        x = t.tensor([0.3, 0.7], dtype=t.float64, requires_grad=True)
        y = getattr(x, f)(0) if "softmax" in f else getattr(x, f)()
        (g,) = t.autograd.grad(y.sum() if f != "relu" else (y * y).sum(), x, create_graph=True)
        names.append(g.grad_fn.name())
    return {"names": names}
_af("second-order names", _so)
# scaffolding
# Tensor.nbytes / itemsize (makemore's MLP lecture): a view counts its own elements
ITEMS.append(("nbytes_itemsize", lambda t: {
    "n": t.arange(18).view(3, 6)[1:].nbytes, "i": t.arange(18).itemsize,
    "f": t.ones(2, 3, dtype=t.float32).t().nbytes, "h": t.zeros(5, dtype=t.float16).itemsize,
    "e": t.zeros(3).expand(4, 3).nbytes, "z": t.tensor(2.5).nbytes}))
ITEMS.append(("cuda.is_available", lambda t: {"c": t.cuda.is_available(),
        "m": t.backends.mps.is_available(), "n": t.cuda.device_count()}))
def _dev(t):
    device = t.device("cuda" if t.cuda.is_available() else "cpu")
    m = t.nn.Linear(2, 2).to(device)
    x = t.ones(2, 2).to(device)
    y = t.ones(2, device=device)
    return {"d": str(device), "type": device.type, "x": str(x.device),
            "m": str(next(m.parameters()).device), "y": str(y.device),
            "cpu": str(x.cpu().device), "todtype": str(x.to(device, t.float64).dtype)}
ITEMS.append(("device/.to(device)", _dev))
def _gen(t):
    g = t.Generator().manual_seed(2147483647)
    C = t.randn((27, 10), generator=g)
    W = t.rand(3, 2, generator=g)
    i = t.randint(0, 27, (5,), generator=g)
    p = t.randperm(6, generator=g)
    m = t.multinomial(t.tensor([0.1, 0.6, 0.3]), 4, replacement=True, generator=g)
    n = t.empty(3).normal_(generator=g)
    u = t.empty(3).uniform_(-1, 1, generator=g)
    return {"C": C[:2], "W": W, "i": i, "p": p, "m": m, "n": n, "u": u, "seed": g.initial_seed()}
ITEMS.append(("Generator + generator=", _gen))
def _seed(t):
    t.manual_seed(42)
    a = t.rand(5); b = t.randn(5); c = t.randint(10, (4,)); d = t.randperm(7)
    e = t.multinomial(t.tensor([0.2, 0.5, 0.3]), 2)
    f = t.empty(4).normal_(1.0, 2.0); g = t.empty(4).uniform_(); h = t.normal(0.0, 1.0, size=(3,))
    k = t.randn(size=(2, 2)); l = t.rand(size=(2,)); ri = t.randint(low=2, high=9, size=(3,))
    bern = t.bernoulli(t.full((5,), 0.5)); ex = t.empty(3).exponential_()
    rnl = t.randn_like(a); rl = t.rand_like(a); ril = t.randint_like(a, 5)
    big = t.randn(20)
    return dict(a=a, b=b, c=c, d=d, e=e, f=f, g=g, h=h, k=k, l=l, ri=ri, bern=bern, ex=ex, rnl=rnl,
            rl=rl, ril=ril, big=big)
ITEMS.append(("manual_seed draws", _seed))
def _seed_dropout(t):
    t.manual_seed(3); m = t.nn.Dropout(0.3)
    return {"y": m(t.ones(20)), "y2": t.nn.functional.dropout(t.ones(3, 5), 0.5)}
ITEMS.append(("dropout masks", _seed_dropout))
def _seed_init(t):
    t.manual_seed(7)
    lin = t.nn.Linear(5, 3); conv = t.nn.Conv2d(2, 3, 3); emb = t.nn.Embedding(4,
            2); c1 = t.nn.Conv1d(2, 2, 2)
    return {"lw": lin.weight, "lb": lin.bias, "cw": conv.weight.flatten()[:5], "cb": conv.bias,
            "e": emb.weight, "c1": c1.weight.flatten()}
ITEMS.append(("nn default inits", _seed_init))
def _seed_large(t):
    t.manual_seed(0)
    return {"r": t.randn(16, 17)[-1], "u": t.rand(100)[-5:], "i": t.randint(0, 1000, (50,))[-5:],
            "p": t.randperm(100)[:10], "m": t.multinomial(t.ones(50), 10), "d": t.rand(3,
                    dtype=t.float64), "h": t.randn(3, dtype=t.float64)}
ITEMS.append(("manual_seed large/dtypes", _seed_large))
def _data(t):
    from importlib import import_module
    du = import_module(t.__name__ + ".utils.data")
    ds = du.TensorDataset(t.arange(10.0).reshape(5, 2), t.arange(5))
    t.manual_seed(0)
    dl = du.DataLoader(ds, batch_size=2, shuffle=True)
    out = [[x.tolist(), y.tolist()] for x, y in dl]
    dl2 = du.DataLoader(ds, batch_size=2, drop_last=True)
    return {"len": len(ds), "item": [v.tolist() for v in ds[1]], "b": out, "n2": len(dl2),
            "n": len(dl)}
ITEMS.append(("TensorDataset/DataLoader", _data))
def _split(t):
    from importlib import import_module
    du = import_module(t.__name__ + ".utils.data")
    ds = du.TensorDataset(t.arange(10.0))
    a, b = du.random_split(ds, [7, 3], generator=t.Generator().manual_seed(1))
    return {"a": list(a.indices), "b": list(b.indices)}
ITEMS.append(("random_split", _split))
# hook errors
def _err(name, body):
    def f(t):
        try:
            body(t); return {"ok": True}
        except Exception as e:
            return {"err": type(e).__name__, "msg": str(e).split("\n")[0]}
    ITEMS.append(("hookerr." + name, f))
def _th_shape(t):
    x = t.ones(3,
            requires_grad=True); y = x * 2; y.register_hook(lambda g: g[:2]); y.sum().backward()
_err("tensor hook wrong shape", _th_shape)
def _th_dtype(t):
    x = t.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.double())
    y.sum().backward()
_err("tensor hook wrong dtype", _th_dtype)
def _th_leaf(t):
    x = t.ones(3, requires_grad=True); x.register_hook(lambda g: g[:1]); (x * 2).sum().backward()
_err("leaf hook wrong shape", _th_leaf)
def _nh_count(t):
    x = t.ones(3, requires_grad=True); y = x * 2; y.grad_fn.register_hook(lambda gi, go: (gi[0],
            gi[0])); y.sum().backward()
_err("node hook wrong count", _nh_count)
def _nh_shape(t):
    x = t.ones(3, requires_grad=True); y = x * 2; y.grad_fn.register_hook(lambda gi,
            go: (gi[0][:1],)); y.sum().backward()
_err("node hook wrong shape", _nh_shape)
def _nph_count(t):
    x = t.ones(3, requires_grad=True); y = x * 2; y.grad_fn.register_prehook(lambda go: (go[0],
            go[0])); y.sum().backward()
_err("node prehook wrong count", _nph_count)
def _mbh(t):
    m = t.nn.Linear(3, 2); m.register_full_backward_hook(lambda mod, gi, go: (gi[0][:1],))
    m(t.ones(2, 3, requires_grad=True)).sum().backward()
_err("module backward hook wrong shape", _mbh)
def _grad_assign_shape(t):
    x = t.ones(3, requires_grad=True); x.grad = t.ones(2)
_err("grad assign wrong shape", _grad_assign_shape)
def _grad_assign_dtype(t):
    x = t.ones(3, requires_grad=True); x.grad = t.ones(3, dtype=t.float64)
_err("grad assign wrong dtype", _grad_assign_dtype)
def _grad_assign_int(t):
    x = t.ones(3, requires_grad=True); x.grad = t.ones(3, dtype=t.int64)
_err("grad assign int", _grad_assign_int)
def _grad_assign_nontensor(t):
    x = t.ones(3, requires_grad=True); x.grad = [1.0, 2.0, 3.0]
_err("grad assign list", _grad_assign_nontensor)
def _th_none(t):
    x = t.ones(3,
            requires_grad=True); y = x * 2; y.register_hook(lambda g: None); y.sum().backward()
    return x.grad
_err("tensor hook returns None", _th_none)
def _th_nont(t):
    x = t.ones(3,
            requires_grad=True); y = x * 2; y.register_hook(lambda g: 3.0); y.sum().backward()
_err("tensor hook returns float", _th_nont)
