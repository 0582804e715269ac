"""Parameter and Module: registration by attribute assignment, parameters() as a generator."""

import math
import operator
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd import tracing as _tracing
from ..autograd.callsite import user_stacklevel
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd.graph import RemovableHandle
from . import functional as F
from . import init

__all__ = ["Parameter", "Module", "Linear", "Sequential", "ModuleList", "ModuleDict",
           "ParameterList", "Identity", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
           "Flatten", "Unflatten", "Bilinear"]


class Parameter(Tensor):
    """A leaf tensor that requires grad and registers itself on the Module it is assigned to.

    >>> import gradviz as torch
    >>> torch.nn.Parameter(torch.ones(2))
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    _torch_path = "torch.nn.parameter.Parameter"      # type(p)'s repr, as torch's

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        from .._tensor import _RG_DTYPE_CREATE, _init, _set_requires_grad
        t = object.__new__(cls)
        if data is None:
            _init(t, np.zeros(0, dtype=np.float32))
        else:
            # torch's _make_subclass(cls, data.detach()): the same storage and version counter
            # as data (an edit of data under no_grad changes the parameter), a new leaf
            _init(t, data._array())
            t._vc = data._version_counter()
        _set_requires_grad(t, requires_grad, _RG_DTYPE_CREATE)
        if _tracing.active is not None:
            _tracing.active.created(t)      # made here, as torch's _make_subclass is seen
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    def __reduce_ex__(self, proto):
        # a Parameter comes back a Parameter, as torch's does
        return (_rebuild_parameter, (np.array(self._data), self._rg))

    __str__ = __repr__      # print(param) shows it too, as in torch


def _rebuild_parameter(data, rg):
    from .._tensor import _rebuild
    return Parameter(_rebuild(data, False), rg)


# ----- Uninitialized parameters and buffers (lazy layers before their first call) ------------

_UNINITIALIZED_USE = (
    "Attempted to use an uninitialized parameter in <method '{}' of 'torch._C.TensorBase' "
    "objects>. This error happens when you are using a `LazyModule` or explicitly "
    "manipulating `torch.nn.parameter.UninitializedParameter` objects. When using LazyModules "
    "Call `forward` with a dummy batch to initialize the parameters before calling torch "
    "functions")


class _UninitializedMixin:
    """torch's UninitializedTensorMixin: no shape and no values until materialize(shape),
    which gives the same object its storage and its final class, so that an optimizer or a
    hook holding it sees the layer's weights (torch changes the object in place too)."""

    __slots__ = ()

    def materialize(self, shape, device=None, dtype=None):
        from .. import _creation
        self.data = _creation.empty(shape, dtype=self.dtype if dtype is None else dtype,
                                    device=device)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__


def _refuse_uninitialized(name):
    def refuse(self, *args, **kwargs):
        raise ValueError(_UNINITIALIZED_USE.format(name))
    refuse.__name__ = name
    return refuse


# The uses a learner's code makes of a parameter (counting, initialising, arithmetic): refused
# as torch refuses them (naming torch's method), not answered from the empty placeholder.
_REFUSED = {name: name for name in (
    "numel", "dim", "sum", "mean", "std", "view", "reshape", "t", "uniform_", "normal_", "fill_",
    "zero_", "add_", "mul_", "item", "tolist", "numpy")}
_REFUSED.update({"__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul",
                 "__rmul__": "mul", "__truediv__": "div", "__matmul__": "matmul",
                 "__neg__": "neg", "__iter__": "dim"})
for _name, _torch_name in _REFUSED.items():
    setattr(_UninitializedMixin, _name, _refuse_uninitialized(_torch_name))
