"""torch.linalg.svd, torch.linalg.svdvals and torch.svd against torch 2.13: singular values,
shapes, the LinalgSvdBackward0 node and the gradient through S; U and V reconstruct A (their
signs may differ from torch's, with a warning); a gradient through U or Vh is refused."""

import numpy as np
import pytest

import gradviz


def _s_and_grad(t, shape, fn):
    t.manual_seed(0)
    A = t.randn(*shape, requires_grad=True)
    S = fn(t, A)
    (S * t.arange(1.0, S.shape[-1] + 1)).sum().backward()
    return S.detach().numpy(), S.grad_fn.name(), A.grad.numpy()


SHAPES = [(3, 2), (2, 3), (4, 4), (2, 3, 2)]
WAYS = {
    "svdvals": lambda t, A: t.linalg.svdvals(A),
    "svd_S": lambda t, A: t.linalg.svd(A).S,
    "svd_reduced_S": lambda t, A: t.linalg.svd(A, full_matrices=False)[1],
    "torch_svd_S": lambda t, A: t.svd(A).S,
    "method_svd_S": lambda t, A: A.svd(some=False)[1],
}


@pytest.mark.filterwarnings("ignore:gradviz. the singular vectors")
@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_singular_values_and_their_gradient_match_torch(shape, way):
    real = pytest.importorskip("torch")
    ours, theirs = _s_and_grad(gradviz, shape, WAYS[way]), _s_and_grad(real, shape, WAYS[way])
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore:gradviz. the singular vectors")
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_factors_have_torchs_shapes_and_reconstruct(shape, full):
    real = pytest.importorskip("torch")
    A = gradviz.randn(*shape)
    ours = gradviz.linalg.svd(A, full_matrices=full)
    theirs = real.linalg.svd(real.from_numpy(A.numpy()), full_matrices=full)
    assert [tuple(x.shape) for x in ours] == [tuple(x.shape) for x in theirs]
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_svd"
    k = ours.S.shape[-1]
    U, Vh = ours.U.numpy()[..., :k], ours.Vh.numpy()[..., :k, :]
    np.testing.assert_allclose((U * ours.S.numpy()[..., None, :]) @ Vh, A.numpy(), atol=1e-5)
    u, s, v = gradviz.svd(A, some=not full)
    assert tuple(v.shape) == tuple(real.svd(real.from_numpy(A.numpy()), some=not full).V.shape)


def test_compute_uv_false_gives_zero_factors_as_torch():
    real = pytest.importorskip("torch")
    ours = gradviz.svd(gradviz.ones(2, 3), compute_uv=False)
    theirs = real.svd(real.ones(2, 3), compute_uv=False)
    assert [tuple(x.shape) for x in ours] == [tuple(x.shape) for x in theirs]
    assert float(ours.U.abs().sum()) == float(ours.V.abs().sum()) == 0.0


def test_singular_vectors_warn_that_their_signs_may_differ():
    with pytest.warns(UserWarning, match="may differ in sign from PyTorch's"):
        gradviz._ops.decompositions._WARNED.clear()
        gradviz.linalg.svd(gradviz.eye(2))


@pytest.mark.filterwarnings("ignore:gradviz. the singular vectors")
def test_gradient_through_u_is_refused():
    A = gradviz.randn(3, 2, requires_grad=True)
    U, S, Vh = gradviz.linalg.svd(A, full_matrices=False)
    with pytest.raises(NotImplementedError, match=r"through U or Vh is not implemented by "
                                                  r"gradviz's core.*--backend torch"):
        (U.sum() + S.sum()).backward()


@pytest.mark.parametrize("bad, message", [
    (lambda t: t.linalg.svd(t.ones(3)), "must have at least 2 dimensions"),
    (lambda t: t.linalg.svdvals(t.ones(2, 2, dtype=t.long)), "Expected a floating point"),
])
def test_errors_match_torch(bad, message):
    real = pytest.importorskip("torch")
    for t in (gradviz, real):
        with pytest.raises(RuntimeError, match=message):
            bad(t)


def test_a_second_derivative_through_s_says_why_it_is_refused():
    # it differentiates the first one, which reads U and Vh: the message says so rather than
    # leaving a learner who used only S wondering where U came in
    A = gradviz.randn(4, 3, dtype=gradviz.float64, requires_grad=True)
    (g,) = gradviz.autograd.grad(gradviz.linalg.svdvals(A).sum(), A, create_graph=True)
    with pytest.raises(NotImplementedError, match=r"only a first derivative through S, as "
                                                  r"svdvals: a second one goes through U and Vh"):
        g.sum().backward()
