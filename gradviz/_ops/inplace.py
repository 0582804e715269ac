"""In-place ops: the leaf and view checks, writing into storage, version bumps, and the rewrite of
a view's base history (CopySlices).
"""

import numbers

import numpy as np

from .. import _dtype
from .._derivatives import DERIVATIVES as D
from .._registry import method, records
from .._tensor import Tensor, _InferenceVersion, check_inference_inplace
from .._fperr import quietly, quietly_into
from ..autograd import tracing as _tracing
from ..autograd.formula import record
from ..autograd.graph import (WRITE_OVERLAP, CopySlices, edge_of, internal_overlap, overlaps,
                              short_name, writable_view)
from ..autograd.grad_mode import _state, no_grad
from ._common import (_F16, _TORCH_SCALAR, _as_tensor, _broadcast_error,
                      _half_opmath, _needs, _operand, _stored, _type_name, _wrap_int)
from .arithmetic import (_E_ADD, _E_DIV, _E_MUL, _E_SUB, _power, _scaled, floor_divide,
                         remainder)
from .comparison import and_, bitwise_not, lshift, or_, rshift, xor
from .pointwise import _np_relu, _np_sigmoid
from .strided import storage_offset


# ----- In-place ----------------------------------------------------------------------------

def view_steps(view):
    """The view's steps from its root, to replay on the root's data now; refused when the root
    took a new shape in place after views of it were made (see _restride)."""
    edit = getattr(view._vc, "views", True)
    if edit is not True:
        raise NotImplementedError(
            f"gradviz's core does not implement an in-place edit or a gradient through a view "
            f"of a tensor that was then changed by {edit}() (the view would read its new "
            f"shape); run with --backend torch to use PyTorch")
    return view._view_fn


_CREATION_TAIL = {
    "multi": "This view is the output of a function that returns multiple views. Such functions "
             "do not allow the output views to be modified inplace. You should replace the "
             "inplace operation by an out-of-place one.",
    "no_grad": "Given that this use case is ambiguous and error-prone, it is forbidden. You can "
               "clarify your code by moving both the view and the inplace either both inside "
               "the no_grad block (if you don't want the inplace to be tracked) or both outside "
               "(if you want the inplace to be tracked).",
    "inference": "Given that this use case is ambiguous and error-prone, it is forbidden. You "
                 "can clarify your code by moving both the view and the inplace either both "
                 "inside the inference_mode block (if you don't want the inplace to be tracked) "
                 "or both outside (if you want the inplace to be tracked).",
}


def _view_error(t, indirect):
    """torch's handle_view_on_rebase error for the view t whose creation (views._set_creation)
    forbids in-place edits: t edited (indirect False), or used after its base or another view
    of it was edited."""
    what = "its base or another view of its base has been" if indirect else "is being"
    creation, fn = t._creation, t._fn
    if creation != "multi" or fn is None:
        # torch: no grad_fn means the view was made in no_grad mode, whatever its creation
        prefix = ("A view was created in" if fn is None else
                  f"Output {t._nr} of {short_name(fn)} is a view of a view which was created in")
        if creation == "inference":
            msg = f"{prefix} inference mode and {what} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        msg = f"Output {t._nr} of {short_name(fn)} is a view and {what} modified inplace."
    return RuntimeError(f"{msg} {_CREATION_TAIL[creation]}")


def refresh_view(t):
    """A view used after its base, or another view of it, was edited in place (its grad_fn
    read, or used by an op or backward): its grad_fn becomes AsStridedBackward0 over the
    base's history now, as torch regenerates it (else its gradient would skip the edit); a
    view whose creation forbids it (views._set_creation) raises torch's error instead."""
    base = t._base_
    if t._fn is None and not base._rg:
        return                          # torch: nothing to regenerate, nothing to refuse
    if t._creation is not None:
        raise _view_error(t, True)
    if t._fn_ver is None and t._fn is not None:
        t._fn_ver = t._vc.v             # a grad_fn set elsewhere (a custom Function's output)
        return
    if base._rg:
        # (a view made before its base required grad, too: torch regenerates it the same way)
        reread_from_base(base, t)       # (record sets _fn_ver)
    else:
        t._fn_ver = t._vc.v


