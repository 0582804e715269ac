"""gradviz.nn: Parameter, Module, Linear and friends, and nn.functional."""

from . import functional
from . import init
from .modules import (MSELoss, CrossEntropyLoss, Identity, Linear, Module, ModuleList,
                      Parameter, ReLU, Sequential, Sigmoid, Softmax, Tanh)

__all__ = ["Parameter", "Module", "Linear", "Sequential", "ModuleList", "ReLU", "Tanh",
           "Sigmoid", "Softmax", "Identity", "MSELoss", "CrossEntropyLoss", "functional", "init"]
