"""`make bench-accuracy` (bench/memory_accuracy.py): the memory plan against real start-up logs keeps its goal on
logs with a known engine, release and flags at a first start (median |KV-token error| <= 1%, worst <= 5%), prints
every case, and keeps logs taken under a condition the plan does not describe (data/calibration/log_conditions.json)
apart from the goal, with their error printed."""

from __future__ import annotations

import json
import re

from bench import memory_accuracy
from bench.kv_cases import load_cases


def _run(capsys) -> str:
    assert memory_accuracy.main([]) == 0
    return capsys.readouterr().out


def test_every_listed_log_is_a_real_case_under_a_defined_condition_with_evidence():
    data = json.loads(memory_accuracy.CONDITIONS_FILE.read_text(encoding="utf-8"))
    cases = {c.case_id: c for c in load_cases()}
    assert data["logs"]
    for entry in data["logs"]:
        assert entry["case_id"] in cases
        assert entry["condition"] in data["conditions"]
        assert len(entry["evidence"]) > 80 and entry["source"]
    warm = data["conditions"]["warm_compile_cache"]
    assert all(url.startswith("https://github.com/vllm-project/vllm/") for url in warm["sources"])


def test_a_warm_start_log_states_the_figures_its_source_gave_for_the_same_flags():
    cases = {c.case_id: c for c in load_cases()}
    for case_id, entry in memory_accuracy.log_conditions().items():
        if entry["condition"] == "warm_compile_cache":
            logged_gib = cases[case_id].logged.kv_cache_bytes / 2**30
            assert min(abs(logged_gib - g) for g in entry["same_flags_logged_gib"]) < 0.01


def test_goal_statistics_hold_and_leave_conditioned_logs_apart(capsys):
    out = _run(capsys)
    goal = re.search(
        r"KV tokens, known engine, release and flags.*median\s+([\d.]+)%\s+worst\s+([\d.]+)%\s+n=(\d+)", out
    )
    median, worst, n = float(goal[1]), float(goal[2]), int(goal[3])
    assert median <= 1.0 and worst <= 5.0
    assert n >= 24
    conditioned = memory_accuracy.log_conditions()
    apart = sum(int(m) for m in re.findall(r"KV tokens, logs with .* \(apart\).*n=(\d+)", out))
    assert apart == len(conditioned)
    for case_id in conditioned:
        row = next(line for line in out.splitlines() if line.startswith(case_id))
        assert re.search(r"-?\d+\.\d", row)  # its error is printed


def test_every_case_is_printed_or_has_a_reason(capsys):
    out = _run(capsys)
    for case in load_cases():
        assert case.case_id[:44] in out


def test_the_figures_the_app_quotes_are_the_benchmark_s_current_ones(capsys):
    """data/engines.json ``calibration.accuracy`` (shown in the app and reports) equals what the benchmark prints now:
    rerun ``python -m bench.memory_accuracy --record`` after a change that moves it."""
    out = _run(capsys)
    recorded = json.loads(memory_accuracy.ENGINES_FILE.read_text(encoding="utf-8"))["calibration"]["accuracy"]
    lines = {
        "kv_tokens_known_engine": r"KV tokens, known engine, release and flags",
        "kv_tokens_v0": r"KV tokens \(else GiB\), vLLM V0 cases",
        "kv_gib_all": r"KV GiB, all cases with logged GiB",
        "kv_tokens_unseen_known": r"KV tokens, known engine, release and flags, unseen",
        "kv_tokens_unseen_v0": r"KV tokens \(else GiB\), vLLM V0 cases, unseen",
    }
    for key, label in lines.items():
        printed = re.search(label + r".*median\s+([\d.]+)%\s+worst\s+([\d.]+)%\s+n=(\d+)", out)
        quoted = re.search(r"median \|error\| ([\d.]+)%, worst ([\d.]+)% over (\d+) logs", recorded[key])
        assert printed.groups() == quoted.groups(), key
