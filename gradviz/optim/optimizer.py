"""The optimizer base class: parameter groups, per-parameter state, state_dict, step hooks.

It follows torch.optim.Optimizer: `param_groups` is a list of dicts (the options of the group,
missing ones filled from the defaults, and its "params"), `state` maps each parameter to a dict
of tensors named as torch names them, and `state_dict()` replaces parameters by their index in
group order: `{"state": {0: {...}}, "param_groups": [{..., "params": [0, 1]}]}`.

The built-in optimizers share one step loop (`_single_tensor_step`): for each parameter with a
gradient, in group order, the gradient negated under `maximize` and with L2 weight decay added,
then the subclass's `_update`. This is torch's single-tensor (for-loop) implementation, the one
torch runs for CPU tensors; the arithmetic of each update is in `_functional`.

>>> import gradviz as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
>>> (w * 3).sum().backward(); opt.step()
>>> opt.state_dict()["state"]
{0: {'momentum_buffer': tensor([3.])}}
"""

import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict

import numpy as np

from .._dtype import get_default_dtype
from .._tensor import Tensor, _make
from ..autograd import tracing as _tracing
from ..autograd.callsite import mark, user_frame, user_stacklevel
from ..autograd.grad_mode import enable_grad, no_grad
from ..nn.modules import _handle, _zero_grad
from . import _functional as F

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """The default of an option a param group must give (torch's `required`)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

# Options that select how torch runs the update (other kernels, graph capture, a differentiable
# step). gradviz runs the single-tensor update only: these may keep their default value.
_PLAIN = {"foreach": (None, False), "fused": (None, False), "capturable": (False,),
          "differentiable": (False,)}

# The words of torch's "Invalid ...: value" errors, by argument; the others say "NAME value".
_RANGE_WORDS = {"lr": "learning rate", "eps": "epsilon value"}

# Hooks every optimizer runs around step() (torch.optim.optimizer's global hooks).
_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Run hook(optimizer, args, kwargs) before every optimizer's step; it may return new
    (args, kwargs)."""
    return _handle(_global_step_pre_hooks, hook, False)


def register_optimizer_step_post_hook(hook):
    """Run hook(optimizer, args, kwargs) after every optimizer's step."""
    return _handle(_global_step_post_hooks, hook, False)


def refuse(owner, arg, value):
    raise NotImplementedError(f"gradviz: torch.optim.{owner}({arg}={value!r}) is not "
                              "implemented by gradviz's core; run with --backend torch to use "
                              "PyTorch")


def check_number(owner, **values):
    """A Tensor lr, beta or weight decay is refused (torch accepts them for graph capture)."""
    for name, v in values.items():
        if isinstance(v, Tensor):
            refuse(owner, name, "a Tensor")


def check_ranges(owner, nan_passes=False, **values):
    """torch's `if not 0.0 <= value: raise ValueError("Invalid ...")` checks, in the order
    given (after refusing a Tensor lr or weight decay). SGD writes them `if value < 0.0`, which
    lets a NaN pass: nan_passes=True."""
    check_number(owner, lr=values.get("lr"), weight_decay=values.get("weight_decay"))
    for name, value in values.items():
        if (value < 0.0) if nan_passes else not 0.0 <= value:
            raise ValueError(f"Invalid {_RANGE_WORDS.get(name, name + ' value')}: {value}")


def scalar_state(value=0.0):
    """The `step` counter torch keeps per parameter: a 0-d float tensor (float64 when that is
    the default dtype), incremented in place."""
    dt = np.float64 if get_default_dtype().np == np.float64 else np.float32
    return _make(np.array(value, dtype=dt))


def zeros_state(param):
    """A state tensor of zeros shaped and typed as the parameter (torch's zeros_like)."""
    return _make(np.zeros_like(param._array()))


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


