"""gradviz.nn: Parameter, Module, Linear and friends, and nn.functional."""

from . import functional
from . import init
from .modules import (MSELoss, CrossEntropyLoss, Identity, Linear, Module, ModuleList,
                      Parameter, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .modules import (AdaptiveAvgPool2d, AvgPool2d, Bilinear, Conv1d, Conv2d, Flatten,
                      MaxPool2d, ModuleDict, ParameterList, Unflatten)

__all__ = ["Parameter", "Module", "Linear", "Sequential", "ModuleList", "ReLU", "Tanh",
           "Sigmoid", "Softmax", "Identity", "MSELoss", "CrossEntropyLoss", "functional", "init",
           "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Flatten",
           "Unflatten", "ModuleDict", "ParameterList", "Bilinear"]
