"""Every example gives the same document on both backends: `run --json` (tensors, grad_fn,
next_functions, saved tensors, gradients, hooks, the engine's steps, errors) and
`check-inplace` (findings), on gradviz's core and on PyTorch 2.13 through the torch tracer.

The examples run in this process (torch is imported once), each after the same seed, and each
document is made once per module and compared field by field. What may differ is listed in
DIFFERENCES, with the reason; anything else that differs fails.
"""

import os
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradviz.inspect import run_file  # noqa: E402
from gradviz.inspect.inplace import check_inplace  # noqa: E402

try:
    from .example_files import EXAMPLES, example_files
except ImportError:
    from example_files import EXAMPLES, example_files

SEED = 67280421310721

# Fields whose values differ on purpose, with the reason.
DIFFERENCES = {
    ("report", "backend"): "the backend's name",
    ("report", "stdout"): "compared by tests/test_examples_torch.py, which runs the files as "
                          "scripts on both",
    ("report", "warnings"): "torch warns once per process, the core on every run; torch's "
                            "texts end with its own pointers (\"(Triggered internally at "
                            "...)\"), and detect_anomaly() warns that it is on (compared: "
                            "test_warnings_come_from_the_files_line)",
    ("tensor", "inside one call"): "a tensor made inside one torch call (F.linear's weight.t(), "
                                   "F.cross_entropy's log_softmax) has no Python object on "
                                   "torch: its row has the name, grad_fn and next_functions, "
                                   "not shape, dtype, version or values",
    ("node", "saved"): "torch also lists sizes and numbers the core's row does not keep "
                       "(_saved_alpha, _saved_mat2_sym_sizes), and wraps a saved Python number "
                       "as a tensor; the core's saved entries are all there on torch",
    ("node", "inputs"): "a node made inside one torch call lists the tensors its edges lead "
                        "to; the call's own node lists the call's arguments",
}

# Examples whose documents differ in more than the fields above, with the reason: only the
# graph (node names and edges) and the named tensors' gradients are compared for them.
GRAPH_ONLY = {
    "nested_modules.py": "torch names a module call's output by its module "
                         "(norm(linear(x))), the core by the op inside (native_layer_norm)",
    "resnet_cnn.py": "torch names a module call's output by its module (bn1(%12)), the core "
                     "by the op inside, as in nested_modules.py",
    "dcgan_transposed_conv.py": "the BatchNorm2d outputs are named as in resnet_cnn.py",
    "custom_function.py": "torch.autograd.gradcheck runs the Function's backward 8 times "
                          "(its reentrancy and undefined-gradient checks, one grad_output "
                          "edited in place), the core's 3 times: the backward's locals are "
                          "those of other calls ([6] against [1])",
    "every_hook_kind.py": "F.linear is one call on torch: its addmm node's inputs are the "
                          "call's (x, weight, bias), as in adam_scheduler_training.py",
    "module_hooks.py": "F.linear is one call on torch (as in every_hook_kind.py): the names "
                       "built on its addmm output differ",
    "softmax_cross_entropy.py": "F.cross_entropy is one call on torch: its log_softmax output "
                                "has no Python object (named %N), so names built on it differ",
    "adam_scheduler_training.py": "F.linear is one call on torch: its addmm node's inputs are "
                                  "the call's (x, weight, bias), not (bias, x, weight.t())",
    "lazy_model_optimizer.py": "F.linear is one call on torch, as in adam_scheduler_training.py",
    "name_classifier_rnn.py": "nn.RNN is one call on torch (_VF.rnn_tanh): the tensors made "
                              "inside it have no Python object, so names built on them differ",
    "char_rnn_lstm.py": "nn.LSTM is one call on torch (_VF.lstm), as nn.RNN in "
                        "name_classifier_rnn.py",
}


# Long training loops (hundreds of steps, 5-25 s a file on two busy cores): the test must stay
# under 45 s. Their ops and loops are those of training_loop_mlp.py, def_main_script.py and
# custom_function.py, compared here; tests/test_examples_torch.py runs them on both.
HEAVY = {"makemore_mlp.py", "loop_in_main.py", "polynomial_custom_function.py",
         "mnist_cnn_adadelta.py"}   # (its convolutions and pooling: cnn_random_data.py)

# Examples whose graphs differ by design, with the reason (tests/test_examples_torch.py still
# checks that they print torch's numbers).
FUSED = {}

