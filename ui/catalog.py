"""Catalog: every model with its exact parameter count, weights per precision and KV per token;
every GPU with the memory software sees; and an import of a custom config.json."""

import streamlit as st

from planner.catalog import MAX_MODEL_NAME_CHARS, import_name, load_config, model_facts, model_from_config
from planner.reports import models_table, plain_text, screen_table
from planner.scenario import MAX_SEARCH_CHARS
from planner.validation import find_custom_model, save_custom_model
from ui._common import (
    MAX_CONFIG_UPLOAD_BYTES,
    catalog_models_table,
    catalog_view,
    error_message,
    guarded,
    shown_table,
    upload_bytes,
)
from ui._flash import set_flash, take_flash
from ui._frame import ensure_app_frame
from ui._scenario import bind, imported_models
from ui._sharing import acting, visibility_choice

IMPORT_FLASH_KEY = "catalog_import_flash"


def _save_import(data: bytes, typed: str) -> None:
    """Save the uploaded config in the store and make it selectable; the outcome is shown on the next run."""
    try:
        outcome = save_custom_model(
            data, typed, actor=acting(), visibility=st.session_state.get("catalog_import_visibility")
        )
        imported_models()[outcome.name] = model_from_config(load_config(data), model_id=outcome.name)
    except Exception as exc:  # shown as a message, never a traceback
        set_flash(IMPORT_FLASH_KEY, ("error", error_message(exc, "the name or the config")))
        return
    if outcome.duplicate:
        set_flash(
            IMPORT_FLASH_KEY,
            (
                "info",
                f"This config is already saved as “{plain_text(outcome.name)}” (not saved again): pick it in the "
                "sidebar.",
            ),
        )
    else:
        set_flash(
            IMPORT_FLASH_KEY,
            ("success", f"Saved “{plain_text(outcome.name)}”: it is selectable as a target or draft on every page."),
        )


ensure_app_frame()
st.title("Catalog")
st.caption(
    "Parameter counts are exact (closed-form per architecture, checked against transformers). "
    "GB = 10^9 bytes, GiB = 2^30 bytes, KiB = 2^10 bytes."
)

models_tab, gpus_tab, nodes_tab, import_tab = st.tabs(["Models", "GPUs", "Node types", "Import config.json"])

with models_tab:
    query = st.text_input(
        "Search models",
        placeholder="e.g. llama, qwen3, moe, gemma",
        max_chars=MAX_SEARCH_CHARS,
        **bind("catalog_query", "catalog_query"),
    )
    view = catalog_view("models")
    if query:
        table = catalog_models_table()
        mask = table.apply(lambda row: query.lower() in " ".join(map(str, row.values)).lower(), axis=1)
        view = screen_table(table[mask], "models")
    shown_table(view, key="catalog_models")
    st.caption(f"{len(view.main)} of {len(catalog_models_table())} models.")

with gpus_tab:
    shown_table(catalog_view("gpus"), key="catalog_gpus")
    st.caption(
        "Memory software sees is what CUDA reports as total, the figure engines budget against; "
        "'estimated' rows have no published log of that total and take it from the vendor's stated memory."
    )

with nodes_tab:
    shown_table(catalog_view("nodes"), key="catalog_nodes")

with import_tab:
    st.write(
        "Upload a Hugging Face `config.json` to see the same numbers for a custom model, then save it on this machine "
        "to pick it as a target or draft on every page. Only the config is read: no weights, no remote code."
    )
    flash, slot = take_flash(IMPORT_FLASH_KEY), st.empty()  # in every run: inputs keep their places
    if flash:
        {"success": slot.success, "info": slot.info}.get(flash[0], slot.error)(flash[1])
    upload = st.file_uploader("config.json", type=["json"], key="catalog_upload")
    data = upload_bytes(upload, "config", MAX_CONFIG_UPLOAD_BYTES) if upload is not None else None
    config = guarded(lambda: load_config(data), "the uploaded config.json") if data is not None else None
    if config is not None:
        typed = st.text_input(
            "Name",
            key="catalog_import_name",
            max_chars=MAX_MODEL_NAME_CHARS,
            placeholder=str(config.get("_name_or_path") or f"custom-{config.get('model_type', 'model')}")[:80],
            help="Blank: the config's own _name_or_path. Your names are unique regardless of case.",
        )
        name = guarded(lambda: import_name(config, typed), "the name")
        spec = guarded(lambda: model_from_config(config, model_id=name or "imported config"), "the uploaded config")
        facts = guarded(lambda: model_facts(spec), "the uploaded config.json") if spec else None
        if facts:
            st.success(
                f"{plain_text(facts.architecture.model_type)}: {facts.params.total_params:,} parameters "
                f"({plain_text(facts.params.method)})"
            )
            shown_table(models_table([facts]), key="catalog_import_table")
            st.json(facts.params.components, expanded=False)
            held = guarded(lambda: find_custom_model(config, actor=acting()), "the store")
            if held:
                st.info(f"This config is already saved as “{plain_text(held)}”: pick it in the sidebar's model lists.")
            else:
                visibility_choice("catalog_import_visibility", acting())
            st.button(
                "Save and use in the scenario (target or draft lists)",
                key="catalog_use_import",
                on_click=_save_import,
                args=(data, typed),
                disabled=name is None or bool(held),
            )
