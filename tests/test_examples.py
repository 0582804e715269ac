"""Every example keeps working: `gradviz run --json` on each gives the numbers its header
(and the seed notes) promise; graph, check-inplace and gradcheck run where they apply."""

import json
import os

import pytest
from click.testing import CliRunner

from gradviz_cli.main import cli

try:
    from .example_files import EXAMPLES, TORCH_ONLY, example_files, torch_report
except ImportError:
    from example_files import EXAMPLES, TORCH_ONLY, example_files, torch_report

# file -> (extra run options, exit code, {(tensor, field): expected})
CHECKS = {
    "def_main_mlp.py": ([], 0, {
        ("main.model.fc1.weight", "shape"): [4, 3], ("main.loss", "grad_fn"): "SumBackward0",
        ("fc1(main.x)", "grad_fn"): "AddmmBackward0", ("relu(fc1(main.x))", "shape"): [2, 4],
        ("fc2(relu(fc1(main.x)))", "grad_fn"): "AddmmBackward0",
        ("main.model.fc2.bias", "grad"): [2.0]}),
    "def_main_script.py": ([], 0, {
        ("main.x", "data"): [1.0, 2.0, 3.0], ("main.w", "grad"): [-2.0, -16.0, 24.0],
        ("main.loss", "grad_fn"): "SumBackward0", ("step[1].y", "grad_fn"): "MulBackward0",
        ("step[2].y", "line"): 10, ("main.x", "line"): 17,
        ("pow(sub(step[1].y, …))", "grad_fn"): "PowBackward0"}),
    "requires_grad_propagation.py": (["--backward", "z", "--gradient", "ones"], 0, {
        ("x1", "grad"): [1.0, 6.7726, 18.9370], ("x2", "grad"): None,
        ("y2", "requires_grad"): False, ("y2", "is_leaf"): True, ("y2", "grad_fn"): None,
        ("y1", "grad_fn"): "PowBackward1", ("z", "grad_fn"): "AddBackward0",
        ("z", "next_functions"): [["PowBackward1", 0], [None, 0]]}),
    "float_plus_tensor.py": (["--backward", "s"], 0, {
        ("x", "data"): 1.1747, ("x", "shape"): [], ("a", "shape"): [],
        ("s", "grad_fn"): "AddBackward0", ("w", "grad"): 1.0}),
    "nn_module_parameters.py": (["--backward", "loss"], 0, {
        ("my.weight", "shape"): [3, 64], ("my.bias", "shape"): [64],
        ("my.weight", "is_parameter"): True, ("y", "grad_fn"): "AddBackward0"}),
    "graph_z_wx_b.py": (["--backward", "z"], 0, {
        ("z", "data"): [3.0], ("w", "grad"): [1.0], ("b", "grad"): [1.0], ("x", "grad"): None,
        ("z", "next_functions"): [["MulBackward0", 0], ["AccumulateGrad", 0]],
        ("y", "next_functions"): [["AccumulateGrad", 0], [None, 0]]}),
    "dynamic_control_flow.py": (["--backward", "y"], 0, {
        ("y", "data"): 6.0, ("x", "grad"): [0, 0, 0, 6, 3, 2]}),
    "mul_chain_backward.py": (["--backward", "e"], 0, {
        ("a", "grad"): 12.0, ("b", "grad"): 8.0, ("d", "grad"): 6.0, ("c", "grad"): None,
        ("e", "grad_fn"): "MulBackward0", ("e", "is_root"): True}),
    "mul_one_input_requires_grad.py": (["--backward", "c"], 0, {
        ("a", "grad"): 3.0, ("b", "grad"): None,
        ("c", "next_functions"): [["AccumulateGrad", 0], [None, 0]]}),
    "custom_function.py": (["--backward", "e"], 0, {
        ("a", "grad"): 12.0, ("b", "grad"): 8.0, ("d", "grad"): 6.0}),
    "broadcast_grad_shape.py": (["--backward", "loss"], 0, {
        ("loss", "data"): 24.5, ("w", "grad"): [5.0, 7.0, 9.0], ("b", "grad"): 6.0,
        ("b", "shape"): []}),
    "conv1d_by_unfold.py": ([], 0, {
        ("windows", "grad_fn"): "UnfoldBackward0", ("windows", "shape"): [1, 1, 6, 3],
        ("x", "grad"): [[[1.0, 3.0, 6.0, 6.0, 6.0, 6.0, 5.0, 3.0]]],
        ("w", "grad"): [[[21.0, 27.0, 33.0]]], ("y_ref", "grad_fn"): "ConvolutionBackward0"}),
    "missing_targets_nanmean.py": ([], 0, {
        ("loss_nan", "data"): 0.625, ("loss_nan", "grad_fn"): "DivBackward0",
        ("loss_masked", "data"): 0.625, ("q", "grad"): [-0.5, 0.0, 1.0]}),
    "saved_tensors_hooks.py": ([], 0, {
        ("x", "grad"): [14.7781], ("w", "grad"): [7.3891], ("z", "data"): [7.3891]}),
    "jacobian_hessian.py": ([], 0, {
        ("J", "data"): [[7.0, 1.0], [4.0, 16.0]], ("H", "data"): [[6.0, 0.0], [0.0, 12.0]],
        ("Hv", "data"): [6.0, 12.0], ("vJ", "data"): [11.0, 17.0], ("Jv", "data"): [8.0, 20.0],
        ("J", "grad_fn"): None}),
    "softmax_cross_entropy.py": (["--backward", "loss"], 0, {
        ("loss", "data"): 0.4170, ("loss", "grad_fn"): "NllLossBackward0",
        ("logits", "grad"): [[-0.3410, 0.2424, 0.0986]]}),
    "relu_zero_grad.py": (["--backward", "loss"], 0, {
        ("loss", "data"): 6.0, ("x", "grad"): [0.0, 0.0, 1.5, 1.5], ("w", "grad"): 4.0}),
    "nan_grad_where.py": (["--backward", "loss"], 0, {
        ("loss", "data"): 3.0, ("x", "grad"): [0.25, "nan", 0.5]}),
    "inplace_ok_when_not_saved.py": (["--backward", "loss"], 0, {
        ("b", "version"): 1, ("loss", "data"): 10.0, ("a", "grad"): [1.0, 1.0]}),
    "inplace_view_shares_version.py": ([], 0, {
        ("b", "version"): 1, ("head", "version"): 1, ("b", "data"): [30.0, 5.0],
        ("b", "grad_fn"): "CopySlices", ("loss", "data"): 17.0}),
    "leaf_and_nonleaf_grad.py": ([], 0, {
        ("d", "data"): 7.7286, ("a", "grad"): [[1.0] * 4] * 3, ("c", "grad"): None}),
    "manual_derivative_x2_exp.py": ([], 0, {
        ("x", "grad"): [0.0, -0.3679, 0.0, 8.1548, 59.1124]}),
    "retain_graph_accumulate.py": ([], 0, {("w", "grad"): [0.0]}),
    "hooks_marked.py": ([], 0, {
        ("w", "grad"): 360.0, ("x", "grad"): 240.0, ("w", "grad_changed_by"): [0],
        ("x", "grad_changed_by"): [0], ("y", "grad_changed_by"): []}),
    "dynamic_if_abs.py": ([], 0, {
        ("x_pos", "grad"): [1.0], ("x_neg", "grad"): [-1.0], ("y_neg", "grad_fn"): "NegBackward0"}),
    "no_grad_and_detach.py": ([], 0, {
        ("y_no_grad", "requires_grad"): False, ("y_off", "requires_grad"): False,
        ("y_detached", "requires_grad"): False, ("y_enabled", "requires_grad"): True,
        ("w", "data"): [0.3], ("w", "version"): 1}),
    "retain_grad_and_hooks.py": ([], 0, {
        ("w1", "grad"): 21.0, ("w2", "grad"): 6.0, ("w3", "grad"): 10.0,
        ("l1", "grad"): [[5.25, 5.25], [5.25, 5.25]], ("l4", "grad"): [[0.25, 0.25]] * 2,
        ("loss", "grad"): 1.0, ("loss", "data"): 30.0}),
    "inplace_on_leaf.py": ([], 0, {
        ("a", "data"): [10.0] * 4, ("a", "version"): 2, ("a", "is_leaf"): True,
        ("loss3", "data"): 100.0, ("a", "grad"): [5.0] * 4}),
    "requires_grad_ways.py": ([], 0, {("t_exp", "data"): 7.3891, ("s", "data"): 67.5}),
    "nonscalar_backward.py": ([], 0, {("x", "grad"): [2.0, 0.2, 0.02]}),
    "second_derivative.py": ([], 0, {
        ("y", "data"): 64.0, ("dy_dx", "data"): 48.0, ("dy_dx", "grad_fn"): "MulBackward0",
        ("d2y_dx2", "data"): 24.0, ("d2y_dx2", "grad_fn"): None}),
    "training_loop_mlp.py": ([], 0, {}),
    "char_rnn_lstm.py": ([], 0, {
        ("loss", "data"): 1.7461, ("loss", "grad_fn"): "NllLossBackward0",
        ("norm", "data"): 0.3014, ("model.rnn.weight_ih_l0", "shape"): [128, 16],
        ("model.rnn.weight_hh_l0", "version"): 31, ("state[1]", "shape"): [1, 1, 32]}),
    "name_classifier_rnn.py": ([], 0, {
        ("batch_loss", "data"): 0.0115, ("batch_loss", "grad_fn"): "AddBackward0",
        ("rnn.rnn.weight_ih_l0", "shape"): [32, 57], ("rnn.rnn.weight_hh_l0", "version"): 165,
        ("data[0][0]", "version"): 5}),
    "dcgan_transposed_conv.py": ([], 0, {
        ("errD", "data"): 1.4231, ("errG", "data"): 0.6898, ("fake", "grad_fn"): "TanhBackward0",
        ("fake", "shape"): [8, 1, 16, 16], ("netG.main.0.weight", "shape"): [16, 16, 4, 4],
        ("errD_fake", "grad_fn"): "BinaryCrossEntropyBackward0"}),
    "cnn_random_data.py": ([], 0, {
        ("loss", "data"): 0.4742, ("loss", "grad_fn"): "NllLossBackward0",
        ("logits", "grad_fn"): "AddmmBackward0", ("model.0.weight", "shape"): [4, 1, 3, 3],
        ("model.0.bias", "grad"): [-0.04087, -0.01446, -0.03744, -0.09785]}),
    "every_hook_kind.py": ([], 0, {
        ("y", "data"): [[-1.75]], ("y", "grad"): [[-7.0]], ("x", "grad"): [[-210.0, 420.0]],
        ("x", "grad_changed_by"): [3, 6, 8], ("y", "grad_changed_by"): [3]}),
    "loop_in_main.py": ([], 0, {
        ("main.w", "data"): [3.0], ("main.b", "data"): [1.0], ("main.w", "version"): 1000,
        ("main.loss", "grad_fn"): "MeanBackward0", ("main.loss", "iteration"): 1000,
        ("main.pred", "loop"): 0, ("main.w", "iteration"): None}),
    "module_hooks.py": ([], 0, {
        ("out", "grad_fn"): "BackwardHookFunctionBackward", ("net.2.bias", "grad"): [5.0, 5.0],
        ("x", "shape"): [5, 3]}),
    "nested_modules.py": (["--backward", "loss"], 0, {
        ("loss", "data"): 0.49696, ("model.head.bias", "grad"): [-0.68294],
        ("model.head.bias", "module"): "head",
        ("model.encoder.blocks.1.norm.weight", "module"): "encoder.blocks.1.norm"}),
    "resnet_cnn.py": ([], 0, {
        ("loss", "data"): 2.5387, ("loss", "grad_fn"): "NllLossBackward0",
        ("model.stages.1.0.conv1.weight", "shape"): [32, 16, 3, 3],
        ("model.stages.1.0.shortcut.0.weight", "module"): "stages.1.0.shortcut.0",
        ("model.stages.3.1.bn2.bias", "is_parameter"): True, ("logits", "module"): "fc",
        ("images", "shape"): [8, 3, 32, 32]}),
    "transformer_encoder.py": (["--backend", "torch"], 0, {
        ("loss", "data"): 2.2366, ("loss", "grad_fn"): "NllLossBackward0",
        ("model.encoder.layers.3.linear1.weight", "shape"): [1024, 256],
        ("model.encoder.layers.3.linear1.weight", "module"): "encoder.layers.3.linear1",
        ("model.encoder.layers.5.self_attn.in_proj_weight", "shape"): [768, 256],
        ("logits", "grad_fn"): "AddmmBackward0", ("logits", "module"): "head"}),
    "inplace_version_error.py": ([], 1, {("b", "version"): 1, ("a", "grad"): None}),
    "anomaly_nan.py": ([], 1, {}),
    "polynomial_custom_function.py": ([], 0, {
        ("b", "data"): -1.5471, ("d", "data"): 0.2498, ("a", "grad"): None, ("b", "version"): 300,
        ("loss", "data"): 100.70, ("loss", "grad_fn"): "SumBackward0"}),
    "adam_scheduler_training.py": ([], 0, {
        ("model.0.weight", "version"): 49, ("state['step']", "data"): 48.0,
        ("state['exp_avg_sq']", "version"): 96, ("loss", "grad_fn"): "MseLossBackward0"}),
    "tensor_basics_tutorial.py": ([], 0, {
        ("y3", "version"): 1, ("z3", "version"): 1, ("y3", "data"): [[3.0] * 4] * 4,
        ("agg", "data"): 12.0, ("sum_A", "data"): [[3.0], [12.0]], ("t", "data"): [2.0] * 5}),
    "softmax_regression_scratch.py": ([], 0, {
        ("W", "shape"): [16, 3], ("W", "version"): 40, ("b", "version"): 40,
        ("train_l", "data"): 1.029697, ("l", "grad_fn"): "NegBackward0"}),
    "lazy_lenet.py": ([], 0, {
        ("net.0.weight", "shape"): [6, 1, 5, 5], ("net.7.weight", "shape"): [120, 400],
        ("net.11.bias", "shape"): [10], ("loss", "data"): 2.4019,
        ("loss", "grad_fn"): "NllLossBackward0"}),
    "makemore_mlp.py": ([], 0, {
        ("loss", "data"): 1.6331, ("loss", "grad_fn"): "NllLossBackward0",
        ("C", "shape"): [27, 10], ("C", "is_leaf"): True, ("C", "version"): 0,
        ("bnmean_running", "grad_fn"): None, ("bnmean_running", "requires_grad"): False,
        ("Xtr", "shape"): [399, 3]}),
    "lazy_model_optimizer.py": ([], 0, {
        ("net.0.weight", "shape"): [16, 20], ("net.0.weight", "version"): 11,
        ("loss", "data"): 1.4358, ("loss", "grad_fn"): "NllLossBackward0",
        ("clone.hidden.weight", "version"): 1, ("Y_clone", "grad_fn"): "AddmmBackward0"}),
    "mnist_cnn_adadelta.py": ([], 0, {
        ("model.conv1.weight", "version"): 5, ("model.fc1.weight", "shape"): [128, 9216],
        ("train[2].loss", "data"): 2.155842, ("train[1].loss", "grad_fn"): "NllLossBackward0",
        ("train[2].output", "grad_fn"): "LogSoftmaxBackward0", ("test[2].output", "grad_fn"): None}),
    "save_load_checkpoint.py": ([], 0, {
        ("checkpoint['loss']", "data"): 0.03986, ("checkpoint['loss']", "grad_fn"): None,
        ("checkpoint['loss']", "version"): 1, ("new_model.0.weight", "version"): 12,
        ("model.0.weight", "version"): 31, ("state['state'][0]['step']", "data"): 30.0}),
    "micrograd_neuron_check.py": ([], 0, {
        ("o", "data"): [0.7071066904050358], ("o", "grad_fn"): "TanhBackward0",
        ("n", "next_functions"): [["AddBackward0", 0], ["AccumulateGrad", 0]],
        ("x1", "grad"): [-1.5000003851533106], ("w1", "grad"): [1.0000002567688737],
        ("x2", "grad"): [0.5000001283844369], ("w2", "grad"): [0.0], ("x1", "dtype"): "float64"}),
    "autograd_jacobian_product.py": ([], 0, {
        ("loss", "grad_fn"): "BinaryCrossEntropyWithLogitsBackward0",
        ("b", "grad"): [0.2661, 0.1179, 0.0027], ("z_det", "grad_fn"): None,
        ("out", "grad_fn"): "TBackward0", ("out", "next_functions"): [["PowBackward0", 0]],
        ("inp", "grad"): [[4.0 if i == j else 2.0 for j in range(5)] for i in range(4)]}),
    "freeze_parameters_finetune.py": ([], 0, {
        ("model.0.weight", "requires_grad"): False, ("model.4.weight", "requires_grad"): True,
        ("model.4.bias", "grad"): [1.0] * 10, ("Q", "grad_fn"): "SubBackward0",
        ("x", "grad"): [102.4, 1024.0, 0.1024], ("out", "grad_fn"): "SumBackward0"}),
    "shared_parameters_init.py": ([], 0, {
        ("net.0.weight", "shape"): [8, 4], ("net.0.weight", "version"): 5,
        ("net.0.weight", "is_parameter"): True, ("net.0.weight", "grad"): None,
        ("shared.weight", "shape"): [8, 8], ("net.2.bias", "shape"): [1]}),
}


