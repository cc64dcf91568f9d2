"""The packaged embedder loads quietly: no weight-loading bar or load report in every process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

LOAD = """
from transformers.utils import logging as hf_logging
before = (hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled())
from toolret.index.embedding import resolve_embedder
print(resolve_embedder(None).embed(["is it raining in Paris?"]).shape)
assert (hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()) == before, "settings not restored"
"""


def test_loading_the_packaged_model_prints_nothing_to_stderr():
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    done = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 384)"
    assert "Loading weights" not in done.stderr and "LOAD REPORT" not in done.stderr, done.stderr
    assert done.stderr.strip() == "", done.stderr
