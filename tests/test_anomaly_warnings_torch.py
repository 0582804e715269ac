"""Anomaly mode's warnings as torch 2.13 gives them: detect_anomaly() warns UserWarning
"Anomaly Detection has been enabled. ..." from the line that makes it, every time
(set_detect_anomaly does not warn), and an error in backward warns UserWarning
"Error detected in <node>. Traceback of forward call that caused the error:" with the
forward stack. torch's C++ warning names its own autograd/graph.py; gradviz names the user's
line that called backward (every gradviz warning names the user's file and line)."""

import difflib
import inspect
import warnings

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

_THIS = __file__


def _caught(fn, t):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(t)
    return caught


def _enter_twice_and_set(t):
    for _ in range(2):
        with t.autograd.detect_anomaly():
            pass
    with t.autograd.detect_anomaly(check_nan=False):
        pass
    t.autograd.set_detect_anomaly(True)
    t.autograd.set_detect_anomaly(False)
    with t.autograd.set_detect_anomaly(True):
        pass


def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return [start + k for k, line in enumerate(lines) if text in line]


def test_detect_anomaly_warns_as_torch_from_the_line_that_makes_it():
    found = {}
    for t in (gradviz, torch):
        found[t] = [(w.category, str(w.message), w.filename, w.lineno)
                    for w in _caught(_enter_twice_and_set, t)]
    assert found[gradviz] == found[torch]
    made = _line_of(_enter_twice_and_set, "detect_anomaly(")
    assert [(w[2], w[3]) for w in found[gradviz]] == [(_THIS, made[0])] * 2 + [(_THIS, made[1])]
    assert found[gradviz][0][:2] == (UserWarning, "Anomaly Detection has been enabled. This "
                                     "mode will increase the runtime and should only be "
                                     "enabled for debugging.")


def test_detect_anomaly_is_not_a_decorator_and_enters_as_none():
    for t in (gradviz, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError):
                t.autograd.detect_anomaly()(len)
            with t.autograd.detect_anomaly() as entered:
                assert entered is None
            with t.autograd.set_detect_anomaly(False) as entered:
                assert entered is None


def test_detect_anomaly_restores_the_modes_it_was_made_under():
    # torch reads the previous modes when the object is made, not when it is entered
    found = []
    for t in (gradviz, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = t.autograd.detect_anomaly(check_nan=False)
            t.autograd.set_detect_anomaly(True)
            with d:
                inside = (t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled())
            found.append((inside, t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled()))
            t.autograd.set_detect_anomaly(False)
    assert found[0] == found[1] == ((True, False), False, True)


def _forward(x):
    return x.sqrt()


@pytest.mark.parametrize("how", ["nan", "raise"])
def test_error_detected_warning_is_torchs_text_from_the_backward_line(how):
    def run(t):
        class Fails(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                raise ValueError("backward failed")

        x = t.tensor([-1.0, 4.0], requires_grad=True)
        with t.autograd.set_detect_anomaly(True):
            y = _forward(x) if how == "nan" else Fails.apply(x)
            with pytest.raises((RuntimeError, ValueError)):
                y.sum().backward()
    backward_line = _line_of(run, ".backward()")[0]
    found = {}
    for t in (gradviz, torch):
        (w,) = [w for w in _caught(run, t) if "Error detected" in str(w.message)]
        # torch's text ends with its C++ source's place: " (Triggered internally at ...)";
        # under a custom Function torch's stack also has its own function.py frame
        text = str(w.message).split(" (Triggered internally")[0]
        found[t] = (w.category, text if how == "nan" else text.split("\n")[0])
        if t is gradviz:
            assert (w.filename, w.lineno) == (_THIS, backward_line)
    assert found[gradviz] == found[torch], "\n".join(difflib.unified_diff(
        found[torch][1].splitlines(), found[gradviz][1].splitlines(), "torch", "gradviz",
        lineterm=""))
    assert found[gradviz][1].startswith("Error detected in " +
                                        ("SqrtBackward0" if how == "nan" else "FailsBackward"))