def run_json(*args):
    result = CliRunner().invoke(cli, ["run", *args, "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def close(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return abs(a - b) <= 1e-4 * max(1.0, abs(b))
    return a == b


def test_every_example_has_checks():
    assert example_files() == sorted(CHECKS)
    assert all(CHECKS[name][0][:2] == ["--backend", "torch"] for name in TORCH_ONLY)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_example_numbers(name):
    options, code, expected = CHECKS[name]
    if name in TORCH_ONLY:
        pytest.importorskip("torch")
        report = torch_report(name)     # the same run as tests/test_real_models.py reads
        exit_code = report["exit_code"]
    else:
        exit_code, report = run_json(os.path.join(EXAMPLES, name), *options)
    assert exit_code == code, report["error"]
    tensors = {t["name"]: t for t in report["tensors"]}
    for (tensor, field), value in expected.items():
        assert close(tensors[tensor][field], value), (tensor, field, tensors[tensor][field])


def test_seed_hook_order_in_the_hooks_example():
    _, report = run_json(os.path.join(EXAMPLES, "retain_grad_and_hooks.py"))
    out = report["stdout"]
    assert out.index("loss grad") < out.index("l4 grad") < out.index("l1 grad")


def test_hooks_option_lists_loss_l4_l1_in_firing_order():
    _, report = run_json(os.path.join(EXAMPLES, "mul_chain_backward.py"), "--backward", "e",
                         "--hooks")
    targets = [h["target"] for h in report["hooks"]]
    assert targets.index("e") < targets.index("c") < targets.index("a")


def test_errors_of_the_failing_examples():
    _, report = run_json(os.path.join(EXAMPLES, "inplace_version_error.py"))
    assert report["error"]["type"] == "RuntimeError"
    assert report["error"]["message"].startswith("one of the variables needed for gradient "
                                                 "computation has been modified by an inplace")
    _, report = run_json(os.path.join(EXAMPLES, "anomaly_nan.py"))
    assert report["error"]["message"].startswith(
        "Function 'SqrtBackward0' returned nan values in its 0th output.")
    (anomaly,) = report["anomalies"]
    assert anomaly["name"] == "SqrtBackward0"
    assert anomaly["line"] == 29


INPLACE_FAILING = {"inplace_version_error.py", "inplace_view_shares_version.py",
                   "inplace_on_leaf.py"}


# The torch-only examples' graphs are drawn by tests/test_real_models.py (from the run above);
# check-inplace on torch is compared with the core's by tests/test_backend_parity.py.
@pytest.mark.parametrize("name", example_files(include_torch_only=False))
def test_graph_and_check_inplace_on_every_example(name):
    path = os.path.join(EXAMPLES, name)
    runner = CliRunner()
    dot = runner.invoke(cli, ["graph", path, "-o", "-"], catch_exceptions=False)
    assert dot.exit_code == CHECKS[name][1]
    assert dot.stdout.startswith("digraph")
    check = runner.invoke(cli, ["check-inplace", path, "--json"], catch_exceptions=False)
    verdict = json.loads(check.stdout)
    assert check.exit_code == (1 if name in INPLACE_FAILING or verdict["error"] else 0), verdict


@pytest.mark.parametrize("name", ["mul_chain_backward.py", "broadcast_grad_shape.py",
                                  "manual_derivative_x2_exp.py", "relu_zero_grad.py",
                                  "softmax_cross_entropy.py", "custom_function.py",
                                  "graph_z_wx_b.py", "requires_grad_propagation.py"])
def test_gradcheck_passes_on_examples(name):
    result = CliRunner().invoke(cli, ["gradcheck", os.path.join(EXAMPLES, name), "--json",
                                      "--max-elements", "6"], catch_exceptions=False)
    report = json.loads(result.stdout)
    assert result.exit_code == 0, report
    assert report["passed"] and all(lf["checked"] for r in report["roots"]
                                    for lf in r["leaves"])