def _check_inplace(self, *others):
    """torch's check_inplace, before an in-place edit of self (others: the op's other
    operands): when grad mode is on and self or another operand requires grad, a view whose
    creation forbids in-place edits, a view of a leaf that requires grad, or such a leaf, is
    refused."""
    if type(self._vc) is _InferenceVersion:
        check_inference_inplace(self)
    if not _state.enabled:
        return
    base = self._base_
    # torch: a view requires grad when its base does, even one made in no_grad mode
    grad = self._rg or (base is not None and base._rg)
    if not grad:
        for o in others:        # (a loop, not any() over a generator: every in-place op passes)
            if isinstance(o, Tensor) and o._rg:
                break
        else:
            return
    msg = None
    if base is not None:
        if self._creation is not None:
            msg = str(_view_error(self, False))
        elif grad and base._fn is None:
            msg = ("a view of a leaf Variable that requires grad is being used in an "
                   "in-place operation.")
    elif self._rg and self._fn is None:
        msg = "a leaf Variable that requires grad is being used in an in-place operation."
    if msg is not None:
        if _tracing.active is not None:
            _tracing.active.refused(self, msg)
        raise RuntimeError(msg)


def _write(self, new, uniform=False):
    """Store new values into self's storage (visible through every view). `uniform`: every
    element gets the same value, so a view that overlaps itself may be written (torch's fill_
    and zero_ skip its overlap check)."""
    d = self._data
    if uniform and type(d) is np.ndarray and not d.flags.writeable and self._base_ is not None:
        d = writable_view(d, self._base_._array(), overlapping=True)
    if type(d) is np.ndarray:
        if not d.flags.writeable and not overlaps(d.shape, d.strides) and internal_overlap(
                d.shape, d.strides, d.itemsize):
            # torch writes such a view element by element (its overlap check gives up), so a
            # later element sees an earlier one's write: one NumPy pass cannot follow that
            raise NotImplementedError(
                "gradviz: an in-place operation on a view whose elements overlap in memory "
                "(unfold or as_strided windows that share elements) is not implemented by "
                "gradviz's core; clone() the view first, or run with --backend torch to use "
                "PyTorch")
        if not d.flags.writeable:
            raise RuntimeError(WRITE_OVERLAP)
        _check_cast(np.result_type(new), d.dtype)
        try:
            np.copyto(d, new, casting="unsafe")
        except ValueError as exc:
            raise _write_error(d, new, exc) from None
    else:
        self._data = np.asarray(new, dtype=d.dtype).reshape(np.shape(d))[()]


def _check_cast(rt, dt, of_tensors=False):
    """torch's canCast of a result dtype rt into self's dtype dt: no float into an integer or
    bool, no integer into a bool. torch names a float result Float (a Python number's), or
    its own dtype when rt is the promotion of tensors' dtypes (of_tensors)."""
    if (rt.kind == "f" and dt.kind in "iub") or (rt.kind in "iu" and dt.kind == "b"):
        name = "Float" if rt.kind == "f" and not of_tensors else _TORCH_SCALAR[rt.name]
        raise RuntimeError(f"result type {name} can't be cast to the desired output type "
                           f"{_TORCH_SCALAR[dt.name]}")


def _write_error(d, new, exc):
    """torch's message when `new` cannot be written into an output of d's shape."""
    err = _broadcast_error(d, new, exc)
    if err is not exc:
        return err
    try:
        full = np.broadcast_shapes(d.shape, np.shape(new))
    except ValueError:
        return exc
    return RuntimeError(f"output with shape [{', '.join(map(str, d.shape))}] doesn't match the "
                        f"broadcast shape [{', '.join(map(str, full))}]")


def bump_version(self, op):
    """Count one in-place edit (shared with views) and tell the inspector, if one listens."""
    vc = self._vc
    if vc is None:
        vc = self._version_counter()
    vc.v += 1
    trace = _tracing.active
    if trace is not None:
        trace.inplace(self, op)


def _commit(self, entry, inputs, args, op):
    """After writing into self: bump the version and, if needed, rewrite self's history."""
    bump_version(self, op)
    if not _needs(*inputs):
        return
    base = self._base_
    if base is None:
        record(entry, self, inputs, args)
        return
    # In-place through a view: the base's grad_fn becomes CopySlices over the op's node, and
    # the view reads its gradient from the base again (AsStridedBackward0), as in torch.
    base_edge = edge_of(base)
    fn = record(entry, self, inputs, args)
    cs = CopySlices(base_edge, view_steps(self), fn)
    if base._retains and base._fn is not None:
        base._fn._move_retain(base._nr, base, cs, 0)
    base._rg, base._fn, base._nr = True, cs, 0
    reread_from_base(base, self)
    if fn._plan.saves_result:
        fn._res_edge = (self._fn, self._nr)     # its saved result: the edited view's history


