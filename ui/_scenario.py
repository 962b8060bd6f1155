"""The one scenario every page shares, kept in the link: drawn in the sidebar by app.py, read by the pages.

app.py calls :func:`scenario_sidebar` on every run. The typed :class:`planner.Scenario` lives in
``st.session_state`` and in the page's link (``st.query_params``, short keys from
``planner.scenario.QUERY_KEYS``): a link opened in a new browser, a reload or an edited query string
is read back with the same validation (bad values are named in a banner and replaced by defaults), and
every change made in the sidebar or on a page is written back to the link. Page inputs (Performance
workload, Fleet traffic) are bound to the scenario with :func:`bind`, so they survive page switches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from planner import ENGINES, Deployment, ModelSpec, PlannerError, Scenario
from planner.catalog import (
    get_model,
    list_kv_dtypes,
    list_models,
    list_nodes,
    list_speculators,
    list_weight_formats,
)
from planner.input_types import INPUT_BOUNDS
from planner.reports import plain_text
from planner.validation import custom_model_specs
from ui import _identity
from ui._rerun import keep_shown

SCENARIO_KEY = "scenario_model"
#: The last valid scenario (what the link holds while the sidebar shows an invalid input).
BASE_KEY = "scenario_base"
#: The query parameters this session last wrote (an incoming link that differs is applied).
QUERY_KEY = "scenario_query"
#: The last few links this session read or wrote. A rerun the browser sent before it saw the newest link
#: carries an older one of these: it is an echo of this session's own past, never applied over a newer choice.
LINKS_SEEN_KEY = "scenario_links_seen"
_LINKS_KEPT = 16
IMPORTED_KEY = "imported_models"
NO_DRAFT = "(no draft)"
#: Draft choices that are methods without a draft model (their scenario ``method``).
DRAFT_FREE = {"n-gram lookup (no draft model)": "ngram", "the target's own MTP layers": "mtp"}
CHECKPOINT = "checkpoint default"
SAME_TP = "same as target"
SIDEBAR_FIELDS = (
    "target",
    "draft",
    "node",
    "tp",
    "pp",
    "draft_tp",
    "dtype",
    "draft_dtype",
    "kv_dtype",
    "engine",
    "engine_version",
    "engine_default_fraction",
    "memory_fraction",
    "max_model_len",
    "k",
    "max_num_batched_tokens",
    "max_num_seqs",
    "gpu_memory_gib",
)
#: Page widgets bound to scenario fields: widget key -> (field, scenario value -> widget value, widget -> field).
_BINDINGS: dict[str, tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = {}
#: Fields that go back to their default when another changes (an acceptance value when its convention does).
_CLEARS = {"acceptance_mode": ("acceptance",)}


def _widget_defaults(s: Scenario) -> dict[str, Any]:
    """The sidebar widgets' values that show scenario ``s`` (0 and blanks stand for the engine's defaults)."""
    return {
        "target": s.target,
        "draft": next((label for label, method in DRAFT_FREE.items() if method == s.method), s.draft or NO_DRAFT),
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


def _scenario_from_widgets(values: dict[str, Any], base: Scenario) -> Scenario:
    """``base`` (which holds the page inputs) with the sidebar's fields; raises PlannerError when invalid."""
    return Scenario.build(
        **{
            **base.model_dump(),
            "target": values["target"],
            "draft": None if values["draft"] == NO_DRAFT or values["draft"] in DRAFT_FREE else values["draft"],
            "method": DRAFT_FREE.get(values["draft"]),
            "node": values["node"],
            "tp": int(values["tp"]),
            "pp": int(values["pp"]),
            "draft_tp_one": values["draft_tp"] == "1",
            "dtype": None if values["dtype"] == CHECKPOINT else values["dtype"],
            "draft_dtype": None if values["draft_dtype"] == CHECKPOINT else values["draft_dtype"],
            "kv_dtype": values["kv_dtype"],
            "engine": values["engine"],
            "engine_version": (values["engine_version"] or "").strip()[:40] or None,
            "memory_fraction": None if values["engine_default_fraction"] else float(values["memory_fraction"]),
            "max_model_len": int(values["max_model_len"]),
            "k": int(values["k"]),
            "max_num_batched_tokens": int(values["max_num_batched_tokens"]) or None,
            "max_num_seqs": int(values["max_num_seqs"]) or None,
            "gpu_memory_gib": float(values["gpu_memory_gib"]) or None,
        }
    )


def base_scenario() -> Scenario:
    """The last valid scenario of this session (the default one before anything ran)."""
    return st.session_state.get(BASE_KEY) or Scenario()


def load_scenario(scenario: Scenario) -> None:
    """Make ``scenario`` the session's: every sidebar and bound page widget shows it (a worked example, a link)."""
    st.session_state[BASE_KEY] = scenario
    st.session_state[SCENARIO_KEY] = scenario
    for name, value in _widget_defaults(scenario).items():
        st.session_state[f"scenario_{name}"] = value
    for key in list(st.session_state.keys()):
        if key in _BINDINGS or str(key).startswith("perf_"):
            del st.session_state[key]


