"""torch.accelerator as a CPU-only build of torch answers it: there is no accelerator.

Tutorials since torch 2.6 pick their device with it:

>>> import gradviz as torch
>>> torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
'cpu'
"""

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index"]


def is_available():
    return False


def current_accelerator(check_available=False):
    """None: no accelerator (torch returns None on a CPU-only build)."""
    return None


def device_count():
    return 0


def current_device_index():
    raise RuntimeError("Cannot access accelerator device when none is available.")
