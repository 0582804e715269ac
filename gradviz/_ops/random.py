"""Random ops on tensors: the in-place fills (uniform_, normal_, bernoulli_, exponential_,
random_), torch.normal, torch.bernoulli and torch.multinomial. The draws come from
gradviz._random, which gives torch's values for the same seed or Generator.

An in-place fill is an in-place edit like any other: it bumps `_version` and is refused on a
leaf that requires grad while grad mode is on (nn.init fills under no_grad, as torch does).
Recording a fill on a tensor that requires grad (torch's NormalBackward0, ...) is not
implemented and says so.
"""

import numpy as np

from .. import _random
from .._dtype import _TORCH_SCALAR
from .._registry import export, method
from .._tensor import Tensor, _make
from ..autograd.grad_mode import _state
from ._common import _invalid_combination
from .inplace import _check_inplace, _write, bump_version


def _refuse(name, arg):
    raise NotImplementedError(f"gradviz: {name}({arg}=...) is not implemented by gradviz's "
                              "core; run with --backend torch to use PyTorch")


def _fill(self, values, op):
    _check_inplace(self)
    if _state.enabled and self._rg:
        raise NotImplementedError(f"gradviz: {op} on a tensor that requires grad (torch records "
                                  "a node for it) is not implemented by gradviz's core; fill it "
                                  "under torch.no_grad(), or run with --backend torch")
    _write(self, values)
    bump_version(self, op)
    return self


def _float(self, kernel):
    return _random._floating(self._data.dtype, kernel)


@method()
def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with samples of U[a, b) (torch's values for the same seed)."""
    dt = _float(self, "check_uniform_bounds")
    _random.check_uniform(a, b, dt)
    return _fill(self, _random.uniform(self.shape, dt, a, b, generator), "uniform_")


@method()
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples of N(mean, std**2) (torch's values for the same seed)."""
    _random.check_std(std)
    dt = _float(self, "normal_kernel_cpu")
    return _fill(self, _random.normal(self.shape, dt, mean, std, generator), "normal_")


@method()
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 where a uniform draw is below p, else 0."""
    if isinstance(p, Tensor):
        _refuse("Tensor.bernoulli_", "p as a tensor")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_random._num(p)}")
    draws = _random.bernoulli(self.shape, p, generator)
    return _fill(self, draws.astype(self._data.dtype), "bernoulli_")


@method()
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with samples of Exp(lambd)."""
    values = _random.exponential(self.shape, self._data.dtype, lambd, generator)
    return _fill(self, values, "exponential_")


@method()
def random_(self, *bounds, generator=None, **named):
    """Fill with integers in [from, to) (random_(to) is random_(0, to); no argument: torch's
    full range for the dtype, e.g. [0, 2**63) for int64)."""
    from_, to = _random_bounds(bounds, named)
    if from_ is None:
        return _fill(self, _full_range(self, generator), "random_")
    vals = _random.randint(int(from_), int(to), self.shape, generator, self._data.dtype)
    return _fill(self, vals, "random_")


def _random_bounds(bounds, named):
    """(from, to) of random_'s arguments, (None, None) for none, or torch's TypeError for
    anything but integers (a float, a bool, None)."""
    args = list(bounds) + [named[k] for k in ("from", "to") if k in named]
    if len(args) == 2 and args[1] is None:
        # random_(from, None): up to the dtype's largest value, which for from=0 is the
        # full range of random_()
        if args[0] == 0 and not isinstance(args[0], bool):
            return None, None
        raise NotImplementedError("gradviz: Tensor.random_(from, to=None) with from != 0 is "
                                  "not implemented by gradviz's core; run with --backend torch "
                                  "to use PyTorch")
    ok = len(args) <= 2 and not named.keys() - {"from", "to"} and all(
        not isinstance(v, bool) and isinstance(v, (int, np.integer)) for v in args)
    if not ok:
        raise _invalid_combination("random_", bounds, named)
    if not args:
        return None, None
    return (0, int(args[0])) if len(args) == 1 else (int(args[0]), int(args[1]))


# random_() with no bounds draws one raw value per element (64 bits for int64 and float64, 32
# otherwise) and keeps it modulo the dtype's range: max + 1 for integers, 2**digits + 1 for
# floats (torch's uniform_int transformation).
_FULL_RANGE = {"int64": (True, 1 << 63), "int32": (False, 1 << 31), "int16": (False, 1 << 15),
               "int8": (False, 1 << 7), "uint8": (False, 1 << 8), "bool": (False, 2),
               "float64": (True, (1 << 53) + 1), "float32": (False, (1 << 24) + 1),
               "float16": (False, (1 << 11) + 1)}


def _full_range(self, generator):
    dt = self._data.dtype
    wide, span = _FULL_RANGE[dt.name]
    gen = _random._gen(generator)
    n = int(self._data.size)
    raw = gen._r64(n) if wide else gen._r32(n)
    return (raw % np.uint64(span)).astype(dt).reshape(self.shape)


@export(tensor=False)
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           device=None, requires_grad=False, pin_memory=False):
    """torch.normal for number mean and std with a size (tensor means and stds are not
    implemented); with out=, drawn in out's dtype and written into it, as torch."""
    from .._creation import _check_device, _check_pin_memory, _finish, _is_int, _out_dt, _shape
    if _is_int(size):
        raise TypeError(f"normal() received an invalid combination of arguments - got "
                        f"({type(mean).__name__}, {type(std).__name__}, int), but expected one of:")
    _check_device(device)
    _check_pin_memory("normal", pin_memory)
    if isinstance(mean, Tensor) or isinstance(std, Tensor) or size is None:
        _refuse("torch.normal", "mean or std as a tensor")
    dt = np.dtype(_out_dt(out, dtype))
    values = _random.normal(_shape("normal", (size,)), dt, float(mean), float(std), generator)
    return _finish(values, requires_grad, out, "normal")


@export()
def bernoulli(input, p=None, *, generator=None):
    """A tensor of 0s and 1s: 1 where a uniform draw is below p (a number), or below each
    element of `input` when p is not given."""
    if p is None:
        if input._data.dtype.kind != "f":
            raise NotImplementedError('"bernoulli_tensor_cpu_p_" not implemented for '
                                      f"'{_TORCH_SCALAR[input._data.dtype.name]}'")
        probs = input._data.astype(np.float64).reshape(-1)
        if not ((probs >= 0) & (probs <= 1)).all():      # nan too
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")
        # torch's CPU kernel draws a double uniform for float64 probabilities and a float
        # one (24 bits of one 32-bit output) for every other dtype
        unit = _random._unit_f64 if input._data.dtype == np.float64 else _random._unit_f32
        u = unit(_random._gen(generator), probs.size)
        return _make((u < probs).reshape(input.shape).astype(input._data.dtype))
    return bernoulli_(_make(np.empty_like(input._data)), p, generator=generator)


@export()
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the categories weighted by each row of input (torch's draws)."""
    probs = input._data
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{_TORCH_SCALAR[probs.dtype.name]}")
    n = probs.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if (probs < 0).any() or not np.isfinite(probs).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.reshape(-1, n).sum(-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    return _make(_random.multinomial(probs, int(num_samples), replacement, generator))
