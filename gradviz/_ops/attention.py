"""Attention: scaled_dot_product_attention as torch 2.13 records it on CPU. For 4-D inputs
with equal head sizes and a mask that needs no gradient, one
ScaledDotProductFlashAttentionForCpuBackward0 node saving the output and the row
log-sum-exp; otherwise (3-D inputs, a mask that requires grad, ...) torch's math path,
composed from ops: both factors scaled by sqrt(scale), matmul, the mask added in place,
_safe_softmax (SafeSoftmaxBackward0), matmul. Dropout is not drawn (it raises).
"""

import math

import numpy as np

from .. import _scratch
from .._derivatives import DERIVATIVES as D
from .._creation import _laid_like
from .._dmath import causal_fill
from .._registry import records
from .._tensor import Tensor, _make
from ..autograd.formula import record, record_outputs
from ._common import _TORCH_SCALAR, _needs
from .arithmetic import mul_scalar
from .inplace import add_
from .linalg import matmul
from .views import transpose

_NOT_YET = ("gradviz: torch.nn.functional.scaled_dot_product_attention({}) is not implemented "
            "by gradviz's core; run with --backend torch to use PyTorch")


def _softmax_rows(s):
    """softmax over the last dim and its log-sum-exp; a row masked out entirely gives zeros
    (torch's safe softmax) and a log-sum-exp of 0. `s` is a temporary: it may be overwritten."""
    m = np.maximum.reduce(s, axis=-1, keepdims=True)
    finite = np.isfinite(m)
    if finite.all():
        # No row masked out entirely (always so under is_causal): the same arithmetic in
        # place, without the selections below.
        e = np.exp(np.subtract(s, m, out=s), out=s)
        total = np.add.reduce(e, axis=-1, keepdims=True)
        p = np.divide(e, total, out=e)
        lse = np.add(np.log(total), m, out=total)[..., 0]
        return p.astype(s.dtype, copy=False), lse.astype(s.dtype, copy=False)
    m = np.where(finite, m, 0)
    e = np.exp(s - m)
    total = np.sum(e, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(finite, e / total, 0)
        # torch's kernel reports 0 for a fully masked row
        lse = np.where(finite, np.log(total) + m, 0)[..., 0]
    return p.astype(s.dtype, copy=False), lse.astype(s.dtype, copy=False)


@records("scaled_dot_product_flash_attention_for_cpu")
def _flash_attention(query, key, value, dropout_p, is_causal, attn_mask=None, scale=None):
    q, k, v = query._data, key._data, value._data
    sc = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    # the (L, S) scores in an array kept from the last call (gradviz._scratch)
    sbuf = _scratch.take(q.shape[:-1] + k.shape[-2:-1], q.dtype)
    s = np.matmul(q, k.swapaxes(-2, -1), out=sbuf)
    s *= q.dtype.type(sc)
    mask = None
    if attn_mask is not None:
        m = attn_mask._data
        if m.dtype == np.bool_:
            # torch turns a boolean mask into an additive one (0 / -inf) of the query's dtype.
            m = np.where(m, 0, -np.inf).astype(q.dtype)
        elif m.dtype != q.dtype:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                               f"dtype, but got attn_mask.dtype: {_TORCH_SCALAR[m.dtype.name]} "
                               f"and  query.dtype: {_TORCH_SCALAR[q.dtype.name]} instead.")
        mask = _make(m)
        s = s + m
    if is_causal:
        s = causal_fill(s)
    p, lse = _softmax_rows(s)
    # torch's kernel lays its output out like the query (empty_like): for heads split from a
    # (batch, tokens, heads * E) projection, out.transpose(1, 2).reshape(...) is then a view
    # (ViewBackward0, as in torch), not a copy (CloneBackward0 and UnsafeViewBackward0).
    out = _make(np.matmul(p, v, out=_laid_like(query, np.empty(q.size, dtype=p.dtype))))
    del s, p
    _scratch.give_back(sbuf)
    if _needs(query, key, value):
        record(D["scaled_dot_product_flash_attention_for_cpu"], out, (query, key, value),
               (query, key, value, _make(lse), float(dropout_p), is_causal, mask, scale))
    return out


