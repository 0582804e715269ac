"""Core gaps the tutorial learner files found, each compared with torch 2.13.

- A 0-d index into a 1-d tensor: gather/scatter/scatter_/scatter_add count it as 1-d, as
  torch's ensure_nonempty_dim does (PyTorch's Transforms tutorial one-hot encodes a label with
  `torch.zeros(10).scatter_(0, torch.tensor(y), value=1)`), forward and backward.
- reversed(t) is t.flip(0) (FlipBackward0), a 0-d tensor itself (d2l's bidirectional RNN runs
  one cell over `reversed(inputs)`).
- torch.nn.utils.rnn.pad_sequence (NLP tutorials' collate functions): values, the CopySlices
  graph, _version, errors; the module's other names refuse naming --backend torch.
- `from torch.X import name` under `gradviz run` (below).

Each case returns (outputs, leaves) as tests/test_issue11_surface_torch.py's do: values,
dtypes, shapes, the whole graph's grad_fn names and next_functions, saved names and the
gradients of a weighted sum are compared; errors by type and first line.
"""

import pytest

try:
    from .test_issue11_surface_torch import observe, _close, _values_close
except ImportError:
    from test_issue11_surface_torch import observe, _close, _values_close

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _leaf(t, values):
    return t.tensor(values, dtype=t.float64, requires_grad=True)


def _scatter_value_inplace(t):
    x = _leaf(t, [0.5, 1.0, 2.0, 3.0])
    y = x * 1
    y.scatter_(0, t.tensor(2), value=7.0)
    return y, [x]


def _one_hot_lambda(t):
    # the Transforms tutorial's target_transform, on a label given as a Python int
    return t.zeros(10, dtype=t.float).scatter_(0, t.tensor(3), value=1), []


CASES = {
    "scatter_ 0-d index, value=": _scatter_value_inplace,
    "one-hot Lambda": _one_hot_lambda,
    "scatter 0-d index, src 0-d": lambda t: (
        lambda x, s: (x.scatter(0, t.tensor(1), s), [x, s]))(
            _leaf(t, [1.0, 2.0, 3.0]), _leaf(t, 5.0)),
    "scatter 0-d index, src 1-d": lambda t: (
        lambda x, s: (x.scatter(0, t.tensor(2), s), [x, s]))(
            _leaf(t, [1.0, 2.0, 3.0]), _leaf(t, [4.0, 6.0])),
    "scatter 0-d negative dim, number": lambda t: (
        lambda x: (x.scatter(-1, t.tensor(0), 9.5), [x]))(_leaf(t, [1.0, 2.0])),
    "scatter_add 0-d index": lambda t: (
        lambda x, s: (x.scatter_add(0, t.tensor(1), s), [x, s]))(
            _leaf(t, [1.0, 2.0, 3.0]), _leaf(t, 5.0)),
    "gather 0-d index": lambda t: (
        lambda x: (x.gather(0, t.tensor(2)), [x]))(_leaf(t, [1.0, 2.0, 3.0])),
    "gather 0-d index twice (double backward)": lambda t: (
        lambda x: (t.autograd.grad(x.gather(0, t.tensor(1)) ** 2, x, create_graph=True)[0],
                   [x]))(_leaf(t, [1.0, 2.0, 3.0])),
    "gather 0-d index out of range": lambda t: (
        _leaf(t, [1.0, 2.0]).gather(0, t.tensor(2)), []),
    "scatter 0-d index into 2-d": lambda t: (
        t.zeros(2, 3).scatter(0, t.tensor(1), 1.0), []),
    "gather 0-d index from 2-d": lambda t: (t.zeros(2, 3).gather(0, t.tensor(1)), []),
    "scatter 0-d self, 0-d index": lambda t: (
        lambda x: (x.scatter(0, t.tensor(0), 4.0), [x]))(_leaf(t, 2.0)),
    "reversed 1-d": lambda t: (lambda x: (reversed(x), [x]))(_leaf(t, [1.0, 2.0, 3.0])),
    "reversed 2-d": lambda t: (
        lambda x: (reversed(x), [x]))(_leaf(t, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])),
    "reversed 0-d is the tensor itself": lambda t: (
        lambda x: ([reversed(x), reversed(x) is x], [x]))(_leaf(t, 2.0)),
    "reversed rows of an RNN input": lambda t: (
        lambda x: ([r * 2 for r in reversed(x)], [x]))(_leaf(t, [[1.0, 2.0], [3.0, 4.0]])),
    "pad_sequence": lambda t: (
        lambda a, b: (t.nn.utils.rnn.pad_sequence([a, b * 2]), [a, b]))(
            _leaf(t, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), _leaf(t, [[7.0, 8.0]])),
    "pad_sequence batch_first, padding_value": lambda t: (
        lambda a, b: (t.nn.utils.rnn.pad_sequence((a, b), batch_first=True, padding_value=-1),
                      [a, b]))(_leaf(t, [1.0, 2.0, 3.0]), _leaf(t, [4.0])),
    "pad_sequence left": lambda t: (
        lambda a, b: ([t.nn.utils.rnn.pad_sequence([a, b], batch_first=True,
                                                   padding_side="left"),
                       t.nn.utils.rnn.pad_sequence([a, b], padding_side="left")], [a, b]))(
            _leaf(t, [1.0, 2.0, 3.0]), _leaf(t, [4.0, 5.0])),
    "pad_sequence of token ids, float padding": lambda t: (
        t.nn.utils.rnn.pad_sequence([t.tensor([5, 6, 7]), t.tensor([8])], padding_value=1.5),
        []),
    "pad_sequence _version": lambda t: {
        "versions": [t.nn.utils.rnn.pad_sequence([t.ones(2)] * n)._version for n in (1, 2, 3)]},
    "pad_sequence of a tensor's rows": lambda t: (
        t.nn.utils.rnn.pad_sequence(t.arange(6.0).reshape(2, 3)), []),
    "pad_sequence empty": lambda t: (t.nn.utils.rnn.pad_sequence([]), []),
    "pad_sequence not iterable": lambda t: (t.nn.utils.rnn.pad_sequence(3), []),
    "pad_sequence padding_side": lambda t: (
        t.nn.utils.rnn.pad_sequence([t.ones(1)], padding_side="middle"), []),
    "pad_sequence trailing sizes differ": lambda t: (
        t.nn.utils.rnn.pad_sequence([t.ones(2, 3), t.ones(1, 4)]), []),
}


