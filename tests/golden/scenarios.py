"""Ten scenarios whose CLI JSON is pinned byte for byte (tests/golden/test_golden.py).

Regenerate after an intended change with ``python -m tests.golden.scenarios --write`` and name the change
in the commit message.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from planner.cli import main as cli_main

GOLDEN_DIR = Path(__file__).parent / "outputs"

NODE = "8x-h100-sxm-80gb"
SPEEDUP_70B_1B = ["speedup", "--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--node", NODE, "--tp", "8"]
SCENARIOS: dict[str, list[str]] = {
    "size-70b-3b-h100-tp8": [
        "size",
        "--target",
        "Llama-3.1-70B",
        "--draft",
        "Llama-3.2-3B",
        "--node",
        NODE,
        "--tp",
        "8",
    ],
    "size-70b-h100-tp1": ["size", "--target", "Llama-3.1-70B", "--node", NODE, "--tp", "1"],
    "size-8b-1b-sglang": [
        "size",
        "--target",
        "Llama-3.1-8B",
        "--draft",
        "Llama-3.2-1B",
        "--gpu",
        "h100-sxm-80gb",
        "--engine",
        "sglang",
    ],
    "size-qwen72b-fp8kv-h200": [
        "size",
        "--target",
        "Qwen2.5-72B",
        "--draft",
        "Qwen2.5-0.5B",
        "--node",
        "8x-h200-sxm-141gb",
        "--tp",
        "4",
        "--kv-dtype",
        "fp8",
    ],
    "speedup-70b-1b-b1": [*SPEEDUP_70B_1B, "--alpha", "0.8", "--batch-size", "1"],
    "speedup-70b-1b-b64": [*SPEEDUP_70B_1B, "--alpha", "0.7", "--batch-size", "64"],
    "check-pair-qwen": ["check-pair", "--target", "Qwen2.5-72B", "--draft", "Qwen2.5-0.5B"],
    "check-pair-llama-cross": ["check-pair", "--target", "Llama-3.1-70B", "--draft", "Qwen2.5-0.5B"],
    "matrix-70b-h100": ["matrix", "--target", "Llama-3.1-70B", "--node", NODE, "--tp", "8", "--batch-size", "8"],
    "quote-70b-1b": [
        "quote",
        "--target",
        "Llama-3.1-70B",
        "--draft",
        "Llama-3.2-1B",
        "--node",
        NODE,
        "--node",
        "8x-h200-sxm-141gb",
        "--requests-per-s",
        "50",
        "--tpot-slo-ms",
        "40",
    ],
}


def run_cli(argv: list[str]) -> str:
    """Run ``python -m planner ARGV --json`` in this process and return stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main([*argv, "--json"])
    if code != 0:
        raise RuntimeError(f"{argv} exited {code}")
    return out.getvalue()


def canonical(text: str) -> str:
    return json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n"


def main() -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name, argv in SCENARIOS.items():
        (GOLDEN_DIR / f"{name}.json").write_text(canonical(run_cli(argv)))
        print(name)


if __name__ == "__main__" and "--write" in sys.argv:
    main()
