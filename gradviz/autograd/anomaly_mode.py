"""Anomaly detection: a forward stack per node, and NaN checks on every backward output."""

import warnings

from .callsite import user_stacklevel
from .grad_mode import _state

__all__ = ["set_detect_anomaly", "detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled():
    return _state.anomaly


def is_anomaly_check_nan_enabled():
    return _state.anomaly_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off (at once, or for the duration of a `with`).

    >>> import gradviz as torch
    >>> _ = torch.autograd.set_detect_anomaly(True); torch.is_anomaly_enabled()
    True
    >>> _ = torch.autograd.set_detect_anomaly(False)
    """

    def __init__(self, mode, check_nan=True):
        self.prev = _state.anomaly
        self.prev_nan = _state.anomaly_nan
        _state.anomaly = bool(mode)
        _state.anomaly_nan = bool(check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.anomaly = self.prev
        _state.anomaly_nan = self.prev_nan
        return False


class detect_anomaly:
    """Context manager enabling anomaly detection inside. As torch's, it warns (UserWarning,
    naming the user's line) each time one is made, and is not a decorator.

    >>> import gradviz as torch, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with torch.autograd.detect_anomaly():
    ...         torch.is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan=True):
        # torch remembers the modes to restore when the object is made, not when entered
        self.prev = _state.anomaly
        self.check_nan = check_nan
        self.prev_nan = _state.anomaly_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning,
                      stacklevel=user_stacklevel())

    def __enter__(self):
        _state.anomaly = True
        _state.anomaly_nan = bool(self.check_nan)

    def __exit__(self, *exc):
        _state.anomaly = self.prev
        _state.anomaly_nan = self.prev_nan
        return False
