"""One mechanism per concept: engines, budget rules, precision spellings and element sizes each live in one place."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

import pytest

from planner.deployment import ENGINES, Engine
from planner.engines.names import engine_id, find_engine_id
from planner.engines.profiles import PROFILE_VARIANTS, engines_file, list_engine_profiles, list_engines
from planner.errors import InputError
from planner.memory.budget_rules import RULES, budget_rule
from planner.model.dtypes import element_bytes, list_kv_dtypes, list_weight_formats, precision_id

ROOT = Path(__file__).resolve().parents[2]


def test_engine_literal_equals_the_data_and_the_profile_variants():
    assert get_args(Engine) == ENGINES
    assert tuple(e.id for e in list_engines()) == ENGINES
    assert {get_args(v.model_fields["engine"].annotation)[0] for v in PROFILE_VARIANTS} == set(ENGINES)
    assert {p.engine for p in list_engine_profiles()} == set(ENGINES)


def test_profiles_reject_unknown_fields():
    raw = engines_file()["engines"][0]["profiles"][0]
    variant = PROFILE_VARIANTS[0]
    with pytest.raises(ValueError, match="extra"):
        variant.model_validate({**raw, "engine": ENGINES[0], "engine_name": "x", "memory_knob": None, "typo": 1})


def test_every_budget_rule_is_dispatched():
    rules = set(get_args(PROFILE_VARIANTS[0].model_fields["budget_rule"].annotation))
    assert set(RULES) == rules
    for profile in list_engine_profiles():
        assert budget_rule(profile) is RULES[profile.budget_rule]


@pytest.mark.parametrize(
    ("spelling", "engine"),
    [("vLLM", "vllm"), ("vllm-v1", "vllm"), ("vllm-v0", "vllm-v0"), ("SGLang", "sglang"),
     ("TensorRT-LLM", "trtllm"), ("tensorrt_llm", "trtllm"), ("trtllm", "trtllm"), ("transformers", "hf"),
     ("hf", "hf")],
)  # fmt: skip
def test_engine_spellings_normalise(spelling, engine):
    assert engine_id(spelling) == engine


def test_unknown_engine_names_the_allowed_ones():
    assert find_engine_id("llama.cpp") is None
    with pytest.raises(InputError, match="vllm"):
        engine_id("llama.cpp")


def test_every_precision_alias_resolves_to_its_one_id():
    for kind, entries in (("weight", list_weight_formats()), ("kv", list_kv_dtypes())):
        for entry in entries:
            for spelling in (entry.id, *entry.aliases, entry.id.upper()):
                assert precision_id(spelling, kind) == entry.id
    assert precision_id("awq_marlin") == "int4-awq" and precision_id("modelopt_fp4") == "nvfp4"
    assert precision_id("torch.float16") == "fp16" and precision_id("no-such-format") is None


def test_element_bytes_follow_the_data():
    assert [element_bytes(d) for d in ("fp32", "bf16", "fp16", "fp8", "bfloat16")] == [4, 2, 2, 1, 2]
    with pytest.raises(ValueError):
        element_bytes("int4-awq")


def _engine_name_comparisons(path: Path) -> list[str]:
    """Comparisons of anything with an engine id string literal (``x == "vllm"``, ``x in ("sglang", ...)``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        for comparator in (node.left, *node.comparators):
            values = comparator.elts if isinstance(comparator, (ast.Tuple, ast.List, ast.Set)) else [comparator]
            if any(isinstance(v, ast.Constant) and v.value in ENGINES for v in values):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


#: Comparisons that are not engine behaviour: which log format a text is (the parser's own detection), which
#: measurement backend runs, and the fleet's stand-in for transformers (ui/_common.py fleet_engine).
NOT_BEHAVIOUR = {"planner/validation/engine_log.py", "planner/measure/harness.py", "ui/_common.py"}


def test_no_module_branches_on_an_engine_name():
    files = [*(ROOT / "planner").rglob("*.py"), *(ROOT / "ui").glob("*.py"), ROOT / "app.py"]
    hits = [hit for path in files for hit in _engine_name_comparisons(path)]
    assert [hit for hit in hits if hit.split(":")[0] not in NOT_BEHAVIOUR] == []
    assert _engine_name_comparisons(ROOT / "planner/memory/budget.py") == []


def test_no_other_table_of_precision_spellings():
    pattern = re.compile(r"[\"'](bfloat16|float16|awq_marlin|modelopt_fp4)[\"']\s*:")
    hits = [
        str(path.relative_to(ROOT)) for path in (ROOT / "planner").rglob("*.py") if pattern.search(path.read_text())
    ]
    assert hits == []
