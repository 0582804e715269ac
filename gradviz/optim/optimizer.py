"""The optimizer base class: parameter groups, per-parameter state, state_dict, zero_grad.

It follows torch.optim.Optimizer: `param_groups` is a list of dicts (the options of the group,
missing ones filled from the defaults, and its "params"), `state` maps each parameter to a dict
of tensors named as torch names them, and `state_dict()` replaces parameters by their index in
group order: `{"state": {0: {...}}, "param_groups": [{..., "params": [0, 1]}]}`.

>>> import gradviz as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
>>> (w * 3).sum().backward(); opt.step()
>>> opt.state_dict()["state"]
{0: {'momentum_buffer': tensor([3.])}}
"""

import copy
import itertools
from collections import defaultdict

import numpy as np

from .._dtype import get_default_dtype
from .._tensor import Tensor, _make
from ..autograd.grad_mode import enable_grad
from ..nn.modules import _zero_grad
from . import _functional as F

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """The default of an option a param group must give (torch's `required`)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

# Options that select how torch runs the update (other kernels, graph capture, a differentiable
# step). gradviz runs the single-tensor update only: these may keep their default value.
_PLAIN = {"foreach": (None, False), "fused": (None, False), "capturable": (False,),
          "differentiable": (False,)}


def refuse(owner, arg, value):
    raise NotImplementedError(f"gradviz: torch.optim.{owner}({arg}={value!r}) is not "
                              "implemented by gradviz's core; run with --backend torch to use "
                              "PyTorch")


def check_number(owner, **values):
    """A Tensor lr, beta or weight decay is refused (torch accepts them for graph capture)."""
    for name, v in values.items():
        if isinstance(v, Tensor):
            refuse(owner, name, "a Tensor")


def scalar_state(value=0.0):
    """The `step` counter torch keeps per parameter: a 0-d float tensor (float64 when that is
    the default dtype), incremented in place."""
    dt = np.float64 if get_default_dtype().np == np.float64 else np.float32
    return _make(np.array(value, dtype=dt))


def check_plain(owner, **options):
    """foreach/fused/capturable/differentiable may only keep their default values."""
    for name, value in options.items():
        if value not in ((None, False) if name in ("foreach", "fused") else (False,)):
            refuse(owner, name, value)


def run_closure(closure):
    if closure is None:
        return None
    with enable_grad():
        return closure()


def increment(step):
    a = step._array()
    a += 1
    F.bump(step, "add_")
    return float(step._data)


class Optimizer:
    """Base class of the optimizers: subclasses give the defaults and `step`."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + params.type())
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self):
        # torch's layout: one block per group, options sorted by name.
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group):
        """Add a group of parameters with its own options (missing ones from the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        if any(isinstance(p, tuple) for p in param_group["params"]):
            refuse(type(self).__name__, "params", "named parameters")
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not (p.is_leaf or p._retains):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        for name, allowed in _PLAIN.items():
            if name in param_group and param_group[name] not in allowed:
                refuse(type(self).__name__, name, param_group[name])
        check_number(type(self).__name__, lr=param_group.get("lr"),
                     weight_decay=param_group.get("weight_decay"))
        ids = {id(p) for p in param_group["params"]}
        if len(ids) != len(param_group["params"]):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        for group in self.param_groups:
            if any(id(p) in ids for p in group["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Set every parameter's .grad to None (or, with set_to_none=False, to zeros in
        place)."""
        _zero_grad((p for group in self.param_groups for p in group["params"]), set_to_none)

    def state_dict(self):
        """The state and the groups, parameters replaced by their index (in group order)."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load a state_dict() made by an optimizer over parameters of the same shapes."""
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        groups = self.param_groups
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: _cast(param, key, value) for key, value in v.items()}
            else:
                state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
        self.state = state
        self.param_groups = saved_groups
        self._loaded()

    def _loaded(self):
        """Subclasses fill options an older state_dict may lack (torch's __setstate__)."""

    def step(self, closure=None):
        raise NotImplementedError


def _cast(param, key, value):
    # torch casts loaded state tensors to the parameter's dtype, except `step`.
    if isinstance(value, Tensor) and key != "step" and param.is_floating_point():
        return value.to(param.dtype)
    return value


def _typename(obj):
    module = type(obj).__module__
    return type(obj).__qualname__ if module == "builtins" else f"{module}.{type(obj).__qualname__}"
