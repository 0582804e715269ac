"""Backward functions that are themselves ops: the nodes of a double-backward graph.

Under create_graph=True, torch computes the gradient of tanh, sigmoid, relu, softmax,
log_softmax, select, slice, diagonal, embedding and masked_scatter with one op each (tanh_backward, ...), which records its own node
(TanhBackwardBackward0, ...). The derivative formulas call these through gradviz._dmath when
they run on Tensors; on a plain backward the formulas use NumPy directly. None of them is a
public torch name.
"""

import numpy as np

from .._derivatives import DERIVATIVES as D, embedding_grad, masked_scatter_source_grad
from .._dmath import mask, tanh_grad_array
from .._registry import records
from .._tensor import _make
from ..autograd.formula import record
from ._common import _needs
from .. import _f32


@records("tanh_backward")
def tanh_backward(grad_output, output):
    g, y = grad_output._data, output._data
    out = _make(np.asarray(tanh_grad_array(g, y)))
    if _needs(grad_output, output):
        record(D["tanh_backward"], out, (grad_output, output), (grad_output, output))
    return out


@records("sigmoid_backward")
def sigmoid_backward(grad_output, output):
    g, y = grad_output._data, output._data
    out = _make(np.asarray(g * (1 - y) * y))     # torch's kernel's order
    if _needs(grad_output, output):
        record(D["sigmoid_backward"], out, (grad_output, output), (grad_output, output))
    return out


@records("threshold_backward")
def threshold_backward(grad_output, self, threshold):
    g = grad_output._data
    out = _make(np.asarray(mask(~(self._data <= threshold), g)))     # a select, as torch
    if _needs(grad_output, self):
        record(D["threshold_backward"], out, (grad_output, self), (self, threshold))
    return out


@records("_softmax_backward_data")
def softmax_backward_data(grad_output, output, dim):
    g, y = grad_output._data, output._data
    out = _make(np.asarray(y * (g - np.sum(g * y, axis=dim, keepdims=True))))
    if _needs(grad_output, output):
        record(D["_softmax_backward_data"], out, (grad_output, output),
               (dim, grad_output, output))
    return out


@records("_log_softmax_backward_data")
def log_softmax_backward_data(grad_output, output, dim):
    g, y = grad_output._data, output._data
    if _f32.TORCH_BITS and _f32.lastdim_float32(g, y, dim):
        out = _make(_f32.log_softmax_backward_lastdim(g, y))  # torch's kernel, bit for bit
    else:
        out = _make(np.asarray(g - np.exp(y) * np.sum(g, axis=dim, keepdims=True)))
    if _needs(grad_output, output):
        record(D["_log_softmax_backward_data"], out, (grad_output, output),
               (dim, grad_output, output))
    return out


def _put(g, input_sizes, key):
    out = np.zeros(tuple(input_sizes), dtype=np.result_type(g))
    out[key] = g
    return out


@records("select_backward")
def select_backward(grad_output, input_sizes, dim, index, key):
    out = _make(_put(grad_output._data, input_sizes, key))
    if _needs(grad_output):
        record(D["select_backward"], out, (grad_output,), (dim, index, key))
    return out


@records("slice_backward")
def slice_backward(grad_output, input_sizes, dim, start, end, step, key):
    out = _make(_put(grad_output._data, input_sizes, key))
    if _needs(grad_output):
        record(D["slice_backward"], out, (grad_output,), (dim, start, end, step, key))
    return out


@records("diagonal_backward")
def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2, key):
    out = _make(_put(grad_output._data, input_sizes, key))
    if _needs(grad_output):
        record(D["diagonal_backward"], out, (grad_output,), (offset, dim1, dim2))
    return out


@records("embedding_dense_backward")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    out = _make(embedding_grad(grad_output._data, num_weights, indices, padding_idx,
                               scale_grad_by_freq, False))
    if _needs(grad_output):
        record(D["embedding_dense_backward"], out, (grad_output,), (indices, padding_idx))
    return out


@records("masked_scatter_backward")
def masked_scatter_backward(grad_output, mask, sizes):
    out = _make(masked_scatter_source_grad(grad_output._data, mask, sizes))
    if _needs(grad_output):
        record(D["masked_scatter_backward"], out, (grad_output,), (mask, grad_output.shape))
    return out


@records("mse_loss_backward")
def mse_loss_backward(grad_output, self, target, reduction):
    d = self._data - target._data
    r = 2 * d * grad_output._data
    if reduction == 1:          # torch's Reduction::Mean
        r = r / d.size
    out = _make(np.asarray(r))
    if _needs(grad_output, self, target):
        record(D["mse_loss_backward"], out, (grad_output, self, target),
               (grad_output, self, target, reduction))
    return out
