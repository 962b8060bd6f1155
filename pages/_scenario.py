"""The one deployment scenario shared by the Sizing, Performance and Draft Selection pages.

Widgets live in the sidebar; their values are kept in ``st.session_state["scenario"]`` so every page
shows (and edits) the same scenario: there is one copy of the inputs, not one per page.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from planner.catalog import lookup as catalog
from planner.catalog.schemas import ModelSpec
from planner.deployment import ENGINES, Deployment
from planner.errors import PlannerError
from planner.units import gib_to_bytes

SCENARIO_KEY = "scenario"
IMPORTED_KEY = "imported_models"
NO_DRAFT = "(no draft)"
CHECKPOINT = "checkpoint default"

DEFAULTS: dict[str, Any] = {
    "target": "meta-llama/Llama-3.1-70B",
    "draft": "meta-llama/Llama-3.2-1B",
    "node": "8x-h100-sxm-80gb",
    "tp": 8,
    "pp": 1,
    "draft_tp": "same as target",
    "dtype": CHECKPOINT,
    "draft_dtype": CHECKPOINT,
    "kv_dtype": "auto",
    "engine": "vllm",
    "engine_version": "",
    "engine_default_fraction": True,
    "memory_fraction": 0.9,
    "max_num_batched_tokens": 0,
    "max_num_seqs": 0,
    "gpu_memory_gib": 0.0,
    "max_model_len": 8192,
    "k": 5,
}


def scenario() -> dict[str, Any]:
    """The persisted scenario values (defaults on first use)."""
    if SCENARIO_KEY not in st.session_state:
        st.session_state[SCENARIO_KEY] = dict(DEFAULTS)
    return st.session_state[SCENARIO_KEY]


def imported_models() -> dict[str, ModelSpec]:
    """Custom models imported from a config.json in this session, by id."""
    return st.session_state.setdefault(IMPORTED_KEY, {})


def model_choices() -> list[str]:
    return [m.id for m in catalog.list_models()] + list(imported_models())


def lookup_model(model_id: str) -> ModelSpec:
    return imported_models().get(model_id) or catalog.get_model(model_id)


def _widget(name: str, render) -> Any:
    """Render a widget seeded from the persisted scenario, then persist what it returns."""
    values = scenario()
    key = f"scenario_{name}"
    if key not in st.session_state:
        st.session_state[key] = values[name]
    values[name] = render(key)
    return values[name]


def _select(label: str, name: str, options: list, help: str | None = None):
    if scenario()[name] not in options:
        scenario()[name] = options[0]
        st.session_state.pop(f"scenario_{name}", None)
    return _widget(name, lambda key: st.sidebar.selectbox(label, options, key=key, help=help))


def scenario_inputs() -> dict[str, Any]:
    """Draw the scenario widgets in the sidebar and return their values."""
    st.sidebar.header("Scenario")
    models = model_choices()
    formats = [CHECKPOINT] + [f.id for f in catalog.list_weight_formats()]
    _select("Target model", "target", models)
    _select("Draft model", "draft", [NO_DRAFT, *models])
    _select("Node type", "node", [n.id for n in catalog.list_nodes()])
    _widget("tp", lambda key: st.sidebar.number_input("Tensor parallel (target)", 1, 64, step=1, key=key))
    _widget("pp", lambda key: st.sidebar.number_input("Pipeline parallel (target)", 1, 16, step=1, key=key))
    _select("Draft tensor parallel", "draft_tp", ["same as target", "1"])
    _select("Target weights", "dtype", formats)
    _select("Draft weights", "draft_dtype", formats)
    _select("KV cache dtype", "kv_dtype", [k.id for k in catalog.list_kv_dtypes()])
    _select("Serving engine", "engine", list(ENGINES))
    _widget(
        "engine_version",
        lambda key: st.sidebar.text_input(
            "Engine release", key=key, placeholder="newest profiled", help="e.g. 0.19.0; profiles differ by release"
        ),
    )
    default = _widget(
        "engine_default_fraction", lambda key: st.sidebar.checkbox("Engine's default memory fraction", key=key)
    )
    if not default:
        _widget(
            "memory_fraction",
            lambda key: st.sidebar.slider(
                "Engine memory fraction",
                0.30,
                1.00,
                step=0.01,
                key=key,
                help="vLLM gpu_memory_utilization, SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction",
            ),
        )
    _widget(
        "max_model_len",
        lambda key: st.sidebar.number_input("Max model length (tokens)", 256, 1_048_576, step=1024, key=key),
    )
    _widget("k", lambda key: st.sidebar.number_input("Draft length K", 1, 16, step=1, key=key))
    with st.sidebar.expander("Advanced engine knobs"):
        _widget(
            "max_num_batched_tokens",
            lambda key: st.number_input(
                "max_num_batched_tokens (0 = engine default)", 0, 1_048_576, step=1024, key=key
            ),
        )
        _widget(
            "max_num_seqs",
            lambda key: st.number_input("max_num_seqs (0 = engine default)", 0, 65_536, step=64, key=key),
        )
        _widget(
            "gpu_memory_gib",
            lambda key: st.number_input("GPU memory override, GiB (0 = catalog)", 0.0, 1024.0, step=1.0, key=key),
        )
    return scenario()


def deployment_from_scenario(values: dict[str, Any]) -> Deployment:
    """Build the core's Deployment from scenario values (raises PlannerError on bad input)."""
    draft = None if values["draft"] == NO_DRAFT else lookup_model(values["draft"])
    node = catalog.get_node(values["node"])
    return Deployment.on_node(
        lookup_model(values["target"]),
        node,
        draft=draft,
        tp=int(values["tp"]),
        pp=int(values["pp"]),
        draft_tp=(1 if values["draft_tp"] == "1" else None) if draft else None,
        dtype=None if values["dtype"] == CHECKPOINT else values["dtype"],
        draft_dtype=None if (values["draft_dtype"] == CHECKPOINT or not draft) else values["draft_dtype"],
        kv_dtype=values["kv_dtype"],
        engine=values["engine"],
        engine_version=values["engine_version"].strip() or None,
        memory_fraction=None if values["engine_default_fraction"] else float(values["memory_fraction"]),
        max_model_len=int(values["max_model_len"]),
        num_speculative_tokens=int(values["k"]),
        max_num_batched_tokens=int(values["max_num_batched_tokens"]) or None,
        max_num_seqs=int(values["max_num_seqs"]) or None,
        gpu_memory_bytes=gib_to_bytes(values["gpu_memory_gib"]) if values["gpu_memory_gib"] else None,
    )


def scenario_deployment() -> Deployment | None:
    """Sidebar widgets -> Deployment; a bad combination is shown as a message and gives None."""
    values = scenario_inputs()
    try:
        return deployment_from_scenario(values)
    except PlannerError as exc:
        st.error(f"Scenario: {exc}", icon="⚠️")
        return None
