"""Hypothesis profiles: locally each run draws new examples (and so keeps finding new cases);
CI (`.ci/run` sets HYPOTHESIS_PROFILE=ci) draws the same examples every run, so a job's
verdict depends on the commit, not on the luck of the draw."""

import os

# One thread for NumPy's BLAS and torch's OpenMP in every test process (and the gradviz and
# python subprocesses the tests start, which inherit it): pytest-xdist already runs a worker
# per core, and a library's own pool on top of that has its threads spinning against the
# other worker's (about a tenth more CPU time for the same tests). torch's reductions above
# 32,768 elements also split their sums by thread count, so one thread keeps their last bits
# the same on every machine. Set before NumPy is imported, or its BLAS has made its pool.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# The CLI prints at COLUMNS when it is set, else at 100 columns to a pipe (cli/common.py
# console_width). pytest-xdist's workers run with COLUMNS=80 of their own, so a test's output
# would wrap differently in a worker than in a serial run: every test sees the pipe's width
# unless it sets COLUMNS itself.
os.environ.pop("COLUMNS", None)
