"""Hypothesis profiles: locally each run draws new examples (and so keeps finding new cases);
CI (`.ci/run` sets HYPOTHESIS_PROFILE=ci) draws the same examples every run, so a job's
verdict depends on the commit, not on the luck of the draw."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