del _name, _torch_name


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A lazy layer's parameter before its first call.

    >>> import gradviz as torch
    >>> torch.nn.LazyLinear(3).weight
    <UninitializedParameter>
    """

    _torch_path = "torch.nn.parameter.UninitializedParameter"

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .. import _creation
        return Parameter.__new__(cls, _creation.empty(0, dtype=dtype, device=device),
                                 requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __reduce_ex__(self, proto):
        # deepcopy and pickle keep it uninitialized, as torch's (not an empty Parameter)
        return (UninitializedParameter, (self._rg, None, self.dtype))


class UninitializedBuffer(_UninitializedMixin, Tensor):
    """A lazy layer's buffer (LazyBatchNorm's running statistics) before its first call."""

    _torch_path = "torch.nn.parameter.UninitializedBuffer"

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        from .. import _creation
        t = _creation.empty(0, dtype=dtype, device=device, requires_grad=requires_grad)
        t.__class__ = cls
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass


def _is_lazy(t):
    """torch.nn.parameter.is_lazy."""
    return isinstance(t, _UninitializedMixin)


def _typename(obj):
    """torch.typename: a tensor's type string, else the (module-qualified) class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it did not find and the ones it did not use."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _BackwardHookFunction(Function):
    """The identity, recorded as BackwardHookFunctionBackward around a module's inputs and
    outputs when it has full backward hooks (torch's BackwardHookFunction)."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


_BackwardHookFunction._backward_cls.__name__ = "BackwardHookFunctionBackward"
_BackwardHookFunction._backward_cls.__qualname__ = "BackwardHookFunctionBackward"


class _BackwardHook:
    """torch's BackwardHook: identity nodes on a module's input and output tensors, whose
    node hooks see the gradients w.r.t. the outputs (pre-hooks may replace them) and w.r.t. the
    inputs (hooks may replace them)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    def _set_user_hook(self, grad_fn):
        def hook(grad_input, _):
            if self.grad_outputs is None:
                # The gradient reached the inputs without passing through the outputs.
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                _report("backward", self.module, user_hook, res, out, grad_fn)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in self.input_tensors_index)

        hook._gradviz_module_hook = True    # the user's hooks it calls are what gets reported
        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        tensors_idx, tensors = [], []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and is_grad_enabled()):
            return args, None
        new_tensors = _BackwardHookFunction.apply(*tensors)
        grad_fns = [t.grad_fn for t in new_tensors if t.grad_fn is not None
                    and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return tuple(arg_list), tensors_idx

    def setup_input_hook(self, args):
        res, self.input_tensors_index = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result):
        def fn(grad_fn):
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                         self.n_outputs)
                expected = len(self.grad_outputs)
                for pre_hook in self.user_pre_hooks:
                    replaced = pre_hook(self.module, self.grad_outputs)
                    _report("backward_pre", self.module, pre_hook, self.grad_outputs, replaced,
                            grad_fn)
                    if replaced is None:
                        continue
                    if len(replaced) != expected:
                        raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                           f"grad_output, got {len(replaced)}, but expected "
                                           f"{expected}")
                    self.grad_outputs = replaced
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    warnings.warn("Full backward hook is firing when gradients are computed with "
                                  "respect to module outputs since no inputs require gradients. "
                                  "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                                  "Module.html#torch.nn.Module.register_full_backward_hook for "
                                  "more details.", stacklevel=user_stacklevel())
                    grad_inputs = (None,) * self.n_inputs
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        _report("backward", self.module, user_hook, grad_inputs, res, grad_fn)
                        if res is not None and not (isinstance(res, tuple)
                                                    and all(r is None for r in res)):
                            raise RuntimeError("Backward hook for Modules where no input "
                                               "requires gradient should always return None "
                                               "or None for all gradients.")
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in self.output_tensors_index)
                return None

            hook._gradviz_module_hook = True
            grad_fn.register_hook(hook)

        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, self.output_tensors_index = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        return res if is_tuple else res[0]


def _report(kind, module, hook, given, returned, node=None):
    """Tell the inspector's tracer, if one is installed, that a module hook of the user's ran
    (kind: forward_pre, forward, backward_pre or backward; node: where a backward one fired)."""
    trace = _tracing.active
    if trace is not None:
        trace.module_hook(kind, module, hook, given, returned, node)


