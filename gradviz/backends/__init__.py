"""torch.backends as a CPU-only build of torch reports it: no MPS, no CUDA, no cuDNN; the
cuDNN and TF32 flags exist with torch's defaults (and do nothing, as on a CPU-only build).

>>> import gradviz as torch
>>> torch.backends.mps.is_available(), torch.backends.cudnn.is_available()
(False, False)
"""

import sys
import types

__all__ = ["mps", "cuda", "cudnn"]


def _none():
    return None


def _false(*args, **kwargs):
    return False


mps = types.ModuleType("gradviz.backends.mps", "No MPS device (torch's answer on Linux).")
mps.is_available = _false
mps.is_built = _false

cuda = types.ModuleType("gradviz.backends.cuda", "No CUDA: torch's CPU-only answers.")
cuda.is_built = _false
cuda.matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                    allow_bf16_reduced_precision_reduction=True)

cudnn = types.ModuleType("gradviz.backends.cudnn", "No cuDNN; the flags keep torch's defaults.")
cudnn.is_available = _false
cudnn.is_acceptable = _false
cudnn.version = _none
cudnn.enabled = True
cudnn.benchmark = False
cudnn.deterministic = False
cudnn.allow_tf32 = True

# `import torch.backends.mps` works on torch: the three are importable by name here too.
sys.modules.update({m.__name__: m for m in (mps, cuda, cudnn)})
