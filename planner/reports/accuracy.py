"""The planner's accuracy as its benchmarks recorded it in data/, and the public sources of its models.

Nothing here is measured or estimated anew: the memory figures are ``calibration.accuracy`` of
data/engines.json (printed by ``make bench-accuracy``), the speed and serving figures the
``calibration`` record of data/speed_profiles.json (printed by ``make bench-speed-accuracy`` and
``make bench-serving``). A figure missing from data/ is left out, and the line says so. Documents are for
customers: :func:`for_customers` takes repository paths, commands and internal names out of what they print.
"""

from __future__ import annotations

import re

from planner.engines.components import memory_accuracy
from planner.speed.profiles import calibration_summary

#: Public sources of the serving measurements the speed model is checked against.
SERVING_SOURCES = (
    ("MLPerf Inference v4.1 results", "https://github.com/mlcommons/inference_results_v4.1"),
    ("vLLM v0.6.0 performance update", "https://blog.vllm.ai/2024/09/05/perf-update.html"),
    ("vLLM speculative decoding", "https://blog.vllm.ai/2024/10/17/spec-decode.html"),
    ("SpecDecode-Bench", "https://arxiv.org/abs/2601.11580"),
)


#: How the benchmarks' recorded sentences name things, and the words a customer document uses instead (the
#: recorded figures stay as the benchmarks wrote them; documents speak of the product and public sources).
CUSTOMER_WORDS = (
    (re.compile(r"\bmake bench-[\w-]+:?\s*"), ""),
    (re.compile(r"\bpython -m [\w.]+\s*"), ""),
    (re.compile(r"rows of data/calibration/specdec-measured\.csv"), "published speculative-decoding measurements"),
    (re.compile(r"data/calibration/[\w.-]+"), "the planner's calibration set of public measurements"),
    (re.compile(r"data/[\w./-]+"), "the planner's catalog"),
    (re.compile(r"\bhead_pass_overhead_s\b"), "the speculator head's per-pass overhead"),
    (re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+_(?:s|frac|bytes|tok_s)\b"), "a calibrated engine overhead"),
    (re.compile(r"\(\s*,\s*"), "("),
)


def for_customers(text: str) -> str:
    """``text`` without repository paths, commands or internal names (see ``CUSTOMER_WORDS``).

    >>> for_customers("median 2.3% (make bench-accuracy, 2026-12-03), in-sample for head_pass_overhead_s")
    "median 2.3% (2026-12-03), in-sample for the speculator head's per-pass overhead"
    """
    for pattern, words in CUSTOMER_WORDS:
        text = pattern.sub(words, text)
    return " ".join(text.split())


def accuracy_figures() -> list[tuple[str, str]]:
    """(what, recorded figure) lines: memory against start-up logs, speed and serving against measurements."""
    lines = []
    memory = memory_accuracy()
    for key, label in (("kv_tokens_known_engine", "Memory (KV cache)"), ("kv_gib_all", "Memory (KV GiB)")):
        if key in memory:
            lines.append((label, f"{memory[key]} (recorded {memory['date']})"))
    if not memory:
        lines.append(("Memory", "no accuracy figure is recorded for the memory model"))
    speed = calibration_summary()
    for key, label in (("serving_rows", "Serving simulator"), ("goal_rows", "Speculative speedup")):
        if key in speed:
            lines.append((label, f"{speed[key]} (recorded {speed.get('date', 'undated')})"))
    if "serving_rows" not in speed:
        lines.append(("Serving simulator", "no accuracy figure is recorded for the serving simulator"))
    return [(what, for_customers(figure)) for what, figure in lines]


def model_sources() -> list[tuple[str, str]]:
    """The public measurements the planner's models are calibrated and checked against."""
    return [
        ("Memory model", "serving-engine start-up logs published by the engines' users, each with its source"),
        *SERVING_SOURCES,
    ]