def _returned(trace, module, result):
    """Tell the tracer that module's call returned result; return it."""
    trace.module_return(module, result)
    return result


def _zero_grad(params, set_to_none):
    """torch's zero_grad for Module and Optimizer alike: each .grad set to None, or detached
    from any graph and zeroed in place (the same tensor object, as torch keeps it)."""
    for p in params:
        g = p.grad
        if g is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            g.zero_()


def _handle(hooks, hook, prepend):
    h = RemovableHandle(hooks, hook)
    if prepend:
        hooks.move_to_end(h.id, last=False)
    return h


class Module:
    """Base class of models: assign Parameters, buffers and sub-Modules as attributes; they
    register themselves (parameters, then buffers, then children, in assignment order).

    >>> import gradviz as torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    >>> list(net.state_dict())
    ['0.weight', '0.bias']
    """

    _version = 1
    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given" if args else
                            f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        setter = object.__setattr__
        setter(self, "training", True)
        setter(self, "_parameters", OrderedDict())
        setter(self, "_buffers", OrderedDict())
        setter(self, "_non_persistent_buffers_set", set())
        setter(self, "_modules", OrderedDict())
        setter(self, "_forward_pre_hooks", OrderedDict())
        setter(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        setter(self, "_forward_hooks", OrderedDict())
        setter(self, "_forward_hooks_with_kwargs", OrderedDict())
        setter(self, "_backward_hooks", OrderedDict())
        setter(self, "_backward_pre_hooks", OrderedDict())

    # ----- attribute registration (torch's __setattr__ / __getattr__ / __delattr__) ---------

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")

        def remove_from(*stores):
            for store in stores:
                if name in store:
                    if isinstance(store, dict):
                        del store[name]
                    else:
                        store.discard(name)

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def _check_name(self, kind, name, store):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"" if kind != "module" else
                           f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        """Add a parameter (or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             f"function of another Tensor, compute the value in the forward() "
                             f"method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is part of the module's state but not a parameter; a persistent
        buffer is in state_dict()."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module (or None) under `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, self._modules)
        self._modules[name] = module

    def register_module(self, name, module):
        self.add_module(name, module)

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    # ----- calling, with torch's hooks --------------------------------------------------------

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        trace = _tracing.active
        if trace is None:
            return self._call_impl(args, kwargs)
        # The inspector records which module call made each node (graphs by module). The
        # result is never a local here: the tracer keeps the last calls' frames (to name
        # outputs, fc1(x)), and a frame holding its result would keep every step's graph alive.
        trace.module_call(self, args)
        try:
            return _returned(trace, self, self._call_impl(args, kwargs))
        except BaseException:
            trace.module_return(self, None)
            raise

    def _call_impl(self, args, kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                _report("forward_pre", self, hook, args,
                        res[0] if isinstance(res, tuple) and len(res) == 2 else res)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                _report("forward_pre", self, hook, args, res)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            bw_hook = _BackwardHook(self, list(self._backward_hooks.values()),
                                    list(self._backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            _report("forward", self, hook, result, res)
            if res is not None:
                result = res
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}",
                              stacklevel=user_stacklevel())
            result = bw_hook.setup_output_hook(result)
        return result

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) before forward (hook(module, args, kwargs) with_kwargs); it may
        return new args."""
        h = _handle(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """hook(module, args, output) after forward (hook(module, args, kwargs, output)
        with_kwargs); it may return a new output."""
        if always_call:
            raise NotImplementedError("gradviz: Module.register_forward_hook(always_call=True) "
                                      "is not implemented by gradviz's core; run with --backend "
                                      "torch to use PyTorch")
        h = _handle(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        return h

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) once the gradients w.r.t. the module's inputs
        are computed; it may return new grad_input. The module's input and output tensors then
        pass through BackwardHookFunctionBackward nodes, as in torch."""
        return _handle(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) before the module's gradients are computed; it may return
        new grad_output."""
        return _handle(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        raise NotImplementedError("gradviz: Module.register_backward_hook (deprecated in torch) "
                                  "is not implemented by gradviz's core; use "
                                  "register_full_backward_hook, or run with --backend torch to "
                                  "use PyTorch")

    # ----- traversal -----------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
        for mod_prefix, mod in mods:
            for name, v in get_members(mod):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (mod_prefix + "." + name if mod_prefix else name), v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, Parameter) pairs, sub-modules' with dotted names, as a generator."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse=True):
        """The module's parameters, as a generator (len() needs list(...) first)."""
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        return (b for _, b in self.named_buffers(recurse=recurse))

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + "." + name if prefix else name,
                                       remove_duplicate)

    def modules(self):
        return (m for _, m in self.named_modules())

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def children(self):
        return (m for _, m in self.named_children())

    def apply(self, fn):
        """fn(module) on every descendant, children first, then on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ----- modes and gradients -------------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def to(self, *args, **kwargs):
        """Cast floating-point parameters and buffers to a dtype; the CPU is the only device
        (another one is refused with torch's error on a CPU-only build)."""
        from .._ops.pointwise import _to_args
        dt, _ = _to_args(args, kwargs)
        if dt is None:
            return self
        if not dt.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dt}")
        for m in self.modules():
            for p in m._parameters.values():
                if p is not None and p.is_floating_point():
                    p.data = p.data.to(dt)     # the same Parameter object, as torch's default
                    if p.grad is not None:
                        p.grad.data = p.grad.data.to(dt)
            for name, b in m._buffers.items():
                if b is not None and b.is_floating_point():
                    m._buffers[name] = b.to(dt)
        return self

    def cpu(self):
        return self

    def cuda(self, device=None):
        raise AssertionError("Torch not compiled with CUDA enabled")

    def double(self):
        return self.to(_dtype.float64)

    def float(self):
        return self.to(_dtype.float32)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the parameters' gradients: to None (the default), or zeroed in place."""
        _zero_grad(self.parameters(), set_to_none)

    # ----- conversion ----------------------------------------------------------------------

    def _apply(self, fn):
        """fn on every parameter (in place: the Parameter objects stay the same), its grad,
        and every buffer, in this module and its descendants; returns self."""
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p.data = new
                g = p.grad
                if g is not None:
                    new_g = fn(g)
                    if new_g is not g:
                        p.grad = new_g
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    # ----- state_dict ----------------------------------------------------------------------

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Module by module: its parameters, then its persistent buffers, then its children
        (torch's order); detached unless keep_vars."""
        if args:
            raise NotImplementedError("gradviz: Module.state_dict() with positional arguments "
                                      "is not implemented by gradviz's core; run with "
                                      "--backend torch to use PyTorch")
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars or _is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or _is_lazy(b) else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy state_dict's tensors into the parameters and buffers; with strict, missing
        and unexpected keys are an error (torch's message)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        if assign:
            raise NotImplementedError("gradviz: Module.load_state_dict(assign=True) is not "
                                      "implemented by gradviz's core; run with --backend torch "
                                      "to use PyTorch")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        with no_grad():
            for key, target in own.items():
                if key not in state_dict:
                    continue
                src = state_dict[key]
                if not isinstance(src, Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected '
                                  f'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(src)}')
                    continue
                if _is_lazy(target) and not _is_lazy(src):
                    # torch's _lazy_load_hook: the loaded tensor gives the lazy one its shape
                    target.materialize(src.shape)
                if tuple(src.shape) != tuple(target.shape):
                    errors.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{src.shape} from checkpoint, the shape in current model is "
                                  f"{target.shape}.")
                    continue
                target.copy_(src)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ----- printing ------------------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _weight_and_bias(module, weight_shape, bias, dtype, device, bias_size=None):
    """The layer's weight (of weight_shape) and bias (of bias_size, by default weight_shape[0],
    or a None parameter when bias is False, as torch registers it), then its
    reset_parameters(), as torch's layers do."""
    from .. import _creation
    module.weight = Parameter(_creation.empty(tuple(weight_shape), dtype=dtype, device=device))
    if bias:
        size = weight_shape[0] if bias_size is None else bias_size
        module.bias = Parameter(_creation.empty(size, dtype=dtype, device=device))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


class Linear(Module):
    """y = x @ weight.T + bias, with torch's default uniform initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), bias, dtype, device)

    def reset_parameters(self):
        """torch's initialisation, draw for draw: kaiming_uniform_(a=sqrt(5)) for the weight,
        then U[-1/sqrt(fan_in), 1/sqrt(fan_in)] for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def _abs_index(idx, n):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx + n if idx < 0 else idx


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: sub-modules in order, their count, iteration,
    append and pop, and the renumbering torch does after a deletion or an insertion."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def _renumber(self):
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def _insert(self, index, module):
        """module at index (0 <= index <= len), the later ones moved up one number."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module


class Sequential(_ModuleSequence):
    """Modules called in order; built from modules or from an OrderedDict of named ones.

    >>> import gradviz as torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    >>> len(net), type(net[-1]).__name__
    (2, 'ReLU')
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_abs_index(idx, len(self))]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_abs_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules)[idx]:
                delattr(self, key)
        else:
            delattr(self, list(self._modules)[_abs_index(idx, len(self))])
        # torch renumbers the remaining modules
        self._renumber()

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        self._insert(index + n if index < 0 else index, module)
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(_ModuleSequence):
    """A list of sub-modules, registered as "0", "1", ...

    >>> import gradviz as torch
    >>> layers = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(idx, len(self))))
        self._renumber()

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for m in list(self) + list(other):
            combined.append(m)
        return combined

    def insert(self, index, module):
        self._insert(index, module)

    def extend(self, modules):
        if not hasattr(modules, "__iter__") or isinstance(modules, Module) and not isinstance(
                modules, (ModuleList, Sequential)):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """A dict of sub-modules, in insertion order.

    >>> import gradviz as torch
    >>> heads = torch.nn.ModuleDict({"a": torch.nn.ReLU()})
    >>> list(heads.keys())
    ['a']
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if len(m) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(m)}; 2 is required")
            self[m[0]] = m[1]