@records("as_strided")
def reread_from_base(self, view):
    """After an in-place edit through `view`, the view reads its gradient back from its base
    `self` (AsStridedBackward0 over the base's CopySlices), as torch's rebase_history does."""
    record(D["as_strided"], view, (self,), (tuple(view._data.shape), view.stride(),
                                            storage_offset(view), self.shape, view_steps(view)))


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _inplace_binary(self, other, entry, ufunc, op, saves_self=False, alpha=1):
    if not _state.enabled and alpha == 1 and isinstance(other, Tensor):
        # In no_grad, a float tensor edited by a tensor of its dtype (an update such as
        # `p -= lr * p.grad`): what the path below does then, without its steps that grad
        # mode or another dtype would need (_check_inplace and _commit return at once in
        # no_grad). Anything else, a refusal included, takes the path below.
        d = self._data
        b = other._data
        dt = d.dtype
        if (type(d) is np.ndarray and b.dtype is dt and (dt is _F32 or dt is _F64)
                and type(self._vc) is not _InferenceVersion and d.flags.writeable):
            try:
                quietly_into(ufunc, d, b, d)
            except (TypeError, ValueError):
                pass
            else:
                vc = self._vc       # bump_version, inline
                if vc is None:
                    vc = self._version_counter()
                vc.v += 1
                if _tracing.active is not None:
                    _tracing.active.inplace(self, op)
                return self
    try:
        b, ot = _operand(other)
    except TypeError:
        return NotImplemented       # `t += ndarray`: Python falls back to t = t + ndarray
    _check_inplace(self, ot)
    if alpha != 1:
        b = _scaled(self._data, b, alpha)       # alpha checked and applied as the out-of-place op
    if type(b) is int and self._data.dtype.kind in "iu":
        b = _wrap_int(b, self._data.dtype)      # torch's cast (uint8 += -3 adds 253)
    orig = self.clone() if (saves_self and ot is not None and ot._rg) else self
    d = self._data
    done = False
    # float16 mul_ and div_ by one number compute in float32, as the out-of-place ops
    half = (entry is _E_MUL or entry is _E_DIV) and d.dtype is _F16
    if type(d) is np.ndarray and d.flags.writeable and not half:
        # Straight into the storage (one pass, no temporary): what `p -= lr * g` costs in NumPy.
        try:
            # out=d passed positionally: no keywords to parse (casting is same_kind already)
            quietly(ufunc, d, b, d)
            done = True
        except (TypeError, ValueError):
            pass        # a promotion or shape torch refuses: the path below says why
    if not done:
        if ot is not None:
            # torch names the tensors' result dtype (Double, Half) in its cast error
            _check_cast(_dtype.result_type((d, ot._data)), d.dtype, of_tensors=True)
        try:
            new = quietly(ufunc, d, b) if not half else _half_opmath(ufunc, d, b, ot)
        except ValueError as exc:
            raise _broadcast_error(self._data, b, exc) from None
        _write(self, new)
    if entry is _E_MUL or entry is _E_DIV:
        args = (orig, other)
    else:
        args = (alpha,)
    _commit(self, entry, (self, ot), args, op)
    return self


@method("add_")
@records("add")
def add_(self, other, alpha=1):
    return _inplace_binary(self, other, _E_ADD, np.add, "add_", False, alpha)


@method("sub_")
@records("sub")
def sub_(self, other, alpha=1):
    return _inplace_binary(self, other, _E_SUB, np.subtract, "sub_", False, alpha)


@method("mul_")
@records("mul")
def mul_(self, other):
    return _inplace_binary(self, other, _E_MUL, np.multiply, "mul_", saves_self=True)


@method("div_")
@records("div")
def div_(self, other):
    return _inplace_binary(self, other, _E_DIV, np.true_divide, "div_", saves_self=True)


@method("pow_")
@records("pow", "pow_tensor")
def pow_(self, exponent):
    _check_inplace(self, exponent)
    if isinstance(exponent, Tensor):
        # PowBackward1, saving self as it was before the edit.
        orig = self.clone() if _needs(self, exponent) else self
        with np.errstate(divide="ignore", invalid="ignore"):
            try:
                new = _power(self._data, exponent._data)
            except ValueError as exc:
                raise _broadcast_error(self._data, exponent._data, exc) from None
        _write(self, new)
        _commit(self, D["pow_tensor"], (self, exponent), (orig, exponent), "pow_")
        return self
    try:
        e = _operand(exponent)[0]
    except TypeError:
        return NotImplemented
    orig = self.clone() if _needs(self) else self
    with np.errstate(divide="ignore", invalid="ignore"):
        _write(self, _power(self._data, e))
    _commit(self, D["pow"], (self,), (orig, exponent), "pow_")
    return self


def _inplace_unary(self, entry, ufunc, op, saves_self=False):
    _check_inplace(self)
    orig = self.clone() if (saves_self and _needs(self)) else self
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        _write(self, ufunc(self._data))
    _commit(self, entry, (self,), (orig,), op)
    return self