def _differences(case):
    ref, got = observe(torch, case), observe(gradviz, case)
    if ref[0] != got[0]:
        return [f"torch {ref}\ngradviz {got}"]
    if ref[0] == "error":
        return [] if ref[1:] == got[1:] else [f"errors: torch {ref[1:]}, gradviz {got[1:]}"]
    if ref[0] == "data":
        return [] if ref == got else [f"data: torch {ref[1]}, gradviz {got[1]}"]
    problems = []
    for i, (r, g) in enumerate(zip(ref[1], got[1])):
        if r[0] == "python" or g[0] == "python":
            if r != g:
                problems.append(f"output {i}: {r} vs {g}")
        elif r[1:3] != g[1:3] or not _close(r[3], g[3], r[1], False):
            problems.append(f"output {i}: {r[1:4]} vs {g[1:4]}")
        elif [n[:2] for n in r[4]] != [n[:2] for n in g[4]]:
            problems.append(f"output {i} graph: {r[4]} vs {g[4]}")
        elif not all(set(gs) <= set(ts) for (_, _, ts), (_, _, gs) in zip(r[4], g[4])):
            problems.append(f"output {i} saved names: {r[4]} vs {g[4]}")
    if len(ref[1]) != len(got[1]) or not _values_close(ref[2], got[2], False):
        problems.append(f"outputs/gradients: {ref[1:]} vs {got[1:]}")
    return problems


@pytest.mark.parametrize("name", sorted(CASES))
def test_tutorial_gap_matches_torch(name):
    problems = _differences(CASES[name])
    assert not problems, "\n".join(problems)


def test_the_comparison_sees_a_scatter_that_writes_everywhere():
    """What gradviz did before: a 0-d index addressed the whole 1-d gradient (grad of x all 0)."""
    def case(t):
        x = _leaf(t, [1.0, 2.0, 3.0])
        y = x.scatter(0, t.tensor(1), 5.0) if t is torch else x * 0 + 5.0
        return y, [x]
    assert _differences(case)


# ----- `from torch.X import name` for a name the core lacks, under `gradviz run` ------------

IMPORTS = {
    # statement -> the start of the message, then whether it names --backend torch
    "from torch.nn import Transformer": ("cannot import name 'Transformer' from 'torch.nn': "
                                         "gradviz's core does not implement torch.nn.Transformer",
                                         True),
    "from torch import vmap": ("cannot import name 'vmap' from 'torch': gradviz's core does "
                               "not implement torch.vmap", True),
    "from torch.nn.functional import Linear, adaptive_max_pool2d": (
        "cannot import name 'Linear' from 'torch.nn.functional'", False),
    "from torch.nn import Linear, Transformer": ("cannot import name 'Transformer' from "
                                                 "'torch.nn': gradviz's core", True),
    "from torch.utils.data import WeightedRandomSampler": (
        "cannot import name 'WeightedRandomSampler' from 'torch.utils.data': gradviz's core "
        "does not implement torch.utils.data.WeightedRandomSampler", True),
    "from torch.nn import Linearr": ("cannot import name 'Linearr' from 'torch.nn' (", False),
}


def _run(tmp_path, statement):
    from gradviz.inspect import run_file
    path = tmp_path / "imports.py"
    path.write_text(f"import torch\n{statement}\nprint('imported')\n")
    return run_file(str(path))


@pytest.mark.parametrize("statement", sorted(IMPORTS))
def test_from_import_of_a_missing_name_says_what_torch_has(tmp_path, statement):
    start, hint = IMPORTS[statement]
    run = _run(tmp_path, statement)
    assert run.error.type == "ImportError" and run.error.line == 2
    assert run.error.message.startswith(start), run.error.message
    assert ("--backend torch" in run.error.message) == hint
    assert "'gradviz" not in run.error.message


def test_from_import_of_a_name_torch_lacks_gives_torchs_first_words(tmp_path):
    """A typo: PyTorch's own ImportError, up to the path, with the close name suggested."""
    with pytest.raises(ImportError) as real:
        exec("from torch.nn import Linearr", {})
    ours = _run(tmp_path, "from torch.nn import Linearr").error.message
    assert ours.split(" (")[0] == str(real.value).split(" (")[0]
    assert ours.endswith(". Did you mean: 'Linear'?")


def test_the_packed_sequence_names_refuse_with_the_torch_backend_hint():
    for name in ("PackedSequence", "pack_padded_sequence", "pad_packed_sequence"):
        assert hasattr(torch.nn.utils.rnn, name)
        with pytest.raises(AttributeError, match="--backend torch"):
            getattr(gradviz.nn.utils.rnn, name)
    with pytest.raises(AttributeError, match="has no attribute 'pad_sequences'"):
        gradviz.nn.utils.rnn.pad_sequences
