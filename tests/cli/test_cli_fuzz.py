"""Fuzz every CLI command in-process: hostile option values, configs, files and export paths.

Whatever the input, a command ends with exit 0 or a one-line error (exit 2): never a traceback,
never "internal error", never a run over 10 s. Seeded (derandomized) and bounded.
"""

from __future__ import annotations

import contextlib
import io
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.cli import main
from planner.model.meta_device import count_on_meta_device
from tests.conftest import TINY_GPT_NEOX

TINY_NEOX = {
    "model_type": "gpt_neox",
    "num_hidden_layers": 1,
    "hidden_size": 8,
    "num_attention_heads": 2,
    "intermediate_size": 16,
    "vocab_size": 10,
}

NUMBERS = [
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e308",
    "5e-324",
    "-1",
    "0",
    "0.5",
    "1",
    "3",
    "2**64",
    "1000000000000",
    str(2**64),
    "1e3",
    "",
    " ",
    "١٢",
    "0x10",
    "9" * 400,
]
NAMES = [
    "",
    " ",
    "\x00",
    "Llama-3.1-8B",
    "no-such-model",
    "../../etc/passwd",
    "=cmd|' /C calc'!A0",
    "<script>",
    "a" * 5000,
    "h100-sxm-80gb",
    "8x-h100-sxm-80gb",
    "\udcff\udcfe",
]
HOSTILE_CONFIGS = [
    {
        "model_type": "llama",
        "num_hidden_layers": 10_000_000,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 100,
    },
    {
        "model_type": "llama",
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 10**40,
    },
    {
        "model_type": "llama",
        "num_hidden_layers": 2,
        "hidden_size": "64",
        "num_attention_heads": 0,
        "intermediate_size": 128,
        "vocab_size": 0,
    },
    {
        **TINY_GPT_NEOX,
        "_attn_implementation": "kernels-community/flash-attn",
        "auto_map": {"AutoModelForCausalLM": "evil--m.Evil"},
    },
    {
        "model_type": "mixtral",
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 100,
        "num_local_experts": 2,
        "num_experts_per_tok": 9,
    },
    {
        "model_type": "llama",
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 100,
        "layer_types": 7,
    },
    [1, 2, 3],
    "not json {",
]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, list[str]]:
    # torch and transformers are imported once here: the 10 s limit is on the command, not on a cold import.
    count_on_meta_device(TINY_NEOX)
    root = tmp_path_factory.mktemp("fuzz")
    configs = []
    for i, cfg in enumerate(HOSTILE_CONFIGS):
        path = root / f"config{i}.json"
        path.write_text(cfg if isinstance(cfg, str) else json.dumps(cfg))
        configs.append(str(path))
    deep = root / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    big = root / "big.json"
    with big.open("wb") as handle:
        handle.truncate(64 * 2**20)
    log = root / "adversarial.log"
    log.write_text("speculative_config=(" * 40_000)
    odd = [
        str(deep),
        str(big),
        str(root),
        str(root / "missing.json"),
        "/proc/self/mem",
        "/dev/zero",
        "",
        str(root).encode().decode() + "/\udcff.json",
        str(log),
    ]
    exports = [
        str(root / "out.md"),
        str(root / "out.xlsx"),
        str(root / "out.json"),
        str(root / "missing" / "x.md"),
        str(root),
        str(root / ("a" * 300 + ".md")),
        str(root / "x.docx"),
        "/proc/x.pdf",
        "",
    ]
    return {"configs": configs + odd, "exports": exports, "logs": [str(log), *odd]}


def run(argv: list[str]) -> tuple[int, str, float]:
    err = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return int(code or 0), err.getvalue(), time.perf_counter() - start


def check(argv: list[str]) -> None:
    code, err, elapsed = run(argv)
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    assert err.count("\n") <= 2, (argv, err)  # one error line (plus "wrote FILE" for an export)
    # No wall-clock bound here: on a loaded machine any call can take seconds. Runs stay short by construction
    # (input bounds and the work budgets of planner.input_types), which the refusals above exercise.
    del elapsed