# Where the torch tracer does not yet record what the core does: (test, example) -> what
# differs. Each is an expected failure (strict: one that passes must leave this list).
KNOWN = {
    ("calls", "char_rnn_lstm.py"): "the order of the LSTM's leaf hooks: torch's engine pops "
                                   "bias_hh_l0's AccumulateGrad before bias_ih_l0's (equal "
                                   "priorities in its ready heap), the core the older first",
    ("graph", "custom_function.py"): "gradcheck's backward calls (GRAPH_ONLY): the backward's "
                                     "locals of torch's last 3 calls are not the core's",
    ("graph", "jacobian_hessian.py"): "jvp's result has _version 1 on torch: two gradients "
                                      "meeting at its grad_outputs leaf are summed in place "
                                      "(InputBuffer::accumulate's add_), the core sums arrays",
    ("calls", "dcgan_transposed_conv.py"): "the torch tracer reports the last "
                                           "errD_real.backward() without its root, and 85 "
                                           "leaf-gradient records where the core has 101 "
                                           "(the nodes each backward call runs are the same)",
    ("graph", "autograd_jacobian_product.py"): "torch.matmul(x, w) with a 1-D x: torch's matmul "
                                               "squeezes mm's result in place (squeeze_), and "
                                               "that tensor's row shows SqueezeBackward4 on "
                                               "the core (read at the report), MmBackward0 on "
                                               "torch (recorded when it was made)",
    ("calls", "autograd_jacobian_product.py"): "the tensor hooks listed: the core also lists "
                                               "those of the first graph (loss, add(inp, …)), "
                                               "the torch tracer starts at out",
    ("graph", "freeze_parameters_finetune.py"): "model[4] is replaced after a first backward: "
                                                "the first forward's intermediates are named "
                                                "relu(%7) on the core, relu(…) on torch",
    ("values", "freeze_parameters_finetune.py"): "the same naming: t(…) is paired with the "
                                                 "other Linear's transposed weight",
    ("calls", "freeze_parameters_finetune.py"): "the tensor hooks listed: the core also lists "
                                                "those of the earlier graphs (loss, pow(…)), "
                                                "the torch tracer starts at out2",
    ("calls", "jacobian_hessian.py"): "the nodes autograd.functional made in its earlier "
                                      "calls: the core's are still alive when the report is "
                                      "made (the roots of calls 5-8, the gradients that reached "
                                      "g[1].x in calls 2-4), torch frees them as hvp returns and "
                                      "the torch tracer lets go of what its last call did not "
                                      "reach",
}


def _examples(test=None):
    names = [f for f in example_files(include_torch_only=False)
             if f not in HEAVY and f not in FUSED]
    if test is None:
        return names
    out = []
    for n in names:
        if (test, n) in KNOWN:
            n = pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[test, n]))
        out.append(n)
    return out


_CACHE = {}


def _seed():
    import gradviz
    gradviz.manual_seed(SEED)
    torch.manual_seed(SEED)


def _documents(name):
    # one thread: torch's thread pool spins against the other processes of a busy machine
    # (50 s instead of 2 s for makemore_mlp.py on 2 shared cores)
    torch.set_num_threads(1)
    if name not in _CACHE:
        path = os.path.join(EXAMPLES, name)
        out = {}
        for backend in ("gradviz", "torch"):
            _seed()
            out[backend] = run_file(path, backend=backend).report()
        _CACHE[name] = out
    return _CACHE[name]


@pytest.fixture(scope="module")
def documents():
    yield _documents
    _CACHE.clear()


def _close(a, b):
    """a and b within float32 rounding; nan matches nan (both backends found it)."""
    if isinstance(a, list) and isinstance(b, list):
        try:
            x, y = np.array(a, dtype=float), np.array(b, dtype=float)
        except (TypeError, ValueError):
            pass        # ragged, or holding None: element by element
        else:
            return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-4, atol=1e-5,
                                                           equal_nan=True))
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return bool(np.isclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True))
    if isinstance(a, str) and isinstance(b, str) and a.startswith("<") and b.startswith("<"):
        # a summary (<840 elements, shape [10, 84]: min …, max …, mean …>): the same words,
        # numbers within the tolerance (a mean near 0 is float32 rounding noise)
        words_a, words_b = _NUMBER.split(a), _NUMBER.split(b)
        return words_a == words_b and _close([float(x) for x in _NUMBER.findall(a)],
                                             [float(x) for x in _NUMBER.findall(b)])
    return a == b


_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def _tensor_view(t, inside_one_call=False):
    keys = ("name", "requires_grad", "is_leaf", "grad_fn", "next_functions", "retains_grad",
            "is_parameter", "is_root", "generated")
    if not inside_one_call:
        keys += ("shape", "dtype", "version", "file", "line", "edits")
    return {k: t[k] for k in keys}


def _tensors(gv, tc):
    """The tensor rows of both, with the fields both have (DIFFERENCES: inside one call)."""
    inside = [t["generated"] and t["shape"] is None for t in tc["tensors"]]
    return ([_tensor_view(t, i) for t, i in zip(gv["tensors"], inside)],
            [_tensor_view(t, i) for t, i in zip(tc["tensors"], inside)])


def _node_view(n):
    return {"name": n["name"], "tensor": n["tensor"], "variable": n["variable"],
            "next_functions": n["next_functions"], "file": n["file"], "line": n["line"]}


def _saved_view(gv_node, tc_node):
    """The core's saved entries, and torch's entries of the same names (DIFFERENCES)."""
    theirs = {s["name"]: s for s in tc_node["saved"]}
    keys = ("name", "saved_version", "freed")
    # (a number the in-place op inside a CopySlices saved as a 0-d tensor: torch's CopySlices
    # shows no `_saved_*` of the op it holds, the core's report does)
    mine = [{k: s[k] for k in keys} for s in gv_node["saved"] if s["shape"] is not None
            and not (gv_node["name"] == "CopySlices" and s["value"] is not None)]
    found = [{k: theirs[s["name"]][k] for k in keys} if s["name"] in theirs else s["name"]
             for s in mine]
    return mine, found


