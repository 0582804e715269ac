"""The real-model examples: a 6-layer nn.TransformerEncoder on torch, a ResNet-style CNN on
the core. Parameters are named by their qualified names (model.encoder.layers.3.linear1.weight)
in the JSON document, the tables and the graph's labels, and folding by module draws one box
per layer or block with its class, shapes and parameter count.

The transformer runs once per test process (example_files.torch_report), on one thread.
"""

import gc
import io
import os
import re
import weakref

import pytest
from rich.console import Console

try:
    from .example_files import EXAMPLES, torch_report
except ImportError:
    from example_files import EXAMPLES, torch_report

from gradviz.inspect import run_file  # noqa: E402
from gradviz.render.drawing import GraphDrawing  # noqa: E402
from gradviz.render.tables import print_report  # noqa: E402

LAYER = re.compile(r"label=\"encoder\.layers\.(\d): TransformerEncoderLayer\\nin: \[8, 64, 256\]\\n"
                   r"out: \[8, 64, 256\]\\nparams: 789,760")


@pytest.fixture(scope="module")
def transformer():
    torch = pytest.importorskip("torch")
    layer = torch.nn.TransformerEncoderLayer(256, 8, dim_feedforward=1024, batch_first=True)
    suffixes = {name: list(p.shape) for name, p in layer.named_parameters()}
    return torch_report("transformer_encoder.py"), suffixes


def _tables(report, **options):
    out = io.StringIO()
    console = Console(file=out, width=300, color_system=None, force_terminal=False)
    print_report(console, report, **options)
    return out.getvalue()


def test_transformer_parameters_have_qualified_names(transformer):
    report, suffixes = transformer
    rows = {t["name"]: t for t in report["tensors"] if t["is_parameter"]}
    assert len(suffixes) == 12
    for i in range(6):
        for suffix, shape in suffixes.items():
            row = rows[f"model.encoder.layers.{i}.{suffix}"]
            assert row["shape"] == shape
            assert row["module"] == f"encoder.layers.{i}." + suffix.rsplit(".", 1)[0]
            assert row["grad"] is not None, row["name"]
    assert rows["model.head.weight"]["shape"] == [10, 256]
    # the template layer TransformerEncoder copied: the file's own, named where it was made
    template = sorted(n for n in rows if not n.startswith("model."))
    assert template == sorted(f"Net.__init__.layer.{s}" for s in suffixes)
    assert all(rows[n]["grad"] is None for n in template)


def test_readme_counts_the_transformers_nodes(transformer):
    # "Inspecting a real model" says how many autograd nodes the example's step makes
    report, _ = transformer
    with open(os.path.join(EXAMPLES, "..", "README.md"), encoding="utf-8") as f:
        said = re.search(r"trained for one step: (\d+) autograd nodes", f.read())
    assert said is not None and int(said.group(1)) == len(report["nodes"])


def test_transformer_tables_use_qualified_names(transformer):
    report, _ = transformer
    text = _tables(report)
    assert re.search(r"\nmodel\.encoder\.layers\.0\.self_attn\.in_proj_weight +\[768, 256\] +"
                     r"float32", text)
    grouped = _tables(report, by_module=True)
    start = grouped.index("\nencoder.layers.3.linear1: Linear  in [8, 64, 256]  "
                          "out [8, 64, 1024]  263,168 params")
    block = grouped[start:grouped.index("\nencoder.layers.3.", start + 1)]
    assert re.search(r"\n +model\.encoder\.layers\.3\.linear1\.weight +\[1024, 256\] +float32",
                     block)
    assert "model.encoder.layers.3.linear1.bias" in block


def test_transformer_folded_at_depth_2(transformer):
    report, _ = transformer
    drawing = GraphDrawing(report, modules={"depth": 2})
    assert sorted(int(i) for i in LAYER.findall(drawing.source)) == list(range(6))
    assert drawing.count == 15
    assert drawing.notes == []
    assert 'label="model.head.weight [10, 256] float32' in drawing.source


