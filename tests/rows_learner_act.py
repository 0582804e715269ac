"""Examples of the activation rows learners reach after relu and gelu: celu, prelu, mish,
hardswish, hardsigmoid, softshrink, hardshrink, threshold and their recorded backwards (merged
into tests/test_core_table.py's EXAMPLES)."""

import gradviz as torch

A4 = [0.3, -1.2, 2.1, -3.6]                 # no point at a kink (+-0.5, +-3, 0.2)
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]


def _double(name, *args):
    """The gradient of nn.functional.<name>(x, *args) with create_graph=True, times x: its
    recorded backward's node (HardswishBackwardBackward0, ...) with an edge to x."""
    def example(x):
        y = getattr(torch.nn.functional, name)(x, *args)
        (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        return g * x
    return example


def _prelu(x, w):
    return torch.nn.functional.prelu(x, w)


def _hardsigmoid_double(x):
    (g,) = torch.autograd.grad(torch.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
    return g


EXAMPLES = {
    "celu": (lambda x: torch.nn.functional.celu(x, 0.7), (A4,), {}),
    "celu_": (lambda x: torch.nn.functional.celu(x * 1, 0.7, inplace=True), (A4,), {}),
    "prelu_kernel": (_prelu, (M23, [0.25, -0.5, 1.5]), {}),
    "mish": (lambda x: torch.nn.functional.mish(x), (A4,), {}),
    "hardswish": (lambda x: torch.nn.functional.hardswish(x), (A4,), {}),
    "hardswish_backward": (_double("hardswish"), (A4,), {}),
    # not twice: torch has no derivative of hardsigmoid_backward (see NO_DERIVATIVE)
    "hardsigmoid": (lambda x: torch.nn.functional.hardsigmoid(x), (A4,), {"second": False}),
    "softshrink": (lambda x: torch.nn.functional.softshrink(x, 0.5), (A4,), {}),
    "softshrink_backward": (_double("softshrink", 0.5), (A4,), {}),
    "hardshrink": (lambda x: torch.nn.functional.hardshrink(x, 0.5), (A4,), {}),
    "hardshrink_backward": (_double("hardshrink", 0.5), (A4,), {}),
    "threshold": (lambda x: torch.nn.functional.threshold(x, 0.2, -1.0), (A4,), {}),
    "threshold_": (lambda x: torch.nn.functional.threshold(x * 1, 0.2, -1.0, inplace=True),
                   (A4,), {}),
}

# torch records hardsigmoid's gradient without a derivative under create_graph=True.
NO_DERIVATIVE = {
    "hardsigmoid_backward": (_hardsigmoid_double,
                             "derivative for aten::hardsigmoid_backward is not implemented"),
}


def _prelu_double(x, w):
    """prelu's gradients with create_graph=True: PreluKernelBackwardBackward0."""
    y = torch.nn.functional.prelu(x, w)
    gx, gw = torch.autograd.grad((y * y).sum(), (x, w), create_graph=True)
    return gx * gx + gw.sum()


EXAMPLES["prelu_kernel_backward"] = (_prelu_double, (M23, [0.25, -0.5, 1.5]), {})