@records("scaled_dot_product_flash_attention_for_cpu_backward")
def flash_attention_backward(tensors, results):
    """The gradients of the attention kernel under create_graph=True: torch records them as
    the outputs of one node without a derivative (NotImplemented, failing if differentiated),
    whose edges are those of `tensors` (grad_out, query, key, value, output) that require
    grad."""
    outs = [_make(r) for r in results]
    needed = [t for t in tensors if t is not None and t._rg]
    if _needs(*needed):
        record_outputs(D["scaled_dot_product_flash_attention_for_cpu_backward"], outs, needed)
    return outs


@records("safe_softmax")
def _safe_softmax(self, dim):
    """softmax over dim, with zeros for a row that is -inf throughout (SafeSoftmaxBackward0)."""
    a = self._data
    m = np.max(a, axis=dim, keepdims=True)
    finite = np.isfinite(m)
    e = np.exp(a - np.where(finite, m, 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(finite, e / np.sum(e, axis=dim, keepdims=True), 0).astype(a.dtype)
    out = _make(r)
    if _needs(self):
        record(D["safe_softmax"], out, (self,), (dim,))
    return out


def _additive_mask(mask, dtype):
    """torch's convert_boolean_attn_mask: True keeps (0), False masks (-inf)."""
    if mask._data.dtype == np.bool_:
        return _make(np.where(mask._data, 0, -np.inf).astype(dtype))
    return mask


def _math_attention(query, key, value, attn_mask, is_causal, scale):
    """torch's _scaled_dot_product_attention_math, op by op."""
    e = query.shape[-1]
    factor = math.sqrt(scale if scale is not None else 1.0 / math.sqrt(e))
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        n, s = query.shape[-2], key.shape[-2]
        attn_mask = _make(np.tri(n, s, dtype=bool))
    if attn_mask is not None:
        attn_mask = _additive_mask(attn_mask, query._data.dtype)
    attn = matmul(mul_scalar(query, factor), mul_scalar(transpose(key, -2, -1), factor))
    if attn_mask is not None:
        attn = add_(attn, attn_mask)
    return matmul(_safe_softmax(attn, -1), value)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query @ key^T * scale + attn_mask) @ value, as torch 2.13 computes it on CPU.

    >>> import gradviz as torch
    >>> q = torch.ones(1, 1, 2, 4, requires_grad=True)
    >>> torch.nn.functional.scaled_dot_product_attention(q, q, q).grad_fn
    <ScaledDotProductFlashAttentionForCpuBackward0 ...>
    """
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' (position "
                            f"{('query', 'key', 'value').index(name) + 1}) must be Tensor, not "
                            f"{type(t).__name__}")
    dt = (query._data.dtype, key._data.dtype, value._data.dtype)
    if len(set(dt)) != 1:
        n = [_TORCH_SCALAR[d.name].lower() for d in dt]
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {n[0]} key.dtype: {n[1]} and value.dtype: {n[2]} "
                           f"instead.")
    if enable_gqa:
        raise NotImplementedError(_NOT_YET.format("enable_gqa=True"))
    if dropout_p:
        raise NotImplementedError(_NOT_YET.format("dropout_p=...") + " (gradviz's core does "
                                  "not draw dropout masks from torch's generator)")
    if attn_mask is not None and attn_mask._data.dtype not in (np.bool_, query._data.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: "
                           f"{_TORCH_SCALAR[attn_mask._data.dtype.name]} and  query.dtype: "
                           f"{_TORCH_SCALAR[query._data.dtype.name]} instead.")
    # torch's conditions for its CPU kernel; otherwise it composes the attention from ops.
    q, k, v = query.shape, key.shape, value.shape
    flash = (query.dim() == key.dim() == value.dim() == 4
             and q[-1] == k[-1] == v[-1] and q[:2] == k[:2] == v[:2] and q[-2] and k[-2]
             and (attn_mask is None or not attn_mask._rg)
             and all(t._array().strides[-1] == t._array().itemsize or t.shape[-1] == 1
                     for t in (query, key, value)))
    if not flash:
        return _math_attention(query, key, value, attn_mask, is_causal, scale)
    return _flash_attention(query, key, value, dropout_p, is_causal, attn_mask, scale)
