"""Catalog: every model with its exact parameter count, weights per precision and KV per token;
every GPU with the memory software sees; and an import of a custom config.json."""

import streamlit as st

from pages._common import (
    MAX_CONFIG_UPLOAD_BYTES,
    catalog_gpus_table,
    catalog_models_table,
    catalog_nodes_table,
    guarded,
    upload_bytes,
)
from pages._frame import ensure_app_frame
from pages._scenario import imported_models
from planner.catalog import model_facts, model_from_config
from planner.reports import models_table

ensure_app_frame()
st.title("Catalog")
st.caption(
    "Parameter counts are exact (closed-form per architecture, checked against transformers). "
    "GB = 10^9 bytes, GiB = 2^30 bytes, KiB = 2^10 bytes."
)

models_tab, gpus_tab, nodes_tab, import_tab = st.tabs(["Models", "GPUs", "Node types", "Import config.json"])

with models_tab:
    query = st.text_input("Search models", placeholder="e.g. llama, qwen3, moe, gemma", key="catalog_query")
    table = catalog_models_table()
    if query:
        mask = table.apply(lambda row: query.lower() in " ".join(map(str, row.values)).lower(), axis=1)
        table = table[mask]
    st.dataframe(
        table,
        hide_index=True,
        column_config={
            "params (B)": st.column_config.NumberColumn(format="%.3f"),
            "active params (B)": st.column_config.NumberColumn(format="%.3f"),
            "KV/token bf16 (KiB)": st.column_config.NumberColumn(format="%.1f"),
            "KV/token fp8 (KiB)": st.column_config.NumberColumn(format="%.1f"),
            **{c: st.column_config.NumberColumn(format="%.2f") for c in table.columns if c.startswith("weights")},
        },
    )
    st.caption(f"{len(table)} of {len(catalog_models_table())} models.")

with gpus_tab:
    st.dataframe(catalog_gpus_table(), hide_index=True)
    st.caption(
        "Reported memory is what CUDA reports as total, the figure engines budget against; "
        "'estimated' rows derive it from the catalog (see data/gpus.json)."
    )

with nodes_tab:
    st.dataframe(catalog_nodes_table(), hide_index=True)

with import_tab:
    st.write(
        "Upload a Hugging Face `config.json` to see the same numbers for a custom model. "
        "Only the config is read: no weights, no remote code."
    )
    upload = st.file_uploader("config.json", type=["json"], key="catalog_upload")
    data = upload_bytes(upload, "config", MAX_CONFIG_UPLOAD_BYTES) if upload is not None else None
    if data is not None:
        spec = guarded(lambda: model_from_config(data, model_id=upload.name[:200]), "the uploaded config.json")
        facts = guarded(lambda: model_facts(spec), "the uploaded config.json") if spec else None
        if facts:
            st.success(
                f"{facts.architecture.model_type}: {facts.params.total_params:,} parameters ({facts.params.method})"
            )
            st.dataframe(models_table([facts]), hide_index=True)
            st.json(facts.params.components, expanded=False)
            if st.button("Use this model in the scenario (target or draft lists)", key="catalog_use_import"):
                imported_models()[spec.id] = spec
                st.success(f"{spec.id} is now selectable on the Sizing, Performance and Draft Selection pages.")