@pytest.mark.parametrize("name", _examples("graph"))
def test_same_tensors_and_graph(documents, name):
    docs = documents(name)
    gv, tc = docs["gradviz"], docs["torch"]
    assert [n["name"] for n in tc["nodes"]] == [n["name"] for n in gv["nodes"]]
    assert [n["next_functions"] for n in tc["nodes"]] == \
        [n["next_functions"] for n in gv["nodes"]]
    named = [_tensor_view(t) for t in gv["tensors"] if not t["generated"]]
    assert [_tensor_view(t) for t in tc["tensors"] if not t["generated"]] == named
    assert tc["roots"] == gv["roots"]
    if name in GRAPH_ONLY:
        return
    mine, theirs = _tensors(gv, tc)
    assert theirs == mine
    assert [_node_view(n) for n in tc["nodes"]] == [_node_view(n) for n in gv["nodes"]]
    for a, b in zip(gv["nodes"], tc["nodes"]):
        mine, found = _saved_view(a, b)
        assert found == mine, a["id"]


@pytest.mark.parametrize("name", _examples("values"))
def test_same_values_and_gradients(documents, name):
    docs = documents(name)
    gv, tc = docs["gradviz"], docs["torch"]
    pairs = zip(gv["tensors"], tc["tensors"])
    if name in GRAPH_ONLY:
        # the rows both have, by name (GRAPH_ONLY: the rows may differ)
        theirs = {t["name"]: t for t in tc["tensors"]}
        pairs = [(t, theirs[t["name"]]) for t in gv["tensors"] if t["name"] in theirs]
    for a, b in pairs:
        if b["generated"] and (b["shape"] is None or name in GRAPH_ONLY):
            continue        # DIFFERENCES: inside one call
        assert _close(b["data"], a["data"]), a["name"]
        assert _close(b["grad"], a["grad"]), a["name"]
    for a, b in zip(gv["nodes"], tc["nodes"]):
        assert _close(b["grad"], a["grad"]), a["id"]


@pytest.mark.parametrize("name", _examples("calls"))
def test_same_backward_calls_hooks_and_errors(documents, name):
    docs = documents(name)
    gv, tc = docs["gradviz"], docs["torch"]
    assert _user_hooks(tc, name) == _user_hooks(gv, name)
    for a, b in zip(gv["user_hooks"], tc["user_hooks"]):
        assert _close(b["grad_in"], a["grad_in"]) and _close(b["grad_out"], a["grad_out"]), a
    if name in GRAPH_ONLY:
        assert [h["node"] for h in tc["hooks"]] == [h["node"] for h in gv["hooks"]]
        return
    assert [(h["target"], h["node"], h["kind"]) for h in tc["hooks"]] == \
        [(h["target"], h["node"], h["kind"]) for h in gv["hooks"]]
    assert all(_close(b["grad"], a["grad"]) for a, b in zip(gv["hooks"], tc["hooks"]))

    def calls(doc):
        return [(c["kind"], c["roots"], c["file"], c["line"], c["by_gradviz"],
                 [(s["node"], s["name"], s["tensor"], s["accumulated"], s["hooks"])
                  for s in c["steps"]])
                for c in doc["backward_calls"]]
    assert calls(tc) == calls(gv)
    assert [(a["node"], a["name"]) for a in tc["anomalies"]] == \
        [(a["node"], a["name"]) for a in gv["anomalies"]]
    assert tc["exit_code"] == gv["exit_code"]
    if gv["error"] is not None:
        assert tc["error"]["type"] == gv["error"]["type"]
        assert tc["error"]["line"] == gv["error"]["line"]
        assert tc["error"]["message"].split(". ")[0] == gv["error"]["message"].split(". ")[0]
    else:
        assert tc["error"] is None
    assert tc["iterations"] == gv["iterations"]


def _user_hooks(doc, name):
    """The file's own hooks as they fired (their gradients compared apart, within tolerance);
    for GRAPH_ONLY examples, without the names of the tensors they fired at."""
    keys = ("index", "call", "kind", "node", "before_call", "node_name", "module", "input_nr",
            "function", "file", "line", "changed", "changed_upstream")
    if name not in GRAPH_ONLY:
        keys += ("target",)
    return [{k: h[k] for k in keys} for h in doc["user_hooks"]]


def test_the_documents_have_the_same_keys(documents):
    docs = documents("mul_chain_backward.py")
    gv, tc = docs["gradviz"], docs["torch"]
    assert list(tc) == list(gv)
    assert tc["backend"] == "torch" and gv["backend"] == "gradviz"
    assert [list(t) for t in tc["tensors"]] == [list(t) for t in gv["tensors"]]
    assert [list(n) for n in tc["nodes"]] == [list(n) for n in gv["nodes"]]


def test_differences_are_the_listed_ones(documents):
    docs = documents("mul_chain_backward.py")
    differ = {("report", k) for k in docs["gradviz"]
              if k not in ("file", "tensors", "nodes")
              and docs["gradviz"][k] != docs["torch"][k]}
    assert differ <= set(DIFFERENCES), differ - set(DIFFERENCES)