def bind(key: str, field: str, shown: Callable[[Any], Any] = lambda v: v, parse: Callable[[Any], Any] = lambda v: v):
    """A page widget's ``key``/``on_change`` keyword arguments tying it to scenario ``field`` (seeded from it).

    ``shown`` turns the field's value into the widget's, ``parse`` the widget's back.
    """
    _BINDINGS[key] = (field, shown, parse)
    if key not in st.session_state:
        st.session_state[key] = shown(getattr(base_scenario(), field))
    keep_shown(key)
    return {"key": key, "on_change": _bound_changed, "args": (key,)}


def _bound_changed(key: str) -> None:
    field, _, parse = _BINDINGS[key]
    base = base_scenario()
    cleared = _CLEARS.get(field, ())
    update = {name: Scenario.model_fields[name].default for name in cleared}
    try:
        update[field] = parse(st.session_state[key])
        st.session_state[BASE_KEY] = Scenario.build(**{**base.model_dump(), **update})
    except (PlannerError, TypeError, ValueError):
        return  # the page validates its own inputs and says what is wrong
    for other, (other_field, _, _) in list(_BINDINGS.items()):
        if other_field in cleared:
            st.session_state.pop(other, None)


def imported_models() -> dict[str, ModelSpec]:
    """Custom models imported from a config.json, by id: those saved in the store (read once per session) and
    those imported or deleted since (the Catalog and Saved pages keep this dict in step with the store)."""
    models = st.session_state.get(IMPORTED_KEY)
    if models is None:
        try:
            actor = _identity.current_actor()
        except _identity.SignInRequiredError:  # nobody signed in yet: no page runs, nothing is kept
            return {}
        try:
            models = {spec.id: spec for spec in custom_model_specs(actor=actor)}  # the person's own and the team's
        except PlannerError:  # a damaged store: the Saved page says so and how to get out of it
            models = {}
        st.session_state[IMPORTED_KEY] = models
    return models


def model_choices() -> list[str]:
    return [m.id for m in list_models()] + list(imported_models())


def draft_choices() -> list[str]:
    """No draft, the draft-free methods, the catalog's speculator heads, then every model."""
    return [NO_DRAFT, *DRAFT_FREE, *(h.id for h in list_speculators()), *model_choices()]


def lookup_model(model_id: str) -> ModelSpec:
    return imported_models().get(model_id) or get_model(model_id)


def _widget(name: str, render) -> Any:
    """Render a sidebar widget seeded from the session's scenario when its state is missing."""
    key = f"scenario_{name}"
    if key not in st.session_state:
        st.session_state[key] = _widget_defaults(base_scenario())[name]
    keep_shown(key)
    return render(key)


def _select(label: str, name: str, options: list, help: str | None = None):
    key = f"scenario_{name}"
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = options[0]
    return _widget(name, lambda key: st.sidebar.selectbox(label, options, key=key, help=help))


def _number(label: str, name: str, step: float, where=None, *, zero: bool = False) -> Any:
    """A number input bounded by ``INPUT_BOUNDS[name]`` (and 0 when ``zero`` stands for the engine's default).

    A state value outside those bounds (which no validated scenario holds) is reset to the default first:
    Streamlit raises on a widget value outside its own bounds.
    """
    low, high = INPUT_BOUNDS[name]
    low = type(low)(0) if zero else low
    if isinstance(step, float):
        low, high = float(low), float(high)
    key = f"scenario_{name}"
    value = st.session_state.get(key)
    if key in st.session_state and not (isinstance(value, int | float) and low <= value <= high):
        st.session_state[key] = _widget_defaults(Scenario())[name]
    where = where or st.sidebar
    return _widget(name, lambda key: where.number_input(label, low, high, step=step, key=key))