def _hooked(step):
    """step wrapped with the step hooks (torch's Optimizer.profile_hook_step): the global and
    then the optimizer's pre-hooks, which may replace (args, kwargs); the step; the optimizer's
    and then the global post-hooks."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre_hook in itertools.chain(_global_step_pre_hooks.values(),
                                        self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        out = step(*args, **kwargs)
        for post_hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                         _global_step_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class of the optimizers: subclasses give the defaults and `step`.

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.SGD([w], lr=0.5)
    >>> h = opt.register_step_post_hook(lambda o, args, kwargs: print("stepped"))
    >>> (w * 2).sum().backward(); opt.step()
    stepped
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
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

    def _patch_step_function(self):
        # As torch: the class's step is wrapped once, for every instance, so that a subclass
        # written by the user runs the hooks too.
        cls = type(self)
        if not getattr(cls.step, "hooked", None):
            cls.step = _hooked(cls.step)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("step_pre", "step_post", "state_dict_pre", "state_dict_post",
                     "load_state_dict_pre", "load_state_dict_post"):
            self.__dict__.setdefault(f"_optimizer_{name}_hooks", OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        # torch's layout: one block per group, options sorted by name.
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # ----- hooks ---------------------------------------------------------------------------

    def register_step_pre_hook(self, hook):
        """Run hook(optimizer, args, kwargs) before step(); it may return new (args, kwargs)."""
        return _handle(self._optimizer_step_pre_hooks, hook, False)

    def register_step_post_hook(self, hook):
        """Run hook(optimizer, args, kwargs) after step()."""
        return _handle(self._optimizer_step_post_hooks, hook, False)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Run hook(optimizer) before state_dict()."""
        return _handle(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Run hook(optimizer, state_dict) after state_dict(); it may return a new one."""
        return _handle(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Run hook(optimizer, state_dict) before load_state_dict(); it may return a new one."""
        return _handle(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Run hook(optimizer) after load_state_dict()."""
        return _handle(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ----- groups --------------------------------------------------------------------------

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
        # named_parameters() gives (name, tensor) pairs: torch keeps the names in the group.
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p
                                 for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
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
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=user_stacklevel())
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        for group in self.param_groups:
            if any(id(p) in ids for p in group["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Set every parameter's .grad to None (or, with set_to_none=False, to zeros in
        place)."""
        _zero_grad((p for group in self.param_groups for p in group["params"]), set_to_none)

    # ----- state_dict ----------------------------------------------------------------------

    def state_dict(self):
        """The state and the groups, parameters replaced by their index (in group order)."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            # torch numbers a group's parameters from the running count of the groups before
            # it, duplicates included (a parameter twice in one group gets its later number).
            index.update({id(p): i for i, p in enumerate(group["params"], start)
                          if id(p) not in index})
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a state_dict() made by an optimizer over parameters of the same shapes."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
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
                state[id_map[k]] = _cast(id_map[k], v)
            else:
                state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.state = state
        self.param_groups = saved_groups
        self._loaded()
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # Options an older state_dict may lack, filled on loading (torch's __setstate__).
    _LOAD_DEFAULTS = {}

    def _loaded(self):
        for group in self.param_groups:
            for name, default in self._LOAD_DEFAULTS.items():
                group.setdefault(name, default)

    # ----- the step ------------------------------------------------------------------------

    def step(self, closure=None):
        raise NotImplementedError

    def _single_tensor_step(self, closure):
        """The loop of torch's single-tensor optimizers: run the closure with grad enabled,
        then, for each parameter with a gradient, group by group, `self._update(group, p,
        grad, state)` with grad a NumPy array, negated under `maximize` and with the group's
        L2 weight decay added (unless the group decouples it). Returns the closure's loss.
        The built-in optimizers' `step` is `single_tensor_step`, which runs it under no_grad."""
        loss = run_closure(closure)
        before = mark(*self._edits_site())
        try:
            for group in self.param_groups:
                maximize = group["maximize"]
                wd = 0 if group.get("decoupled_weight_decay") else group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self._state_of(p, group)
                    grad = np.asarray(p.grad._data)
                    if maximize:
                        grad = -grad
                    if wd != 0:
                        grad = F.add(grad, p._array(), wd)
                    self._update(group, p, grad, state)
        finally:
            mark(*before)
        return loss

    def _edits_site(self):
        """(F.bump's code, the user's frame that called step) for callsite.mark when an
        inspector listens and the loop runs gradviz's code only: every edit of the loop is
        counted by F.bump and made by the caller's line, found here once per step rather than
        by a walk of seven frames per edit. (None, None), no mark, for a subclass or an
        `_update` the user wrote: their edits are made on the user's own lines."""
        if _tracing.active is None or "_update" in self.__dict__ or \
                not type(self).__module__.startswith(__package__ + "."):
            return None, None
        return F.bump.__code__, user_frame(2)

    def _state_of(self, p, group):
        """p's state, made by `_init_state` on its first step (torch's `_init_group`)."""
        state = self.state[p]
        if not state:
            self._init_state(state, p, group)
        return state

    def _init_state(self, state, p, group):
        """Fill a parameter's empty state: the `step` counter, then zeros for each of the
        subclass's `_state_names(group)`, in torch's order."""
        state["step"] = scalar_state()
        for name in self._state_names(group):
            state[name] = zeros_state(p)

    def _update(self, group, p, grad, state):
        """Update one parameter in place from its gradient (subclasses)."""
        raise NotImplementedError


@no_grad()
def single_tensor_step(self, closure=None):
    """One update of every parameter that has a gradient, outside the graph (torch's
    single-tensor loop); returns the closure's loss, if a closure is given."""
    return self._single_tensor_step(closure)


def _cast(param, value, key=None):
    """A deep copy of a loaded state value, its tensors cast to the parameter's dtype except
    `step` (torch's load_state_dict._cast for parameters without fused/capturable)."""
    if isinstance(value, Tensor):
        if key != "step" and param.is_floating_point():
            return value.to(param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v) for v in value)
    return value


def _typename(obj):
    module = type(obj).__module__
    return type(obj).__qualname__ if module == "builtins" else f"{module}.{type(obj).__qualname__}"
