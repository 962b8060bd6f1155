"""`python -m planner measure`: a real speculative job on CPU through the CLI, and its errors."""

from __future__ import annotations

import json

import pytest

from tests.conftest import TINY_LLAMA, run_cli

TINY = TINY_LLAMA
ISSUE_KEYS = {
    "hardware",
    "alpha",
    "mean_accepted_len",
    "acceptance_by_position",
    "tokens_per_s",
    "baseline_tokens_per_s",
    "speedup",
    "peak_memory_bytes",
    "nvml_available",
    "predicted",
    "errors_frac",
    "verdict_by_task",
}


@pytest.fixture
def tiny(tmp_path, tmp_store):
    (tmp_path / "target.json").write_text(json.dumps(TINY))
    (tmp_path / "draft.json").write_text(json.dumps(TINY | {"num_hidden_layers": 1, "hidden_size": 32}))
    return tmp_path


def _measure_on_cpu(tiny, *args: str, draft: str = "draft.json"):
    """``planner measure`` of the tiny pair with random weights on CPU (must succeed)."""
    return run_cli(
        "measure",
        "--target-config",
        str(tiny / "target.json"),
        "--draft-config",
        str(tiny / draft),
        "--random-weights",
        "--device",
        "cpu",
        *args,
        check=True,
    )


def test_measure_runs_a_real_speculative_job_on_cpu(tiny):
    out = _measure_on_cpu(
        tiny,
        "--k",
        "3",
        "--max-new-tokens",
        "12",
        "--prompts-per-task",
        "1",
        "--out",
        str(tiny / "records"),
        "--json",
    )
    record = json.loads(out.stdout)
    assert set(record) >= ISSUE_KEYS
    assert 0.0 <= record["alpha"] <= 1.0
    assert record["tokens_per_s"] > 0 and record["baseline_tokens_per_s"] > 0
    assert record["nvml_available"] is False
    assert record["predicted"]["reason"] == "no GPU: prediction not applicable"
    assert set(record["verdict_by_task"]) == {"chat", "code", "summarisation"}
    files = list((tiny / "records").glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["id"] == record["id"]
    assert (tiny / "store.sqlite3").exists()


def test_exact_copy_through_the_cli(tiny):
    out = _measure_on_cpu(
        tiny,
        "--k",
        "4",
        "--max-new-tokens",
        "10",
        "--prompts-per-task",
        "1",
        "--no-save",
        "--json",
        draft="target.json",
    )
    record = json.loads(out.stdout)
    assert record["alpha"] == 1.0 and record["mean_accepted_len"] == 5.0
    assert record["outputs_match_baseline"] is True
    assert not list(tiny.glob("records/*.json"))


def test_summary_output_names_the_figures(tiny):
    out = _measure_on_cpu(
        tiny,
        "--max-new-tokens",
        "6",
        "--prompts-per-task",
        "1",
        "--no-save",
        "--gpu",
        "h100-sxm-80gb",
    )
    assert "acceptance α" in out.stdout and "not meaningful" in out.stdout
    assert "prediction (h100-sxm-80gb, engine hf) error: target_weights +0.0%" in out.stdout


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ([], "random_weights"),  # a config without --random-weights
        (["--random-weights", "--dtype", "int3"], "dtype"),
        (["--random-weights", "--backend", "vllm"], "backend"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tiny, extra, field):
    proc = run_cli(
        "measure",
        "--target-config",
        str(tiny / "target.json"),
        "--draft-config",
        str(tiny / "draft.json"),
        "--device",
        "cpu",
        "--no-save",
        *extra,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and field in proc.stderr


def test_missing_folder_is_an_input_error(tiny):
    proc = run_cli("measure", "--target", str(tiny / "nope"), "--draft", str(tiny / "nope"), "--device", "cpu")
    assert proc.returncode == 2 and "target" in proc.stderr