class ParameterList(Module):
    """A list of Parameters, registered as "0", "1", ... (plain tensors become Parameters).

    >>> import gradviz as torch
    >>> ps = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2))])
    >>> len(ps), [n for n, _ in ps.named_parameters()]
    (1, ['0'])
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = ParameterList()
            for i in range(self._size)[idx]:
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(idx, self._size)))

    def __setitem__(self, idx, param):
        idx = _abs_index(idx, self._size)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        if not hasattr(values, "__iter__") or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                size = "x".join(str(n) for n in p.shape)
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.dtype} of size {size}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)


class ParameterDict(Module):
    """A dict of Parameters, registered under their keys in insertion order (plain tensors
    become Parameters; other values are kept as they are, as torch does). update() with a
    plain dict adds its items in sorted key order, as torch's does.

    >>> import gradviz as torch
    >>> ps = torch.nn.ParameterDict({"w": torch.ones(2), "b": torch.zeros(1)})
    >>> [n for n, _ in ps.named_parameters()]
    ['b', 'w']
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attr(key):
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not "
                            f"a string (type is '{type(key).__name__}'). Open an issue on github "
                            f"if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._attr(key))

    def __setitem__(self, key, value):
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, self._attr(key), value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in self._keys.copy():
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        if not hasattr(parameters, "__iter__"):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = parameters.items()
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = list(parameters)
            for j, p in enumerate(pairs):
                if not hasattr(p, "__iter__"):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be "
                                    f"Iterable; is{type(p).__name__}")
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(p)}; 2 is required")
        for key, value in pairs:
            self[key] = value

    def __or__(self, other):
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other):
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other):
        self.update(other)
        return self

    def extra_repr(self):
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                size = "x".join(str(n) for n in p.shape)
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.type()} of size {size}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)