def _draw(base: Scenario) -> dict[str, Any]:
    st.sidebar.header("Scenario")
    models = model_choices()
    formats = [CHECKPOINT] + [f.id for f in list_weight_formats()]
    _select("Target model", "target", models)
    _select(
        "Draft model, head or method",
        "draft",
        draft_choices(),
        help="a separate draft model, an EAGLE / EAGLE-3 head trained for the target, n-gram lookup, or the "
        "target's own multi-token-prediction layers",
    )
    _select("Node type", "node", [n.id for n in list_nodes()])
    _number("Tensor parallel (target)", "tp", 1)
    _number("Pipeline parallel (target)", "pp", 1)
    _select("Draft tensor parallel", "draft_tp", [SAME_TP, "1"])
    _select("Target weights", "dtype", formats)
    _select("Draft weights", "draft_dtype", formats)
    _select("KV cache dtype", "kv_dtype", [k.id for k in list_kv_dtypes()])
    _select("Serving engine", "engine", list(ENGINES))
    _widget(
        "engine_version",
        lambda key: st.sidebar.text_input(
            "Engine release",
            key=key,
            placeholder="newest profiled",
            help="e.g. 0.19.0 (vLLM) or 0.4.6 (SGLang): memory rules, defaults, methods and refusals follow the "
            "release; one outside every profiled range is refused with the ranges named",
        ),
    )
    default = _widget(
        "engine_default_fraction", lambda key: st.sidebar.checkbox("Engine's default memory fraction", key=key)
    )
    if not default:
        low, high = INPUT_BOUNDS["memory_fraction"]
        if not low <= st.session_state.get("scenario_memory_fraction", low) <= high:
            st.session_state["scenario_memory_fraction"] = _widget_defaults(Scenario())["memory_fraction"]
        _widget(
            "memory_fraction",
            lambda key: st.sidebar.slider(
                "Engine memory fraction",
                low,
                high,
                step=0.01,
                key=key,
                help="vLLM gpu_memory_utilization, SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction",
            ),
        )
    _number("Max model length (tokens)", "max_model_len", 1024)
    _number("Draft length K (draft tokens per step)", "k", 1)
    with st.sidebar.expander("Advanced engine knobs"):
        _number("Max batched tokens per step (0 = engine default)", "max_num_batched_tokens", 1024, st, zero=True)
        _number("Max sequences per batch (0 = engine default)", "max_num_seqs", 64, st, zero=True)
        _number("GPU memory override, GiB (0 = catalog)", "gpu_memory_gib", 1.0, st, zero=True)
    return {name: st.session_state.get(f"scenario_{name}", value) for name, value in _widget_defaults(base).items()}


def _apply_link() -> list[str]:
    """Load the link's scenario when it is new to this session; what was wrong with it."""
    incoming = st.query_params.to_dict()
    first_run = BASE_KEY not in st.session_state
    if not first_run and (not incoming or incoming in st.session_state.get(LINKS_SEEN_KEY, [])):
        return []  # the session's own link (or a stale echo of it), or one a page switch dropped: it stands
    scenario, problems = Scenario.from_query(incoming, tuple(imported_models()))
    load_scenario(scenario)
    _remember_link(incoming)
    return problems


def _remember_link(query: dict[str, str]) -> None:
    st.session_state[QUERY_KEY] = query
    seen = [q for q in st.session_state.get(LINKS_SEEN_KEY, []) if q != query]
    st.session_state[LINKS_SEEN_KEY] = [*seen, query][-_LINKS_KEPT:]


def _write_link(scenario: Scenario) -> None:
    query = scenario.to_query()
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)
    _remember_link(query)


def scenario_sidebar(draw: bool = True) -> Scenario | None:
    """app.py: read a new link, draw the scenario widgets (``draw``), keep the typed scenario, write the link.

    A link's problems are shown in a banner above the page; an invalid sidebar input blocks the pages'
    results (the scenario is None) with a message, and the link keeps the last valid scenario.
    """
    problems = _apply_link()
    if problems:
        st.warning(
            "Parts of this link were not used:\n\n" + "\n".join(f"- {plain_text(p)}" for p in problems[:8]),
            icon="🔗",
        )
    base = base_scenario()
    scenario: Scenario | None = base
    if draw:
        try:
            scenario = _scenario_from_widgets(_draw(base), base)
        except PlannerError as exc:
            scenario = None
            st.sidebar.error(f"Scenario: {plain_text(exc)}", icon="⚠️")
        except (TypeError, ValueError) as exc:
            scenario = None
            st.sidebar.error(f"Scenario: a sidebar value is not valid ({plain_text(exc)}).", icon="⚠️")
    if scenario is not None:
        st.session_state[BASE_KEY] = scenario
    st.session_state[SCENARIO_KEY] = scenario
    _write_link(base_scenario())
    return scenario


def current_scenario() -> Scenario | None:
    """The scenario the sidebar holds (the default one before the sidebar first ran; None when invalid)."""
    return st.session_state.get(SCENARIO_KEY, Scenario())


def scenario_at_click() -> Scenario | None:
    """The scenario the sidebar's widgets hold now (None when invalid), for a button's callback.

    A callback runs before the page, with the browser's newest widget values; :func:`current_scenario` is what
    the last run that reached the sidebar left, and a busy browser can send a change and a click in one run.
    """
    base = base_scenario()
    values = {name: st.session_state.get(f"scenario_{name}", value) for name, value in _widget_defaults(base).items()}
    try:
        return _scenario_from_widgets(values, base)
    except (PlannerError, TypeError, ValueError):
        return None


def scenario_blocked() -> bool:
    """True (with a message in the page) when the sidebar holds an invalid input: results are not shown."""
    if current_scenario() is None:
        st.error("Fix the scenario in the sidebar (see the message there): results need valid inputs.", icon="⛔")
        return True
    return False


def scenario_deployment() -> Deployment | None:
    """The scenario's Deployment; a bad combination is shown as a message and gives None."""
    if scenario_blocked():
        return None
    scenario = current_scenario()
    try:
        problem = scenario.context_problem(imported_models())
        if problem:
            st.error(plain_text(problem), icon="⛔")
            return None
        return scenario.deployment(imported_models())
    except PlannerError as exc:
        st.error(f"Scenario: {plain_text(exc)}", icon="⚠️")
        return None
