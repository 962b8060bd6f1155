"""The one scenario shared by the Sizing, Performance, Draft Selection and Fleet pages, drawn by app.py.

app.py calls :func:`scenario_sidebar` before it runs a scenario page: the widgets live in the sidebar
and their values are kept in ``st.session_state`` so every page shows (and edits) the same scenario,
also after a visit to a page without it. The values become a typed :class:`planner.Scenario`;
pages read it with :func:`current_scenario` or :func:`scenario_deployment`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from planner import ENGINES, Deployment, ModelSpec, PlannerError, Scenario
from planner.catalog import get_model, list_kv_dtypes, list_models, list_nodes, list_weight_formats

WIDGETS_KEY = "scenario"
SCENARIO_KEY = "scenario_model"
IMPORTED_KEY = "imported_models"
NO_DRAFT = "(no draft)"
CHECKPOINT = "checkpoint default"
SAME_TP = "same as target"


def _widget_defaults(s: Scenario) -> dict[str, Any]:
    """The widgets' values that show scenario ``s`` (0 and blanks stand for the engine's defaults)."""
    return {
        "target": s.target,
        "draft": s.draft or NO_DRAFT,
        "node": s.node,
        "tp": s.tp,
        "pp": s.pp,
        "draft_tp": "1" if s.draft_tp_one else SAME_TP,
        "dtype": s.dtype or CHECKPOINT,
        "draft_dtype": s.draft_dtype or CHECKPOINT,
        "kv_dtype": s.kv_dtype,
        "engine": s.engine,
        "engine_version": s.engine_version or "",
        "engine_default_fraction": s.memory_fraction is None,
        "memory_fraction": s.memory_fraction or 0.9,
        "max_num_batched_tokens": s.max_num_batched_tokens or 0,
        "max_num_seqs": s.max_num_seqs or 0,
        "gpu_memory_gib": s.gpu_memory_gib or 0.0,
        "max_model_len": s.max_model_len,
        "k": s.k,
    }


def _scenario_from_widgets(values: dict[str, Any]) -> Scenario:
    return Scenario.build(
        target=values["target"],
        draft=None if values["draft"] == NO_DRAFT else values["draft"],
        node=values["node"],
        tp=int(values["tp"]),
        pp=int(values["pp"]),
        draft_tp_one=values["draft_tp"] == "1",
        dtype=None if values["dtype"] == CHECKPOINT else values["dtype"],
        draft_dtype=None if values["draft_dtype"] == CHECKPOINT else values["draft_dtype"],
        kv_dtype=values["kv_dtype"],
        engine=values["engine"],
        engine_version=values["engine_version"].strip() or None,
        memory_fraction=None if values["engine_default_fraction"] else float(values["memory_fraction"]),
        max_model_len=int(values["max_model_len"]),
        k=int(values["k"]),
        max_num_batched_tokens=int(values["max_num_batched_tokens"]) or None,
        max_num_seqs=int(values["max_num_seqs"]) or None,
        gpu_memory_gib=float(values["gpu_memory_gib"]) or None,
    )


def _values() -> dict[str, Any]:
    """The persisted widget values (the default scenario's on first use)."""
    if WIDGETS_KEY not in st.session_state:
        st.session_state[WIDGETS_KEY] = _widget_defaults(Scenario())
    return st.session_state[WIDGETS_KEY]


def imported_models() -> dict[str, ModelSpec]:
    """Custom models imported from a config.json in this session, by id."""
    return st.session_state.setdefault(IMPORTED_KEY, {})


def model_choices() -> list[str]:
    return [m.id for m in list_models()] + list(imported_models())


def lookup_model(model_id: str) -> ModelSpec:
    return imported_models().get(model_id) or get_model(model_id)


def _widget(name: str, render) -> Any:
    """Render a widget seeded from the persisted values, then persist what it returns."""
    values = _values()
    key = f"scenario_{name}"
    if key not in st.session_state:
        st.session_state[key] = values[name]
    values[name] = render(key)
    return values[name]


def _select(label: str, name: str, options: list, help: str | None = None):
    if _values()[name] not in options:
        _values()[name] = options[0]
        st.session_state.pop(f"scenario_{name}", None)
    return _widget(name, lambda key: st.sidebar.selectbox(label, options, key=key, help=help))


def _draw() -> dict[str, Any]:
    st.sidebar.header("Scenario")
    models = model_choices()
    formats = [CHECKPOINT] + [f.id for f in list_weight_formats()]
    _select("Target model", "target", models)
    _select("Draft model", "draft", [NO_DRAFT, *models])
    _select("Node type", "node", [n.id for n in list_nodes()])
    _widget("tp", lambda key: st.sidebar.number_input("Tensor parallel (target)", 1, 64, step=1, key=key))
    _widget("pp", lambda key: st.sidebar.number_input("Pipeline parallel (target)", 1, 16, step=1, key=key))
    _select("Draft tensor parallel", "draft_tp", [SAME_TP, "1"])
    _select("Target weights", "dtype", formats)
    _select("Draft weights", "draft_dtype", formats)
    _select("KV cache dtype", "kv_dtype", [k.id for k in list_kv_dtypes()])
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
    return _values()


def scenario_sidebar() -> Scenario | None:
    """app.py: draw the scenario widgets in the sidebar and keep the typed scenario they give."""
    try:
        scenario = _scenario_from_widgets(_draw())
    except PlannerError as exc:
        st.session_state[SCENARIO_KEY] = None
        st.sidebar.error(f"Scenario: {exc}", icon="⚠️")
        return None
    st.session_state[SCENARIO_KEY] = scenario
    return scenario


def current_scenario() -> Scenario | None:
    """The scenario the sidebar holds (the default one before the sidebar first ran; None when invalid)."""
    return st.session_state.get(SCENARIO_KEY, Scenario())


def scenario_deployment() -> Deployment | None:
    """The scenario's Deployment; a bad combination is shown as a message and gives None."""
    scenario = current_scenario()
    if scenario is None:
        return None
    try:
        return scenario.deployment(imported_models())
    except PlannerError as exc:
        st.error(f"Scenario: {exc}", icon="⚠️")
        return None