_INPLACE = sorted(f for f in _examples() if "inplace" in f)


@pytest.mark.parametrize("name", _INPLACE)
def test_check_inplace_finds_the_same(name):
    path = os.path.join(EXAMPLES, name)
    found = {b: check_inplace(path, backend=b) for b in ("gradviz", "torch")}

    def view(doc):
        return [{k: f[k] for k in ("kind", "tensor", "op", "via", "file", "line", "saved_by",
                                    "saved_as", "saved_line", "saved_version", "version",
                                    "roots")} for f in doc["findings"]]
    assert view(found["torch"]) == view(found["gradviz"])
    assert [(w["kind"], w["tensor"], w["line"]) for w in found["torch"]["warnings"]] == \
        [(w["kind"], w["tensor"], w["line"]) for w in found["gradviz"]["warnings"]]


# ----- explain and gradcheck give the same document on both backends --------------------------

# Examples whose every named tensor is explained on both backends (one run of the file per
# tensor and backend: a few small examples keep the test fast).
EXPLAINED = ["hooks_marked.py", "mul_chain_backward.py", "no_grad_and_detach.py",
             "relu_zero_grad.py", "retain_graph_accumulate.py"]

# (example, tensor) -> why explain's causes differ; its .grad, the gradient it computed and the
# path are compared all the same.
_UPSTREAM_HOOK = ("a hook of another tensor that changed the gradient on its way to NAME "
                  "('hooks above x changed the gradient') is named on the core only: on torch "
                  "a hook is found at NAME's own node, by what reached it against what was sent")
EXPLAIN_DIFFERENCES = {
    ("hooks_marked.py", "x"): _UPSTREAM_HOOK,
    ("hooks_marked.py", "w"): _UPSTREAM_HOOK,
}


@pytest.mark.parametrize("name", EXPLAINED)
def test_explain_gives_the_same_document_for_every_named_tensor(name):
    from gradviz.inspect.explain import explain
    torch.set_num_threads(1)
    path = os.path.join(EXAMPLES, name)
    run = run_file(path)
    # the file's own names (a hook's locals are named only while the hook's frame is kept)
    tensors = [n for n in run.names() if not run.made_in_function(n)]
    assert tensors
    for tensor in tensors:
        docs = {}
        for backend in ("gradviz", "torch"):
            _seed()
            docs[backend] = explain(path, tensor, backend=backend)
        gv, tc = docs["gradviz"], docs["torch"]
        assert _close(tc.pop("grad"), gv.pop("grad")), tensor
        assert _close(tc.pop("computed"), gv.pop("computed")), tensor
        if (name, tensor) in EXPLAIN_DIFFERENCES:
            assert [c["kind"] for c in gv["causes"]] == ["hook"], tensor
            gv.pop("causes"), tc.pop("causes")
        assert tc == gv, tensor


# Examples checked by gradcheck on both backends (at most 4 elements a leaf): a match, a
# broadcast, module parameters, a data-dependent branch, autograd.grad, and a file that
# raised. (Training loops fail on both, their optimizer having edited the weights in place;
# tests/test_gradcheck.py checks backward_failed on both.)
GRADCHECKED = ["broadcast_grad_shape.py", "dynamic_if_abs.py", "inplace_version_error.py",
               "mul_chain_backward.py", "nn_module_parameters.py", "second_derivative.py",
               "softmax_cross_entropy.py"]

# What may differ in a gradcheck document, with the reason.
GRADCHECK_DIFFERENCES = {
    "max_abs_error": "the finite differences' rounding error (about 1e-9 in float64) depends on "
                     "the order of each backend's float sums; the verdicts do not",
    "max_rel_error": "as max_abs_error",
    "worst": "the element with the largest rounding error (as max_abs_error); its analytic "
             "value is compared",
}


def _gradcheck_view(doc):
    roots = []
    for r in doc["roots"]:
        leaves = [{k: v for k, v in lf.items() if k not in GRADCHECK_DIFFERENCES}
                  for lf in r["leaves"]]
        roots.append(dict(r, leaves=leaves))
    return dict(doc, roots=roots)


@pytest.mark.parametrize("name", GRADCHECKED)
def test_gradcheck_gives_the_same_document(name):
    from gradviz.inspect.gradcheck import gradcheck_file
    torch.set_num_threads(1)        # as _documents: torch's thread pool on busy cores
    path = os.path.join(EXAMPLES, name)
    docs = {}
    for backend in ("gradviz", "torch"):
        _seed()
        docs[backend] = gradcheck_file(path, max_elements=4, backend=backend)
    gv, tc = docs["gradviz"], docs["torch"]
    assert list(tc) == list(gv)
    assert _gradcheck_view(tc) == _gradcheck_view(gv)
    for a, b in zip(gv["roots"], tc["roots"]):
        for la, lb in zip(a["leaves"], b["leaves"]):
            assert (la["worst"] is None) == (lb["worst"] is None)
            if la["worst"] is not None:
                assert _close(lb["worst"]["analytic"], la["worst"]["analytic"])


# ----- names come from the file --------------------------------------------------------------

