"""The planner's accuracy as its benchmarks recorded it in data/, and the public sources of its models.

Nothing here is measured or estimated anew: the memory figures are ``calibration.accuracy`` of
data/engines.json (printed by ``make bench-accuracy``), the speed and serving figures the
``calibration`` record of data/speed_profiles.json (printed by ``make bench-speed-accuracy`` and
``make bench-serving``). A figure missing from data/ is left out, and the line says so.
"""

from __future__ import annotations

from planner.engines.components import memory_accuracy
from planner.speed.profiles import calibration_summary

#: Public sources of the serving measurements the speed model is checked against.
SERVING_SOURCES = (
    ("MLPerf Inference v4.1 results", "https://github.com/mlcommons/inference_results_v4.1"),
    ("vLLM v0.6.0 performance update", "https://blog.vllm.ai/2024/09/05/perf-update.html"),
    ("vLLM speculative decoding", "https://blog.vllm.ai/2024/10/17/spec-decode.html"),
    ("SpecDecode-Bench", "https://arxiv.org/abs/2601.11580"),
)


def accuracy_figures() -> list[tuple[str, str]]:
    """(what, recorded figure) lines: memory against start-up logs, speed and serving against measurements."""
    lines = []
    memory = memory_accuracy()
    for key, label in (("kv_tokens_known_engine", "Memory (KV cache)"), ("kv_gib_all", "Memory (KV GiB)")):
        if key in memory:
            lines.append((label, f"{memory[key]} ({memory.get('command', 'make bench-accuracy')}, {memory['date']})"))
    if not memory:
        lines.append(("Memory", "no accuracy figure is recorded in data/engines.json: run make bench-accuracy"))
    speed = calibration_summary()
    for key, label in (("serving_rows", "Serving simulator"), ("goal_rows", "Speculative speedup")):
        if key in speed:
            lines.append((label, f"{speed[key]} (recorded {speed.get('date', 'undated')})"))
    if "serving_rows" not in speed:
        lines.append(("Serving simulator", "no accuracy figure is recorded in data/speed_profiles.json"))
    return lines


def model_sources() -> list[tuple[str, str]]:
    """The public measurements the planner's models are calibrated and checked against."""
    return [
        ("Memory model: serving-engine start-up logs", "data/calibration/vllm-kv-cases.csv (a public source per row)"),
        *SERVING_SOURCES,
    ]
