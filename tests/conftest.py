"""Shared fixtures: tiny transformers configs and the catalog."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Tests never read or write the user's cache of meta-device layouts (planner/model/meta_device.py).
os.environ.setdefault("PLANNER_CACHE_DIR", tempfile.mkdtemp(prefix="planner-test-cache-"))
# Nor the user's records and store: runtime files go to a throw-away PLANNER_HOME.
os.environ["PLANNER_HOME"] = tempfile.mkdtemp(prefix="planner-test-home-")


def run_cli(*args: str, check: bool = False) -> subprocess.CompletedProcess:
    """Run ``python -m planner`` in a subprocess, as a user would."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "planner", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"planner {' '.join(args)} failed: {proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
