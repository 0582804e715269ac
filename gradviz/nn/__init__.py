"""gradviz.nn: Parameter, Module, Linear and friends, and nn.functional."""

from . import functional
from . import init
from . import utils
from .modules import (Identity, Linear, Module, ModuleList, Parameter, Sequential)
from .modules import LazyConv1d, LazyConv2d, LazyLinear
from .modules import UninitializedBuffer, UninitializedParameter
from .activation import (ELU, GELU, GLU, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, ReLU, ReLU6,
                         SiLU, Sigmoid, Softmax, Softplus, Tanh)
from .activation import (CELU, SELU, Hardshrink, Hardsigmoid, Hardswish, Mish, PReLU, Softshrink,
                         Softsign, Tanhshrink, Threshold)
from .dropout import Dropout, Dropout1d, Dropout2d
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm,
                            LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d)
from .sparse import Embedding
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .multihead import MultiheadAttention
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .modules import ConvTranspose1d, ConvTranspose2d
from .modules import (AdaptiveAvgPool2d, AvgPool2d, Bilinear, Conv1d, Conv2d, Flatten, Fold,
                      MaxPool2d, ModuleDict, ParameterDict, ParameterList, Unflatten,
                      Unfold)
from .._missing import module_getattr as _module_getattr

__all__ = ["Parameter", "Module", "Linear", "Sequential", "ModuleList", "Identity", "functional",
           "init", "utils",
           "ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "GELU", "SiLU", "LeakyReLU", "ELU",
           "Softplus", "Hardtanh", "ReLU6", "LogSigmoid", "GLU", "Dropout", "Dropout1d",
           "Dropout2d", "Embedding",
           "LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "GroupNorm", "MSELoss", "L1Loss",
           "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss", "NLLLoss",
           "CrossEntropyLoss", "KLDivLoss", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "Flatten", "Unflatten", "ModuleDict", "ParameterList", "Bilinear",
           "LazyLinear", "LazyConv1d", "LazyConv2d", "UninitializedParameter",
           "UninitializedBuffer", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
           "LSTMCell", "GRUCell", "Unfold", "Fold", "PReLU", "SELU", "CELU", "Mish", "Hardswish",
           "Hardsigmoid", "Softsign", "Tanhshrink", "Softshrink", "Hardshrink", "Threshold",
           "ParameterDict", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
           "ConvTranspose1d", "ConvTranspose2d", "MultiheadAttention"]


# A name PyTorch has and gradviz lacks says so, with the --backend torch hint, instead of
# Python's bare "has no attribute".
__getattr__ = _module_getattr("nn", __name__, __all__)
