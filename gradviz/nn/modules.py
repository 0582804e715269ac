"""Parameter and Module: registration by attribute assignment, parameters() as a generator."""

import math
from collections import OrderedDict

import numpy as np

from .._tensor import Tensor, _make
from . import functional as F
from . import init

__all__ = ["Parameter", "Module", "Linear", "Sequential", "ModuleList", "Identity"]


class Parameter(Tensor):
    """A leaf tensor that requires grad and registers itself on the Module it is assigned to.

    >>> import gradviz as torch
    >>> torch.nn.Parameter(torch.ones(2))
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        from .._tensor import _RG_DTYPE_CREATE, _init, _set_requires_grad
        t = object.__new__(cls)
        arr = np.zeros(0, dtype=np.float32) if data is None else np.array(data._data)
        _init(t, arr)
        _set_requires_grad(t, requires_grad, _RG_DTYPE_CREATE)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)


class Module:
    """Base class of models: assign Parameters and sub-Modules as attributes."""

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self.__dict__.pop(name, None)
            params.pop(name, None)
            self._modules[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"'{name}' (torch.nn.Parameter or None expected)")
            params[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._buffers[name] = tensor

    def add_module(self, name, module):
        self._modules[name] = module

    register_module = add_module

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, Parameter) pairs, sub-modules' with dotted names, as a generator."""
        seen = set()
        for mod_prefix, mod in (self.named_modules(prefix=prefix) if recurse
                                else [(prefix, self)]):
            for name, p in mod._parameters.items():
                if p is None or (remove_duplicate and id(p) in seen):
                    continue
                seen.add(id(p))
                yield (mod_prefix + "." + name if mod_prefix else name), p

    def parameters(self, recurse=True):
        """The module's parameters, as a generator (len() needs list(...) first)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_modules(self, memo=None, prefix=""):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + "." + name if prefix else name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_buffers(self, prefix=""):
        for mod_prefix, mod in self.named_modules(prefix=prefix):
            for name, b in mod._buffers.items():
                yield (mod_prefix + "." + name if mod_prefix else name), b

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad = _make(np.zeros_like(p._data))

    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def state_dict(self):
        out = OrderedDict()
        for name, p in self.named_parameters():
            out[name] = p.detach()
        for name, b in self.named_buffers():
            out[name] = b
        return out

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {sub}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        body = "\n  ".join(([extra] if extra else []) + lines)
        return f"{type(self).__name__}(\n  {body}\n)"


class Linear(Module):
    """y = x @ weight.T + bias, with torch's default uniform initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        from .. import _creation
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty(out_features, in_features, dtype=dtype,
                                                device=device))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, dtype=dtype, device=device))
        else:
            self.bias = None
        self.reset_parameters()

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


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)


class ModuleList(Module):
    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)


class Identity(Module):
    def forward(self, input):
        return input