_DEEPCOPY = """\
import copy

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([copy.deepcopy(nn.Linear(2, 2)) for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


model = Net()
loss = model(torch.ones(1, 2)).sum()
loss.backward()
"""


def test_modules_copied_by_the_standard_library_are_named_by_the_file(tmp_path):
    # copy.deepcopy's frames (the standard library's) name nothing: the inline template it
    # copied is gone, as under python, and the copies are the model's
    path = tmp_path / "deepcopy_layers.py"
    path.write_text(_DEEPCOPY)
    for backend in ("gradviz", "torch"):
        report = run_file(str(path), backend=backend).report()
        assert [(t["name"], t["line"]) for t in report["tensors"] if not t["generated"]] == [
            ("model.layers.0.weight", 18), ("model.layers.0.bias", 18),
            ("model.layers.1.weight", 18), ("model.layers.1.bias", 18), ("loss", 19),
            ("Net.forward.x", 14)], backend


def test_inline_transformer_template_is_not_named_after_copy(tmp_path):
    path = tmp_path / "inline_encoder.py"
    path.write_text("""\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True), 2,
            enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x).mean()


model = Net()
model(torch.randn(2, 4, 8)).backward()
""")
    report = run_file(str(path), backend="torch").report()
    names = [t["name"] for t in report["tensors"] if t["is_parameter"]]
    assert len(names) == 24
    assert all(n.startswith("model.encoder.layers.") for n in names), names


# ----- version counters: one helper for check-inplace and explain ----------------------------

def test_version_counter_follows_torch_aliases(tmp_path):
    # torch: a view and a detach() alias share their base's version counter, a `.data` alias
    # gets its own; the core's counter object says the same
    from gradviz.inspect.inplace import version_counter
    path = tmp_path / "aliases.py"
    path.write_text("import torch\n\nx = torch.ones(4)\nd = x.detach()\nv = x[1:]\n"
                    "a = x.data\nother = torch.ones(4)\n")
    for backend in ("gradviz", "torch"):
        run = run_file(str(path), backend=backend)
        counter = {n: version_counter(run.tensor(n), run.tracer)
                   for n in ("x", "d", "v", "a", "other")}
        assert counter["d"] == counter["x"] and counter["v"] == counter["x"], backend
        assert counter["a"] != counter["x"] and counter["other"] != counter["x"], backend


def test_edits_through_a_detach_alias_are_found_on_both_backends(tmp_path):
    path = tmp_path / "detach_alias.py"
    path.write_text("import torch\n\nx = torch.ones(3, requires_grad=True)\n"
                    "z = (x * 2).exp()\nd = z.detach()\nd.mul_(2)\nz.sum().backward()\n")
    for backend in ("gradviz", "torch"):
        found = check_inplace(str(path), backend=backend)["findings"]
        assert [(f["tensor"], f["op"], f["via"], f["line"], f["saved_as"]) for f in found] == \
            [("z", "mul_", "d", 6, "_saved_result")], backend


def test_hooks_of_a_copied_module_are_reported_and_it_still_saves(tmp_path):
    # the torch tracer wraps the file's hooks: a deep copy of a hooked module reports its own
    # firings, as on the core, and torch.save pickles the file's hook, not the wrapper
    path = tmp_path / "copy_hooked.py"
    path.write_text("import copy\nimport io\n\nimport torch\nfrom torch import nn\n\n\n"
                    "def show(module, args, output):\n    print('forward')\n\n\n"
                    "lin = nn.Linear(2, 2)\nlin.register_forward_hook(show)\n"
                    "twin = copy.deepcopy(lin)\nif hasattr(torch, 'save'):\n"
                    "    torch.save(lin, io.BytesIO())\nout = twin(torch.ones(1, 2))\n")
    for backend in ("gradviz", "torch"):
        run = run_file(str(path), backend=backend)
        assert run.error is None, backend
        assert [(h["kind"], h["module"], h["function"], h["line"])
                for h in run.report()["user_hooks"]] == \
            [("module_forward", "twin", "show", 8)], backend


def test_a_copied_modules_bound_hook_is_the_copys_and_its_pickle_needs_no_gradviz(tmp_path):
    # a hook that is a bound method of its module is bound to the copy after copy.deepcopy,
    # as in plain Python; a module saved with a hook loads where gradviz is not installed
    path = tmp_path / "bound_hook.py"
    path.write_text("import copy\nimport io\n\nimport torch\nfrom torch import nn\n\n\n"
                    "class Counted(nn.Linear):\n"
                    "    def __init__(self):\n        super().__init__(2, 2)\n"
                    "        self.seen = 0\n        self.register_forward_hook(self.count)\n\n"
                    "    def count(self, module, args, output):\n        self.seen += 1\n\n\n"
                    "orig = Counted()\ntwin = copy.deepcopy(orig)\nout = twin(torch.ones(1, 2))\n"
                    "buf = io.BytesIO()\ntorch.save(orig, buf)\ndata = buf.getvalue()\n")
    run = run_file(str(path), backend="torch")
    assert run.error is None
    ns = run.namespace
    assert (ns["orig"].seen, ns["twin"].seen) == (0, 1)
    assert b"gradviz" not in ns["data"]


