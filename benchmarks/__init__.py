"""Benchmarks: gradviz against PyTorch and against a hand-written NumPy floor.

Run ``python -m benchmarks`` (see benchmarks/README.md). This package is a benchmark, not a
test suite: nothing under tests/ times anything.

Importing this package imports nothing heavy: each backend is imported only inside its own
worker process (``python -m benchmarks.worker``), because importing torch into a process slows
every allocation in it and would make gradviz look slower than it is.
"""
