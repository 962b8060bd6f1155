"""`size` through the command line: a max length above the model's derived context never says it starts."""

from __future__ import annotations

import subprocess
import sys

SIZE = [sys.executable, "-m", "planner", "size", "--target", "Llama-3.1-70B", "--node", "8x-h100-sxm-80gb", "--tp", "8"]


def _verdict(*extra: str) -> str:
    out = subprocess.run([*SIZE, "--max-model-len", "1048576", *extra], capture_output=True, text=True, check=True)
    return next(line for line in out.stdout.splitlines() if "verdict" in line)


def test_size_does_not_say_starts_above_the_derived_context():
    verdict = _verdict()
    assert "WOULD NOT START" in verdict and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in verdict


def test_the_override_flag_plans_it_as_a_risk():
    assert "STARTS" in _verdict("--allow-long-max-model-len")