def test_a_hooked_modules_output_nodes_name_their_inputs_on_both_backends():
    # torch makes BackwardHookFunctionBackward inside Module.__call__: its outputs are named
    # after the module's arguments, as on the core (not backward_hook_function())
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "module_hooks.py")
    targets = {}
    for backend in ("gradviz", "torch"):
        hooks = run_file(path, backend=backend).report()["hooks"]
        targets[backend] = [h["target"] for h in hooks
                            if h["target"].startswith("backward_hook_function")]
    assert targets["torch"] == targets["gradviz"] and targets["torch"]
    assert "backward_hook_function()" not in targets["torch"]


# ----- what runs inside backward() is seen on torch too --------------------------------------

_CUSTOM_FUNCTION = """\
import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_x = 2 * x * grad_output
        return grad_x


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = Square.apply(a)
loss = b.sum()
loss.backward()
"""


def test_a_custom_functions_node_and_backward_locals_are_recorded_on_both_backends(tmp_path):
    # torch's function modes see neither Function.apply nor what backward() runs: the tracer
    # records apply's node at the file's line, and turns the mode on for the Function's
    # backward, whose gradient is made by the backward call (line 20), as on the core
    path = tmp_path / "square_function.py"
    path.write_text(_CUSTOM_FUNCTION)
    found = {}
    for backend in ("gradviz", "torch"):
        report = run_file(str(path), backend=backend).report()
        found[backend] = (
            [(n["name"], n["line"]) for n in report["nodes"]],
            [(t["name"], t["line"], t["data"]) for t in report["tensors"]
             if t["name"].startswith("Square.backward")])
    assert found["torch"][0] == found["gradviz"][0] == [
        ("SumBackward0", 19), ("SquareBackward", 18), ("AccumulateGrad", 18)]
    assert found["gradviz"][1] == [("Square.backward.grad_output", 20, [1.0, 1.0]),
                                   ("Square.backward.grad_x", 13, [2.0, 4.0])]
    # torch rewraps what a saved-tensor unpack hook returns: under the tracer's hooks,
    # ctx.saved_tensors gives a new tensor object for a, a row of its own (README)
    assert found["torch"][1] == [found["gradviz"][1][0], ("Square.backward.x", None, [1.0, 2.0]),
                                 found["gradviz"][1][1]]


def test_autograd_grad_records_what_reached_a_leaf_and_leaves_its_hooks_as_they_were(tmp_path):
    # autograd.grad runs no AccumulateGrad (no node hook fires there): the tracer's tensor hook
    # on the leaf records the gradient, as the core does, and is taken off after the call
    path = tmp_path / "grad_of_leaf.py"
    path.write_text("import torch\n\nx = torch.tensor(4.0, requires_grad=True)\n"
                    "w = torch.tensor(2.0, requires_grad=True)\nw.register_hook(lambda g: g * 2)\n"
                    "y = w * x ** 3\n(gx, gw) = torch.autograd.grad(y, (x, w), create_graph=True)\n"
                    "hooks = (x._backward_hooks, len(w._backward_hooks))\n")
    found = {}
    for backend in ("gradviz", "torch"):
        run = run_file(str(path), backend=backend)
        report = run.report()
        found[backend] = [(h["target"], h["grad"]) for h in report["hooks"]]
        if backend == "torch":
            assert run.namespace["hooks"] == (None, 1)
    assert found["torch"] == found["gradviz"]
    assert ("x", 96.0) in found["torch"] and ("w", 128.0) in found["torch"]


def test_a_gradient_summed_to_a_0d_input_under_create_graph_is_one_sum_as_torchs():
    # torch's sum_to sums to a 0-d shape with one sum() (SumBackward0), where it sums the
    # leading dims and views otherwise (SumBackward1, ViewBackward0): jvp's graph in
    # jacobian_hessian.py goes through it
    import gradviz
    graphs = []
    for lib in (gradviz, torch):
        for shape, size in (((), (3,)), ((1,), (2, 3))):
            x = lib.ones(shape, requires_grad=True)
            v = lib.ones(size, requires_grad=True)
            (g,) = lib.autograd.grad(x.expand(size), x, v, create_graph=True)
            graphs.append((type(g.grad_fn).__name__,
                           [type(f).__name__ for f, _ in g.grad_fn.next_functions]))
    assert graphs[:2] == graphs[2:] == [("SumBackward0", ["AccumulateGrad"]),
                                        ("ViewBackward0", ["SumBackward1"])]


_EDITED_SAVED = """\
import torch

x = torch.ones(2, requires_grad=True)
errors = []
for edit in ("output", "input", "setitem", "twice"):
    a = x + 2
    y = a.exp() if edit == "output" else a * a
    if edit == "output":
        y.add_(1)
    elif edit == "input":
        a.mul_(2)
    elif edit == "setitem":
        a[0] = 5
    else:
        a.mul_(2).add_(1)
    try:
        y.sum().backward()
    except RuntimeError as exc:
        errors.append(str(exc))
"""


