"""Hypothesis profiles: locally each run draws new examples (and so keeps finding new cases);
CI (`.ci/run` sets HYPOTHESIS_PROFILE=ci) draws the same examples every run, so a job's
verdict depends on the commit, not on the luck of the draw."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# The CLI prints at COLUMNS when it is set, else at 100 columns to a pipe (cli/common.py
# console_width). pytest-xdist's workers run with COLUMNS=80 of their own, so a test's output
# would wrap differently in a worker than in a serial run: every test sees the pipe's width
# unless it sets COLUMNS itself.
os.environ.pop("COLUMNS", None)