class Identity(Module):
    """Returns its input; accepts (and ignores) any constructor arguments, as torch's does."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


# ----- Convolution and pooling modules -------------------------------------------------------

def _ntuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    _nd = 0
    _transposed = False     # ConvTranspose: weight (in_channels, out_channels / groups, *k)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                # torch formats the set itself (its order varies from run to run)
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd)
        self.dilation = _ntuple(dilation, nd)
        self.transposed = self._transposed
        self.output_padding = (0,) * nd
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            pads = [0, 0] * nd
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i] = total // 2
                    pads[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding)
                                                     for _ in range(2)]
        if self._transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        _weight_and_bias(self, shape, bias, dtype, device, out_channels)

    def reset_parameters(self):
        """torch's initialisation, draw for draw: kaiming_uniform_(a=sqrt(5)) for the weight,
        then U[-1/sqrt(fan_in), 1/sqrt(fan_in)] for the bias, fan_in counting the kernel."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, input, weight, bias):
        conv = F.conv1d if self._nd == 1 else F.conv2d
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution layer over (N, C, L) input (F.conv1d), with torch's initialisation.

    >>> import gradviz as torch
    >>> torch.nn.Conv1d(2, 3, 2)
    Conv1d(2, 3, kernel_size=(2,), stride=(1,))
    """

    _nd = 1


class Conv2d(_ConvNd):
    """2-D convolution layer over (N, C, H, W) input (F.conv2d), with torch's initialisation.

    >>> import gradviz as torch
    >>> torch.nn.Conv2d(3, 8, 3, padding=1)
    Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """

    _nd = 2


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution layer (F.conv_transpose1d/2d), with torch's initialisation
    (the same draws as the convolution's, on the (in, out / groups, *kernel) weight)."""

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)
        self.output_padding = _ntuple(output_padding, self._nd)

    def _output_padding(self, input, output_size):
        """torch's: the output_padding that gives output_size (checked against the valid
        range), or the layer's own."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        lead = 2 if input.dim() == nd + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must "
                             f"have {nd} or {lead + nd} elements (got {len(output_size)})")
        low = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
               + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        high = [n + s - 1 for n, s in zip(low, self.stride)]
        if any(not lo <= n <= hi for n, lo, hi in zip(output_size, low, high)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range "
                             f"from {low} to {high} (for an input of {input.shape[lead:]})")
        return [n - lo for n, lo in zip(output_size, low)]

    def forward(self, input, output_size=None):
        conv = F.conv_transpose1d if self._nd == 1 else F.conv_transpose2d
        return conv(input, self.weight, self.bias, self.stride, self.padding,
                     self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution layer over (N, C, L) input (F.conv_transpose1d).

    >>> import gradviz as torch
    >>> torch.nn.ConvTranspose1d(2, 3, 2, stride=2)
    ConvTranspose1d(2, 3, kernel_size=(2,), stride=(2,))
    """

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution layer over (N, C, H, W) input (F.conv_transpose2d).

    >>> import gradviz as torch
    >>> torch.nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1)
    ConvTranspose2d(8, 3, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1))
    """

    _nd = 2


class _Pool2d(Module):
    """The window every pooling keeps: kernel_size, stride (kernel_size when None, as torch)
    and padding; then the pooling's own options, each an attribute named as torch names it."""

    def __init__(self, kernel_size, stride, padding, **options):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        for name, value in options.items():
            setattr(self, name, value)