def test_a_saved_tensors_version_error_on_the_torch_backend_is_torchs_own(tmp_path):
    # the tracer checks versions itself (torch skips the check for hooked saved tensors): its
    # message names what torch names, the saved input's grad_fn as it is now (CopySlices,
    # Add), the saving node for a saved output (Exp)
    path = tmp_path / "edited_saved.py"
    path.write_text(_EDITED_SAVED)
    plain = {}
    exec(compile(_EDITED_SAVED, str(path), "exec"), plain)
    run = run_file(str(path), backend="torch")
    assert run.namespace["errors"] == plain["errors"]
    assert [e.split(", is at")[0].split("which is ")[1] for e in plain["errors"]] == [
        "output 0 of Exp", "output 0 of Mul", "output 0 of torch::autograd::CopySlices",
        "output 0 of Add"]


def test_nn_inits_edit_of_a_parameter_is_made_without_grad_on_both_backends(tmp_path):
    # nn.init turns grad off inside, where torch's function mode does not look: the edit of
    # a leaf that requires grad is one made under no_grad (autograd refuses it otherwise);
    # a Parameter made in a function is made at its line, as torch's _make_subclass is seen
    path = tmp_path / "init_in_function.py"
    path.write_text("import torch\nfrom torch import nn\n\n\ndef main():\n"
                    "    w = nn.Parameter(torch.empty(3))\n    nn.init.uniform_(w)\n"
                    "    return w.sum()\n\n\nmain()\n")
    found = {}
    for backend in ("gradviz", "torch"):
        report = run_file(str(path), backend=backend).report()
        (w,) = [t for t in report["tensors"] if t["name"] == "main.w"]
        found[backend] = (w["line"], [(h["op"], h["grad_enabled"], h["line"])
                                      for h in w["history"]])
    assert found["torch"] == found["gradviz"] == (6, [("uniform_", False, 7)])


# ----- the file's hooks, however registered ------------------------------------------------

_MULTI_GRAD_HOOK = """\
import torch


def both(grads):
    print(len(grads))


a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
torch.autograd.graph.register_multi_grad_hook((a, b), both)
(a * b).backward()
"""

_EVERY_MODULES_HOOKS = """\
import torch
from torch import nn
from torch.nn.modules.module import (register_module_forward_hook,
                                     register_module_full_backward_hook)


def old_style(module, grad_input, grad_output):
    pass


def after(module, args, output):
    pass


def full_back(module, grad_input, grad_output):
    pass


lin = nn.Linear(2, 2)
lin.register_backward_hook(old_style)
handles = [register_module_forward_hook(after), register_module_full_backward_hook(full_back)]
lin(torch.ones(1, 2)).sum().backward()
for h in handles:
    h.remove()
"""


def _hook_rows(report):
    return [(h["kind"], h["module"], h["node_name"], h["function"], h["line"], h["target"])
            for h in report["user_hooks"]]


def test_a_multi_grad_hook_is_listed_as_the_files_function_on_both_backends(tmp_path):
    path = tmp_path / "multi_grad_hook.py"
    path.write_text(_MULTI_GRAD_HOOK)
    rows = {b: _hook_rows(run_file(str(path), backend=b).report()) for b in ("gradviz", "torch")}
    assert rows["torch"] == rows["gradviz"] == [
        ("tensor", None, "AccumulateGrad", "both", 4, "a"),
        ("tensor", None, "AccumulateGrad", "both", 4, "b")]


def test_deprecated_and_every_modules_hooks_are_listed_on_torch(tmp_path):
    # Module.register_backward_hook and torch.nn.modules.module.register_module_*_hook: listed
    # as the module hooks they are (the core refuses the deprecated one, and has no hooks
    # common to all modules)
    path = tmp_path / "every_modules_hooks.py"
    path.write_text(_EVERY_MODULES_HOOKS)
    report = run_file(str(path), backend="torch").report()
    assert report["error"] is None
    assert [r[:5] for r in _hook_rows(report)] == [
        ("module_forward", "lin", None, "after", 11),
        ("module_backward", "lin", "BackwardHookFunctionBackward", "full_back", 15),
        ("module_backward", "lin", "BackwardHookFunctionBackward", "old_style", 7)]
    # the core has no torch.nn.modules.module (reached only through real torch's, imported by
    # the run above, before a run on the core hid PyTorch's modules)
    core = run_file(str(path)).report()["error"]
    assert (core["line"], core["message"]) == (
        3, "No module named 'torch.nn.modules.module' in gradviz's core; run with --backend "
           "torch to run this file on PyTorch")


def test_autograd_grad_records_what_reached_a_non_leaf_input_once(tmp_path):
    # h's node does not run for grad(y, h) (only its tensor hooks), MulBackward0 of g runs for
    # grad(z, (g, x)) (x is beyond it): each gradient that reached an input is listed once
    path = tmp_path / "grad_of_non_leaf.py"
    path.write_text("import torch\n\nx = torch.tensor(3.0, requires_grad=True)\nh = x * 2\n"
                    "y = h ** 2\n(gh,) = torch.autograd.grad(y, h)\ng = x * 5\nz = g * g\n"
                    "(gg, gx) = torch.autograd.grad(z, (g, x))\n")
    reports = {b: run_file(str(path), backend=b).report() for b in ("gradviz", "torch")}
    found = {b: [(h["target"], h["grad"]) for h in r["hooks"]] for b, r in reports.items()}
    assert found["torch"] == found["gradviz"]
    assert [f for f in found["torch"] if f[0] in ("h", "g")] == [("h", 12.0), ("g", 30.0)]


