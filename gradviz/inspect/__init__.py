"""gradviz.inspect: run a user's expression file and describe it as plain data.

>>> from gradviz.inspect import run_file                      # doctest: +SKIP
>>> report = run_file("examples/mul_chain_backward.py", backward="e").report()
>>> [t["grad"] for t in report["tensors"] if t["name"] in ("a", "b")]
[12.0, 8.0]
"""

from .report import build_report, to_json_value
from .runner import BackendUnavailable, ErrorInfo, UsageError
from .session import Run, run_file
from .tracer import Tracer

__all__ = ["run_file", "Run", "build_report", "to_json_value", "UsageError",
           "BackendUnavailable", "ErrorInfo", "Tracer"]