class MaxPool2d(_Pool2d):
    """The maximum over each window (F.max_pool2d)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__(kernel_size, stride, padding, dilation=dilation,
                         return_indices=return_indices, ceil_mode=ceil_mode)

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(_Pool2d):
    """The mean over each window (F.avg_pool2d)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__(kernel_size, stride, padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad, divisor_override=divisor_override)

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size (F.adaptive_avg_pool2d)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class Flatten(Module):
    """input.flatten(start_dim, end_dim), by default keeping the batch dim."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unfold(Module):
    """F.unfold: every sliding block of each image as a column (Im2ColBackward0)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """F.fold: columns summed back into images of output_size (Col2ImBackward0)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unflatten(Module):
    """Splits dim `dim` into `unflattened_size` (a view, ViewBackward0)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError("gradviz: torch.nn.Unflatten over named dims is not "
                                      "implemented by gradviz's core; run with --backend torch "
                                      "to use PyTorch")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        shape = list(input.shape)
        dim = self.dim + len(shape) if self.dim < 0 else self.dim
        return input.view(*shape[:dim], *self.unflattened_size, *shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Bilinear(Module):
    """y = x1^T A x2 + b (F.bilinear), with torch's initialisation.

    >>> import gradviz as torch
    >>> torch.nn.Bilinear(3, 4, 6)
    Bilinear(in1_features=3, in2_features=4, out_features=6, bias=True)
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, dtype, device)

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


# ----- Lazy modules: the input size is read from the first input ------------------------------

class _LazyModuleMixin:
    """torch's LazyModuleMixin: the layer is built with its input size 0 and uninitialized
    parameters (nothing drawn); its first call reads the size from the input, materializes the
    parameters in place (an optimizer made before holds the same objects), initialises them
    (the same draws, in the same order, as torch) and turns the module into `cls_to_become`,
    so that repr, state_dict and isinstance read as the eager layer's. A lazy layer says how:
    `_input_size()` and `_weight_shape(input)` (which records the size). load_state_dict
    materializes them too, from the loaded tensors' shapes."""

    cls_to_become = None

    def _lazy_setup(self, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def __call__(self, *args, **kwargs):
        if type(self).cls_to_become is not None:
            self.initialize_parameters(args[0] if args else next(iter(kwargs.values())))
            if self.has_uninitialized_params():
                raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
            self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)

    def initialize_parameters(self, input):
        """For Linear and the convolutions: weight and bias of the input's size, drawn as
        their reset_parameters draws them (unless load_state_dict gave them already)."""
        if self.has_uninitialized_params():
            with no_grad():
                shape = self._weight_shape(input)
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((shape[0],))
                self.reset_parameters()

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self._input_size() != 0:
            super().reset_parameters()

    def has_uninitialized_params(self):
        return any(_is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))


