"""The module families that share a base class (activations, poolings, layers with a weight
and a bias, Sequential and ModuleList) against torch 2.13: attributes, reprs, what forward reads,
and the parameters registered."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

X = [[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]]

ACTIVATIONS = [
    ("ReLU", (), {"inplace": True}), ("Tanh", (), {}), ("Sigmoid", (), {}),
    ("LogSigmoid", (), {}), ("Softmax", (), {"dim": 1}), ("LogSoftmax", (0,), {}),
    ("GELU", (), {"approximate": "tanh"}), ("SiLU", (), {}), ("LeakyReLU", (0.2,), {}),
    ("ELU", (), {"alpha": 0.5, "inplace": True}), ("Softplus", (2.0, 1.0), {}),
    ("Hardtanh", (-1.5, 2.5), {}), ("ReLU6", (), {"inplace": True}), ("GLU", (), {"dim": 0}),
]


def _activation(t, name, args, kwargs):
    m = getattr(t.nn, name)(*args, **kwargs)
    options = {k: getattr(m, k) for k in ("inplace", "dim", "approximate", "negative_slope",
                                          "alpha", "beta", "threshold", "min_val", "max_val")
               if hasattr(m, k)}
    before = repr(m)
    # forward reads the attributes at call time, as torch's modules do
    for k in ("negative_slope", "alpha", "beta", "max_val"):
        if k in options:
            setattr(m, k, options[k] * 2)
    out = m(t.tensor(X) * 1)
    return before, repr(m), options, out.flatten().tolist()


@pytest.mark.parametrize("name, args, kwargs", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_modules_keep_torchs_options_and_reprs(name, args, kwargs):
    *ours, values = _activation(gradviz, name, args, kwargs)
    *theirs, expected = _activation(torch, name, args, kwargs)
    assert ours == theirs
    assert values == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_activation_modules_have_no_parameters_and_torchs_attributes():
    for t in (torch, gradviz):
        m = t.nn.Hardtanh(0.0, 6.0)
        assert list(m.parameters()) == [] and list(m.state_dict()) == []
    assert repr(gradviz.nn.LeakyReLU(0.1, True)) == "LeakyReLU(negative_slope=0.1, inplace=True)"
    with pytest.raises(AssertionError, match=r"^max_val \(1\) must be greater than min_val \(2\)"):
        gradviz.nn.Hardtanh(2, 1)


def _layers_without_bias(t):
    out = []
    for m in (t.nn.Linear(2, 3, bias=False), t.nn.Conv1d(2, 3, 2, bias=False),
              t.nn.Conv2d(2, 4, 3, bias=False), t.nn.Bilinear(2, 3, 4, bias=False)):
        entry = [repr(m), list(m._parameters), list(m.weight.shape), m.bias]
        try:
            m.bias = t.zeros(3)
        except TypeError as exc:
            entry.append(str(exc).split("'")[2])    # the text around torch's type name
        out.append(entry)
    return out


def test_layers_without_bias_register_a_none_bias_parameter():
    assert _layers_without_bias(gradviz) == _layers_without_bias(torch)


def _pools(t):
    out = []
    for m in (t.nn.MaxPool2d(2), t.nn.MaxPool2d(3, 1, 1, ceil_mode=True),
              t.nn.AvgPool2d(2, stride=1), t.nn.AvgPool2d(3, 2, 1, count_include_pad=False)):
        x = t.arange(32.0).reshape(1, 2, 4, 4)
        out.append([repr(m), m.kernel_size, m.stride, m.padding, m.ceil_mode,
                    m(x).flatten().tolist()])
    return out


def test_pooling_modules_keep_torchs_window_and_options():
    assert _pools(gradviz) == _pools(torch)


def _sequences(t):
    out = []
    for kind in (t.nn.Sequential, t.nn.ModuleList):
        layers = kind(t.nn.ReLU(), t.nn.Tanh()) if kind is t.nn.Sequential else kind(
            [t.nn.ReLU(), t.nn.Tanh()])
        layers.append(t.nn.Sigmoid())
        layers.insert(1, t.nn.GELU())
        # (a negative index is Sequential's only: torch's ModuleList.insert raises KeyError)
        layers.insert(-1 if kind is t.nn.Sequential else 2, t.nn.SiLU())
        popped = layers.pop(0)
        del layers[1]
        out.append([type(popped).__name__, len(layers), list(layers._modules),
                    [type(m).__name__ for m in layers]])
    return out


def test_sequential_and_module_list_append_insert_pop_and_renumber():
    assert _sequences(gradviz) == _sequences(torch)
