"""Shared fixtures: the CLI in a subprocess, tiny transformers configs, the memory components, engine logs,
and throw-away data folders and stores (so no test writes into the repository or the user's data)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from planner import facts
from tests.pg_server import PostgresServer, postgres_bin

REPO = Path(__file__).resolve().parent.parent
#: Start-up logs of real engines (their sources: tests/fixtures/engine_logs/README.md).
# Property tests draw the same examples on every run (a failure reproduces; CI never flakes on a new draw), and
# no example has a time limit: hypothesis's default 200 ms deadline fails a test only because the machine is busy
# (DeadlineExceeded, or Flaky when the rerun is faster). Work is bounded by the example counts instead.
settings.register_profile("planner", derandomize=True, print_blob=True, deadline=None)
settings.load_profile("planner")

ENGINE_LOGS = REPO / "tests" / "fixtures" / "engine_logs"
# Tests never read or write the user's cache of meta-device layouts (planner/model/meta_device.py).
os.environ.setdefault("PLANNER_CACHE_DIR", tempfile.mkdtemp(prefix="planner-test-cache-"))
# Nor the user's records and store: runtime files go to a throw-away PLANNER_HOME.
os.environ["PLANNER_HOME"] = tempfile.mkdtemp(prefix="planner-test-home-")
# Nor a team's database: the store is a SQLite file unless a test hands it a PostgreSQL URL (postgres_server).
os.environ.pop("PLANNER_DATABASE_URL", None)
# `pytest -n 2` runs a test per CPU already: node types are quoted one after another unless a test asks for worker
# processes (tests/core/decisions/test_side_by_side.py, and the browser journeys' shared server, tests/e2e/conftest.py).
os.environ.setdefault("PLANNER_WORKERS", "1")

#: The per-GPU memory components of a plan (the `size` JSON contract), in display order; with
#: ``total_bytes``, ``memory_limit_bytes`` and ``kv_fraction_base_bytes`` they make up ``per_gpu``.
MEMORY_COMPONENTS = (
    "target_weights_bytes",
    "draft_weights_bytes",
    "torch_peak_increase_bytes",
    "non_torch_increase_bytes",
    "cudagraph_bytes",
    "kv_cache_bytes",
    "unused_budget_bytes",
    "outside_budget_bytes",
)

#: A tiny GPT-NeoX config (no formula family): transformers counts 228,096 parameters on the meta device.
TINY_GPT_NEOX = {
    "model_type": "gpt_neox",
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "intermediate_size": 256,
    "vocab_size": 1000,
}
TINY_GPT_NEOX_PARAMS = 228_096
#: A tiny Llama config (random weights) that runs a real speculative job on CPU in a second.
TINY_LLAMA = {
    "model_type": "llama",
    "vocab_size": 320,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 512,
}


#: The longest test files in ``make test``'s slowest-durations list, longest first.
LONGEST_FILES = (
    "tests/e2e/test_sign_in_journey.py",
    "tests/e2e/test_scenario_journey.py",
    "tests/cli/test_cli_measure_parallel.py",
    "tests/e2e/test_two_servers.py",
    "tests/app/test_fuzz_links_every_page.py",
    "tests/cli/test_cli_saved.py",
    "tests/e2e/test_quote_journey.py",
    "tests/e2e/test_explore_journey.py",
    "tests/e2e/test_saved_quote_journey.py",
)


def _cost_rank(item: pytest.Item) -> int:
    """A long file by its place in LONGEST_FILES; then browser journeys, slow tests, pages and the CLI, the rest."""
    path = item.nodeid.split("::")[0]
    if path in LONGEST_FILES:
        return LONGEST_FILES.index(path)
    if item.get_closest_marker("e2e"):
        return len(LONGEST_FILES)
    if item.get_closest_marker("slow"):
        return len(LONGEST_FILES) + 1
    return len(LONGEST_FILES) + (2 if path.startswith(("tests/app/", "tests/cli/")) else 3)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The costly files first (a stable sort: each file's tests keep their order, files of one rank theirs).

    ``make test`` hands whole files to two workers in this order (``--dist loadfile --no-loadscope-reorder``): the
    long browser journeys start at once, and the many short files at the end let both workers finish together.
    Without it one worker ran the last long journeys alone while the other had finished.
    """
    rank = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        rank[path] = min(rank.get(path, 99), _cost_rank(item))
    items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the scratch folder Streamlit's AppTest makes when it is imported, while the run still holds it: left
    to the interpreter's exit, its clean-up warns (an error under this suite's warning filters) and prints a
    traceback after the summary."""
    app_test = sys.modules.get("streamlit.testing.v1.app_test")
    scratch = getattr(app_test, "TMP_DIR", None)
    if isinstance(scratch, tempfile.TemporaryDirectory):
        scratch.cleanup()


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


@pytest.fixture
def tmp_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Measurement records and the SQLite store in a fresh tmp folder (neither exists until written)."""
    monkeypatch.setenv("PLANNER_MEASUREMENTS_DIR", str(tmp_path / "measurements"))
    monkeypatch.setenv("PLANNER_STORE_PATH", str(tmp_path / "store.sqlite3"))
    return tmp_path / "store.sqlite3"


@pytest.fixture
def tmp_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of ``data/`` the planner reads instead (``PLANNER_DATA_DIR``); every data cache is cleared
    before and after, so an edit to the copy is seen and does not leak into later tests."""
    copy = tmp_path / "data"
    shutil.copytree(facts.data_dir(), copy)
    monkeypatch.setenv("PLANNER_DATA_DIR", str(copy))
    facts.clear_caches()
    yield copy
    monkeypatch.delenv("PLANNER_DATA_DIR")
    facts.clear_caches()


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL server (tests/pg_server.py) for this test process; CI must have one."""
    if postgres_bin() is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is missing on CI: make test installs Debian's postgresql")
        pytest.skip("PostgreSQL is not installed (make test installs Debian's postgresql)")
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at(request, tmp_path) -> str:
    """Where a store test writes: a new SQLite file, or a new database on the throwaway PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite3")
    return request.getfixturevalue("postgres_server").new_database()