def test_transformer_expanded_layer_names_its_parameters(transformer):
    report, _ = transformer
    drawing = GraphDrawing(report, modules={"depth": 2, "expand": ["encoder.layers.3",
                                                                   "encoder.layers.3.linear1"]})
    assert sorted(int(i) for i in LAYER.findall(drawing.source)) == [0, 1, 2, 4, 5]
    assert 'label="model.encoder.layers.3.linear1.weight [1024, 256] float32' in drawing.source
    assert 'label="encoder.layers.3: TransformerEncoderLayer"' in drawing.source
    # its other modules stay folded, one level down
    assert ('label="encoder.layers.3.self_attn: MultiheadAttention\\nin: [8, 64, 256], '
            '[8, 64, 256], [8, 64, 256]\\nout: [8, 64, 256]\\nparams: 263,168"'
            in drawing.source)
    assert "model.encoder.layers.2.linear1.weight" not in drawing.source


def test_transformer_fully_expanded(transformer):
    report, _ = transformer
    drawing = GraphDrawing(report, modules={})
    for i in range(6):
        assert f'label="model.encoder.layers.{i}.norm2.bias [256] float32' in drawing.source
        assert f'label="encoder.layers.{i}: TransformerEncoderLayer"' in drawing.source
    # too big to read: the note suggests folding by module first
    (note,) = drawing.notes
    assert note.plain == (f"warning: {drawing.count} nodes: the drawing will be hard to read; "
                          "try --depth-modules N, --collapse, --max-depth N or --root NAME")


def test_resnet_on_the_core_folds_to_basic_blocks():
    run = run_file(os.path.join(EXAMPLES, "resnet_cnn.py"))
    report = run.report()
    assert report["stdout"] == "loss 2.5387\n"
    drawing = GraphDrawing(report, modules={"depth": 2})
    blocks = re.findall(r"label=\"stages\.(\d\.\d): BasicBlock\\nin: (\[[\d, ]+\])\\nout: "
                        r"(\[[\d, ]+\])\\nparams: ([\d,]+)", drawing.source)
    assert [b[0] for b in sorted(blocks)] == [f"{s}.{b}" for s in range(4) for b in range(2)]
    assert ("1.0", "[8, 16, 32, 32]", "[8, 32, 16, 16]", "14,528") in blocks
    assert ("3.1", "[8, 128, 4, 4]", "[8, 128, 4, 4]", "295,424") in blocks
    expanded = GraphDrawing(report, modules={"depth": 2, "expand": ["stages.1.0",
                                                                   "stages.1.0.conv1"]}).source
    assert 'label="model.stages.1.0.conv1.weight [32, 16, 3, 3] float32' in expanded
    # the skip connection's add, and the 1x1 shortcut folded one level down
    assert re.search(r'label="AddBackward0\\nadd\(', expanded)
    assert ('label="stages.1.0.shortcut: Sequential\\nin: [8, 16, 32, 32]\\n'
            'out: [8, 32, 16, 16]\\nparams: 576"' in expanded)


_HOOKED_MODEL = """\
import torch
from torch import nn
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
model[0].register_forward_hook(lambda m, args, out: None)
model[2].register_full_backward_hook(lambda m, grad_in, grad_out: None)
x = torch.randn(3, 4)
h = model(x)
h.register_hook(lambda g: g)
loss = model(x).pow(2).sum() + h.sum()
loss.grad_fn.register_prehook(lambda grad_out: None)
loss.grad_fn.register_hook(lambda grad_in, grad_out: None)
loss.backward()
"""


def test_torch_run_frees_its_tracer(tmp_path):
    # torch's nodes are not collected in a cycle: the tracer's node hooks and the file's
    # wrapped hooks (node, tensor and module hooks) hold it weakly, so once the run is
    # dropped the tracer goes, with all it recorded
    pytest.importorskip("torch")
    path = tmp_path / "hooked.py"
    path.write_text(_HOOKED_MODEL)
    run = run_file(str(path), backend="torch")
    report = run.report()
    assert {h["kind"] for h in report["user_hooks"]} >= {"tensor", "pre", "post",
                                                         "module_forward", "module_backward"}
    tracer = weakref.ref(run.tracer)
    del run
    gc.collect()
    assert tracer() is None
