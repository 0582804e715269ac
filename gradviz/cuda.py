"""torch.cuda as a CPU-only build of torch answers it: no device is available.

The queries tutorials start with answer as on a machine without CUDA (`is_available()` is
False, `device_count()` is 0), the seeding calls do nothing (torch queues them until CUDA
starts, which never happens), and what needs a device raises torch's error.

>>> import gradviz as torch
>>> torch.cuda.is_available(), torch.cuda.device_count()
(False, 0)
>>> torch.device("cuda" if torch.cuda.is_available() else "cpu")
device(type='cpu')
"""

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "seed", "seed_all", "current_device", "get_device_name", "get_device_properties",
           "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated",
           "is_bf16_supported", "initial_seed", "get_rng_state"]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def manual_seed(seed):
    """Nothing to seed: torch only queues the call until CUDA starts."""


def manual_seed_all(seed):
    """Nothing to seed: torch only queues the call until CUDA starts."""


def seed():
    """Nothing to seed: torch only queues the call until CUDA starts."""


def seed_all():
    """Nothing to seed: torch only queues the call until CUDA starts."""


def empty_cache():
    """Nothing cached: no device memory."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def _no_cuda(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


def current_device():
    _no_cuda()


def get_device_name(device=None):
    _no_cuda()


def get_device_properties(device=None):
    _no_cuda()


def synchronize(device=None):
    _no_cuda()


def initial_seed():
    _no_cuda()


def get_rng_state(device="cuda"):
    _no_cuda()
