"""`python -m planner matrix`: JSON and CSV outputs."""

from __future__ import annotations

import csv
import io
import json

from tests.conftest import run_cli


def test_matrix_json_ranks_drafts():
    out = json.loads(
        run_cli(
            "matrix",
            "--target",
            "Llama-3.1-70B",
            "--node",
            "8x-h100-sxm-80gb",
            "--tp",
            "8",
            "--batch-size",
            "4",
            "--max-model-len",
            "8192",
            "--json",
            check=True,
        ).stdout
    )
    assert out["rows"][0]["draft"].startswith("meta-llama/Llama-3.2")
    assert out["batch_size"] == 4 and out["rows"][-1]["verdict"] == "incompatible"


def test_matrix_csv_has_a_header_and_rows():
    text = run_cli(
        "matrix",
        "--target",
        "Qwen2.5-72B",
        "--node",
        "8x-h200-sxm-141gb",
        "--tp",
        "4",
        "--alpha",
        "0.7",
        "--csv",
        check=True,
    ).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and rows[0]["rank"] == "1" and rows[0]["α"] == "0.7"


def test_matrix_bad_alpha_exits_2():
    proc = run_cli("matrix", "--target", "Llama-3.1-8B", "--gpu", "h100-sxm-80gb", "--alpha", "1.5")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
