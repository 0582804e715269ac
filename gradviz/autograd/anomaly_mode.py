"""Anomaly detection: a forward stack per node, and NaN checks on every backward output."""

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
        return self

    def __exit__(self, *exc):
        _state.anomaly = self.prev
        _state.anomaly_nan = self.prev_nan
        return False


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection inside."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = _state.anomaly
        self.prev_nan = _state.anomaly_nan
        _state.anomaly = True
        _state.anomaly_nan = self.check_nan
        return self

    def __exit__(self, *exc):
        _state.anomaly = self.prev
        _state.anomaly_nan = self.prev_nan
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)
        return wrapper
