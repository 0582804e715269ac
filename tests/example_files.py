"""The example files as the tests that run every example see them: which need PyTorch.

An example that uses a module the core does not have (nn.TransformerEncoder) runs with
`--backend torch` only: the tests that run every example on the core leave it out, and run it
on torch when torch is installed (skipped cleanly otherwise).
"""

import os

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")

TORCH_ONLY = {"transformer_encoder.py"}


def example_files(include_torch_only=True):
    """The example files' names, sorted; include_torch_only=False leaves the torch-only ones
    out."""
    return sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py")
                  and (include_torch_only or f not in TORCH_ONLY))


_TORCH_RUNS = {}


def torch_report(name):
    """The `gradviz run --backend torch --json` document of an example, run once per test
    process (a torch-only example takes seconds; several test files read the same run)."""
    if name not in _TORCH_RUNS:
        import json

        import torch

        from gradviz.inspect import run_file
        from gradviz.inspect.report import report_json
        # one thread: torch's pool spins against the other processes of a busy machine
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            run = run_file(os.path.join(EXAMPLES, name), backend="torch")
            # through JSON, as the command line prints it
            _TORCH_RUNS[name] = json.loads(report_json(run.report()))
        finally:
            torch.set_num_threads(threads)
    return _TORCH_RUNS[name]