def inplace_unary(row, ufunc, *aliases, saves_self=False, check=None):
    """Tensor.<row>_ (and its aliases): ufunc written into self, recorded as `row`'s node
    (self saved first when the row's formula reads it); check(self, row), if given, runs
    first (torch's refusals)."""
    entry, name = D[row], row + "_"

    def op(self):
        if check is not None:
            check(self, row)
        return _inplace_unary(self, entry, ufunc, name, saves_self)

    op.__name__ = op.__qualname__ = name
    return method(name, *aliases)(records(row)(op))


exp_ = inplace_unary("exp", np.exp)
log_ = inplace_unary("log", np.log, saves_self=True)
sqrt_ = inplace_unary("sqrt", np.sqrt)
tanh_ = inplace_unary("tanh", np.tanh)
sigmoid_ = inplace_unary("sigmoid", _np_sigmoid)
relu_ = inplace_unary("relu", _np_relu)
neg_ = inplace_unary("neg", np.negative)


@method("zero_")
@records("zero_")
def zero_(self):
    _check_inplace(self)
    _write(self, np.zeros_like(self._data), uniform=True)
    _commit(self, D["zero_"], (self,), (), "zero_")
    return self


@method("fill_")
@records("fill_", "fill_tensor_")
def fill_(self, value):
    return _fill(self, value, "fill_")


def _fill(self, value, op):
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._data.ndim} dimensions.")
    _check_inplace(self, value)
    v, vt = _operand(value)
    _write(self, np.full_like(self._data, _stored(v, self._data.dtype)), uniform=True)
    if vt is not None:
        _commit(self, D["fill_tensor_"], (self, vt), (), op)
    else:
        _commit(self, D["fill_"], (self,), (), op)
    return self


@method("copy_")
@records("copy_")
def copy_(self, src, non_blocking=False):
    # torch's parser takes a Tensor or a number, never a sequence or an array
    if not isinstance(src, (Tensor, numbers.Number)):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{_type_name(src)}")
    return _copy(self, src, "copy_")


def _copy(self, src, op):
    _check_inplace(self, src)
    s = _as_tensor(src, self)
    _write(self, s._data)
    _commit(self, D["copy_"], (self, s), (s.shape,), op)
    return self


# ----- In-place forms of out-of-place ops --------------------------------------------------

def _inplace_from(self, other, op, values, row=None, saves_operands=False):
    """self.<op>(other): values(self, other), the out-of-place op (torch's result dtype and
    errors), written into self, recorded as `row` (`<row>_scalar` for a number other) saving
    self as it was before the edit and other when saves_operands; no row: never recorded."""
    try:
        b, ot = _operand(other)
    except TypeError:
        return NotImplemented
    _check_inplace(self, ot)
    _check_cast(_dtype.result_type((self._data, b)), self._data.dtype)    # before the kernel
    orig = self.clone() if saves_operands and _needs(self, ot) else self
    with no_grad():
        new = values(self, other)
    _write(self, new._data)
    if row is None:
        bump_version(self, op)
    elif ot is None:
        _commit(self, D[row + "_scalar"], (self,), (), op)
    elif row == "floor_divide_inplace" and not (self._rg and ot._rg):
        # torch's NotImplemented node has an edge only for the tensor that requires grad
        _commit(self, D[row + "_scalar"], (self if self._rg else ot,), (), op)
    else:
        _commit(self, D[row], (self, ot), (orig, ot) if saves_operands else (), op)
    return self


def _inplace_method(name, values, row=None, saves_operands=False):
    """Tensor.<name>(other) through _inplace_from."""
    def op(self, other):
        return _inplace_from(self, other, name, values, row, saves_operands)

    op.__name__ = op.__qualname__ = name
    if row is not None:
        op = records(row, row + "_scalar")(op)
    return method(name)(op)


floor_divide_ = _inplace_method("floor_divide_", floor_divide, "floor_divide_inplace")
remainder_ = _inplace_method("remainder_", remainder, "remainder", saves_operands=True)
bitwise_and_ = _inplace_method("bitwise_and_", and_)
bitwise_or_ = _inplace_method("bitwise_or_", or_)
bitwise_xor_ = _inplace_method("bitwise_xor_", xor)
bitwise_left_shift_ = _inplace_method("bitwise_left_shift_", lshift)
bitwise_right_shift_ = _inplace_method("bitwise_right_shift_", rshift)


@method()
def bitwise_not_(self):
    """self = ~self (integer or bool tensors; torch's error for others), never recorded."""
    _check_inplace(self)
    _write(self, bitwise_not(self)._data)
    bump_version(self, "bitwise_not_")
    return self
