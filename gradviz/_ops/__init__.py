"""The forward of every op, one module per family, each recording its node from the
derivative table (gradviz._derivatives).

An op computes its result with NumPy and, when grad mode is on and an input requires grad,
calls `record` with its row, its tensor inputs (in the row's signature order) and the values
its formulas may save. Python scalars never upcast a float32 tensor (torch's promotion, see
gradviz._dtype). Each forward is marked public once (`gradviz._registry.export`) and names
the rows it records (`records`); importing this package installs the Tensor methods and
checks every row against its forwards, so a row that does not match its op is an import
error.
"""

from .. import _registry
from .._tensor import Tensor
from ..autograd.formula import check_bindings
from . import (arithmetic, comparison, indexing, inplace, linalg, losses, methods,  # noqa: F401
               pointwise, random, reductions, scatter, sorting, special, views)
from . import activation, dropout, embedding, normalization  # noqa: F401
from . import shape  # noqa: F401
from . import counting, decompositions, im2col, logical, selection, strided  # noqa: F401
from . import attention, bilinear, convolution, padding, pooling  # noqa: F401
from . import activation_extra, bucketing, conv_transpose, sizes, upsample  # noqa: F401
from . import rnn  # noqa: F401
from . import backward  # noqa: F401,E402  (the ops of double-backward graphs)
from . import inplace_functions  # noqa: F401  (after every module defining methods)

_registry.install_methods(Tensor)
check_bindings(_registry.BINDINGS)