@pytest.mark.parametrize("inputs", ["(a, b)", "(a, x)"])
def test_autograd_grad_of_a_multi_output_nodes_outputs_records_all_that_reached_it(
        tmp_path, inputs):
    # grad(out, (a, b)) captures both outputs of UnbindBackward0 (it does not run); with
    # (a, x) it runs too: either way its record holds every output's gradient, as the core's
    path = tmp_path / "grad_of_unbind.py"
    path.write_text("import torch\n\nx = torch.tensor([[1.0, 2.0], [3.0, 4.0]], "
                    "requires_grad=True)\ny = x * 2\na, b = y.unbind()\n"
                    f"out = (a * 3 + b * 5).sum()\ngrads = torch.autograd.grad(out, {inputs})\n")
    found = {}
    for backend in ("gradviz", "torch"):
        report = run_file(str(path), backend=backend).report()
        found[backend] = [n["grad"] for n in report["nodes"] if n["name"] == "UnbindBackward0"]
    assert found["torch"] == found["gradviz"] == [[[3.0, 3.0], [5.0, 5.0]]]


@pytest.mark.parametrize("op", ["unsqueeze(1)", "squeeze()", "view(-1)", "t()", "[0]"])
def test_explain_names_the_view_op_that_made_a_tensor_on_both_backends(tmp_path, op):
    # a view is made by the op the file called, not by the core's internal helper
    from gradviz.inspect.explain import explain
    path = tmp_path / "view_no_grad.py"
    path.write_text(f"import torch\n\nx = torch.ones(1, 1)\nv = x.{op}\n".replace(".[", "["))
    name = "getitem" if op == "[0]" else op.split("(")[0]
    for backend in ("gradviz", "torch"):
        causes = explain(str(path), "v", backend=backend)["causes"]
        assert [(c["kind"], c["message"].split(" from ")[0]) for c in causes] == \
            [("inputs_no_grad", f"'v' was computed ({name})")], backend


@pytest.mark.parametrize("name", ["leaf_and_nonleaf_grad.py", "anomaly_nan.py"])
def test_warnings_come_from_the_files_line(documents, name):
    # torch's C++ warnings come from the innermost Python frame (the tracer's): they are the
    # file's line's, as on the core; anomaly mode's "Error detected in" repeats the report's
    # anomalies and is left out on both
    docs = documents(name)

    def found(doc):
        return [(w["category"], w["file"], w["line"]) for w in doc["warnings"]
                if not w["message"].startswith("Anomaly Detection has been enabled")]
    assert found(docs["torch"]) == found(docs["gradviz"])
    assert not any("Error detected in" in w["message"] for w in docs["torch"]["warnings"])


def test_a_tensor_from_numpy_is_made_by_from_numpy_on_both_backends(tmp_path):
    # torch.from_numpy takes no tensor, so torch's function mode does not see it
    from gradviz.inspect.explain import explain
    path = tmp_path / "from_numpy.py"
    path.write_text("import numpy as np\nimport torch\n\n"
                    "x_np = torch.from_numpy(np.array([1.0, 2.0]))\n")
    found = {b: [(c["kind"], c["message"], c["line"])
                 for c in explain(str(path), "x_np", backend=b)["causes"]]
             for b in ("gradviz", "torch")}
    assert found["torch"] == found["gradviz"]
    assert found["torch"][0][:1] == ("no_requires_grad",)


_ANOMALY_IN_A_MODULE = """\
import torch
from torch import nn


class Root(nn.Module):
    def forward(self, x):
        return root(x)


def root(x):
    return x.sqrt()


x = torch.tensor([4.0, -1.0], requires_grad=True)
with torch.autograd.detect_anomaly():
    y = Root()(x)
    y.sum().backward()
"""


def test_an_anomalys_forward_traceback_is_the_files_frames_on_both_backends(tmp_path):
    # torch's anomaly mode keeps the forward stack in the node's metadata: the file's frames
    # of it (not the runner's, gradviz's or torch's Module.__call__), as the core's
    path = tmp_path / "anomaly_in_a_module.py"
    path.write_text(_ANOMALY_IN_A_MODULE)
    found = {b: [(a["name"], a["traceback"]) for a in run_file(str(path), backend=b).report()[
        "anomalies"]] for b in ("gradviz", "torch")}
    assert found["torch"] == found["gradviz"]
    assert [(f["line"], f["function"]) for f in found["torch"][0][1]] == \
        [(16, "<module>"), (7, "forward"), (11, "root")]


def test_a_lazy_modules_calls_have_its_class_and_parameters_on_both_backends(documents):
    # a LazyConv2d becomes a Conv2d and gets its parameters in its first forward, after
    # torch's global pre-hook saw it: its call is listed as the core lists it
    docs = documents("lazy_lenet.py")
    gv, tc = docs["gradviz"], docs["torch"]
    assert tc["module_calls"] == gv["module_calls"]
    assert tc["modules"] == gv["modules"]
    assert (gv["module_calls"][0]["class"], gv["module_calls"][0]["parameters"]) == \
        ("Conv2d", 156)