class LazyLinear(_LazyModuleMixin, Linear):
    """A Linear layer whose in_features is the last size of its first input.

    >>> import gradviz as torch
    >>> layer = torch.nn.LazyLinear(3)
    >>> layer(torch.ones(2, 5)).shape, type(layer).__name__
    (torch.Size([2, 3]), 'Linear')
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)       # as torch: nothing is drawn before the first call
        self.out_features = out_features
        self._lazy_setup(bias, device, dtype)

    def _input_size(self):
        return self.in_features

    def _weight_shape(self, input):
        self.in_features = int(input.shape[-1])
        return self.out_features, self.in_features

    def initialize_parameters(self, input):
        super().initialize_parameters(input)
        if self.in_features == 0:
            # loaded by load_state_dict: torch reads in_features from the input then
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                    f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = int(input.shape[-1])


class _LazyConvNd(_LazyModuleMixin):
    """What LazyConv1d and LazyConv2d share: in_channels read from the input's channel dim."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)
        self.out_channels = out_channels
        self._lazy_setup(bias, device, dtype)

    def _input_size(self):
        return self.in_channels

    def _weight_shape(self, input):
        batched = input.dim() == self._nd + 2
        self.in_channels = int(input.shape[1] if batched else input.shape[0])
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        return (self.out_channels, self.in_channels // self.groups, *self.kernel_size)


class LazyConv1d(_LazyConvNd, Conv1d):
    """A Conv1d whose in_channels is read from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvNd, Conv2d):
    """A Conv2d whose in_channels is read from its first input.

    >>> import gradviz as torch
    >>> conv = torch.nn.LazyConv2d(6, kernel_size=5, padding=2)
    >>> conv(torch.ones(1, 1, 28, 28)).shape, conv.weight.shape
    (torch.Size([1, 6, 28, 28]), torch.Size([6, 1, 5, 5]))
    """

    cls_to_become = Conv2d