DEPLOYMENT_FLAGS = [
    "--gpus",
    "--gpu-memory-gib",
    "--tp",
    "--pp",
    "--draft-tp",
    "--gpu-memory-utilization",
    "--max-model-len",
    "--max-num-batched-tokens",
    "--max-num-seqs",
    "--k",
    "--hf-batch-size",
]
BASE = {
    "params": ["params", "--model", "Llama-3.1-8B"],
    "kv": ["kv", "--model", "Llama-3.1-8B"],
    "size": ["size", "--target", "Llama-3.1-8B", "--draft", "Llama-3.2-1B", "--gpu", "h100-sxm-80gb"],
    "speedup": [
        "speedup",
        "--target",
        "Llama-3.1-8B",
        "--draft",
        "Llama-3.2-1B",
        "--gpu",
        "h100-sxm-80gb",
        "--alpha",
        "0.7",
    ],
    "check-pair": ["check-pair", "--target", "Llama-3.1-8B", "--draft", "Llama-3.2-1B"],
    "quote": ["quote", "--target", "Llama-3.1-8B", "--node", "8x-h100-sxm-80gb", "--requests-per-s", "2"],
    "catalog": ["catalog", "gpus"],
    "measure": [
        "measure",
        "--target-config",
        "missing-target.json",
        "--draft-config",
        "missing.json",
        "--random-weights",
    ],
}
FLAGS = {
    "params": ["--model", "--config"],
    "kv": ["--model", "--config", "--tp", "--context", "--kv-dtype"],
    "size": [
        "--target",
        "--draft",
        "--gpu",
        "--node",
        "--target-config",
        "--dtype",
        "--kv-dtype",
        "--engine-version",
        "--export",
        *DEPLOYMENT_FLAGS,
    ],
    "speedup": ["--alpha", "--batch-size", "--prompt-tokens", "--output-tokens", "--tp", "--gpu-memory-gib"],
    "check-pair": [
        "--target",
        "--draft",
        "--tp",
        "--draft-tp",
        "--target-tokenizer",
        "--draft-tokenizer",
        "--target-config",
    ],
    "quote": [
        "--requests-per-s",
        "--prompt-tokens",
        "--output-tokens",
        "--tpot-slo-ms",
        "--alpha",
        "--price-usd-per-gpu-hour",
        "--node",
        "--kv-dtype",
        "--export",
        "--target-config",
    ],
    "catalog": [],
    "measure": [
        "--k",
        "--temperature",
        "--seed",
        "--max-new-tokens",
        "--prompts",
        "--prompts-per-task",
        "--sample-interval-ms",
        "--tp",
        "--gpu",
        "--target-config",
    ],
}


def _value(flag: str, files: dict[str, list[str]]) -> st.SearchStrategy[str]:
    if flag in (
        "--config",
        "--target-config",
        "--draft-config",
        "--prompts",
        "--target-tokenizer",
        "--draft-tokenizer",
    ):
        return st.sampled_from(files["configs"])
    if flag == "--export":
        return st.sampled_from(files["exports"])
    if flag in ("--model", "--target", "--draft", "--gpu", "--node", "--dtype", "--kv-dtype", "--engine-version"):
        return st.sampled_from(NAMES)
    return st.sampled_from(NUMBERS)


def _replace(argv: list[str], flag: str, value: str) -> list[str]:
    out = list(argv)
    groups = {
        ("--model", "--config"),
        ("--target", "--target-config"),
        ("--gpu", "--node"),
        ("--draft", "--draft-config"),
    }
    for group in groups:
        if flag in group:
            for other in group:
                if other in out and other != flag:
                    i = out.index(other)
                    del out[i : i + 2]
    if flag in out:
        out[out.index(flag) + 1] = value
    else:
        out += [flag, value]
    return out


@pytest.mark.parametrize("command", sorted(BASE))
def test_fuzz_every_command(command, files):
    @settings(
        max_examples=10 if command not in ("speedup", "quote") else 6,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def fuzz(data):
        argv = BASE[command]
        for _ in range(data.draw(st.integers(1, 3))):
            if not FLAGS[command]:
                break
            flag = data.draw(st.sampled_from(FLAGS[command]))
            argv = _replace(argv, flag, data.draw(_value(flag, files)))
        check(argv)

    fuzz()


@pytest.mark.parametrize("index", range(len(HOSTILE_CONFIGS)))
@pytest.mark.parametrize("command", ["params", "kv", "size"])
def test_every_hostile_config_is_a_clean_error_or_a_count(command, index, files):
    flag = "--config" if command in ("params", "kv") else "--target-config"
    argv = _replace(BASE[command], flag, files["configs"][index])
    check(argv)


@pytest.mark.parametrize("index", range(9))
def test_check_log_files_and_fuzzed_options(index, files):
    path = files["logs"][index]
    check(["check-log", path])
    check(["check-log", path, "--tp", NUMBERS[index], "--gpu", NAMES[index], "--memory-fraction", NUMBERS[-index]])


def test_exports_write_or_fail_in_one_line(files, tmp_path):
    for export in files["exports"]:
        check([*BASE["size"], "--export", export])
    code, err, _ = run([*BASE["size"], "--export", str(tmp_path / "ok.xlsx")])
    assert code == 0 and (tmp_path / "ok.xlsx").stat().st_size > 0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((".partial", ".tmp"))]
    code, err, _ = run([*BASE["size"], "--export", str(tmp_path / "missing" / "x.md")])
    assert code == 2 and "--export" in err and ".partial" not in err
