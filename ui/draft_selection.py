"""Draft Selection: which draft should this target use on this node — or none?"""

import streamlit as st

from planner.catalog import config_fingerprint
from planner.decisions import decision_matrix, matrix_table
from planner.input_types import INPUT_BOUNDS
from planner.pairs import check_pair, load_tokenizer_vocab
from planner.reports import VALUE_LABELS, plain_text, screen_table
from planner.reports.charts import speedup_vs_kv_scatter
from ui._background import result_or_progress, server_jobs
from ui._common import MAX_TOKENIZER_UPLOAD_BYTES, guarded, shown_table, upload_bytes
from ui._frame import ensure_app_frame
from ui._scenario import bind, imported_models, lookup_model, scenario_deployment

ensure_app_frame()
st.title("Draft Selection")
st.caption(
    "Every smaller model checked as a draft for the scenario's target on its node, sized and timed, "
    "ranked by predicted speedup. α per pair: entered > published > prior (each row says which)."
)


def _ranked(batch_size: int, alpha: float | None, extra: tuple[tuple[str, str], ...], dep):
    """The matrix, its table as shown and its chart, computed in the background (ui/_background.py) once per
    inputs (the deployment's JSON, the batch, α and the imported models' ids and config fingerprints: a scenario
    field the deployment does not hold, such as the Fleet page's traffic, changes nothing here). The run waits
    under a progress bar: the tokenizer uploads below it keep their files only in runs that draw them."""
    drafts = [imported_models()[i] for i, _ in extra if i in imported_models()]

    def work(job):
        job.advance("Ranking drafts...")
        matrix = decision_matrix(dep, batch_size=batch_size, alpha=alpha, extra_drafts=drafts)
        table = matrix_table(matrix)
        return matrix, screen_table(table, "matrix"), speedup_vs_kv_scatter(matrix, table)

    job = server_jobs().start(
        ("draft_selection", dep.model_dump_json(), batch_size, alpha, extra), work, steps=1, name="draft ranking"
    )
    return result_or_progress(job, "Ranking drafts", wait=True)


dep = scenario_deployment()
left, mid, right = st.columns(3)
batch_low, batch_high = INPUT_BOUNDS["selection_batch_size"]
batch = left.number_input(
    "Batch size to rank at", batch_low, batch_high, step=1, **bind("selection_batch", "selection_batch_size")
)
assume = mid.checkbox("Assume one α for every pair", **bind("selection_assume", "selection_assume_alpha"))
alpha = right.slider(
    "α (per-token acceptance)",
    *INPUT_BOUNDS["selection_alpha"],
    step=0.01,
    disabled=not assume,
    **bind("selection_alpha", "selection_alpha"),
)

extra = tuple((i, config_fingerprint(spec.config or {})) for i, spec in imported_models().items())
ranked = guarded(lambda: _ranked(int(batch), float(alpha) if assume else None, extra, dep)) if dep else None
if ranked is not None:
    matrix, view, scatter = ranked
    top = matrix.rows[0] if matrix.rows else None
    if top is not None and top.verdict != "incompatible" and top.fits:
        st.success(
            f"Best draft: {plain_text(top.draft)} — predicted {top.speedup_at_batch:.2f}x at batch {matrix.batch_size}"
            + (f" ({top.speedup_batch_1:.2f}x at batch 1)" if matrix.batch_size != 1 else "")
            + f", α {top.alpha:.2f} "
            f"({plain_text(VALUE_LABELS.get(top.alpha_source, top.alpha_source))}), "
            f"speed verdict: {VALUE_LABELS.get(top.speed_verdict, top.speed_verdict)}.",
            icon="✅",
        )
    else:
        st.warning("No compatible draft fits this node: serve without speculation or change the scenario.")

    event = shown_table(view, key="selection_table", on_select="rerun", selection_mode="single-row")
    chosen = event.selection.rows[0] if event and event.selection.rows else 0
    row = matrix.rows[chosen] if matrix.rows else None

    if scatter is not None:
        st.subheader("Predicted speedup against KV cost")
        st.plotly_chart(scatter, key="selection_scatter")

    if row is not None:
        st.subheader(f"Why: {plain_text(row.draft)}")
        ratio = "no draft model" if row.parameter_ratio is None else f"parameter ratio {row.parameter_ratio:.1f}x"
        words = [VALUE_LABELS.get(v, v) for v in (row.verdict, row.method)]
        st.write(f"Compatibility **{words[0]}**, {words[1]}, {ratio}. {plain_text(row.why_lower)}")
        for check in row.checks:
            icon = {"pass": "✅", "warn": "⚠️", "fail": "⛔"}[check.status]
            st.write(f"{icon} **{plain_text(check.name)}** — {plain_text(check.detail)}")
        if row.speed_problem:
            st.caption(f"speed: {plain_text(row.speed_problem)}")
        if row.alpha_detail:
            st.caption(f"α: {plain_text(row.alpha_detail)}")
        for problem in row.memory_problems:
            st.caption(f"memory: {plain_text(problem)}")

    with st.expander("Check real tokenizer files (tokenizer.json)"):
        st.write("Upload the target's and a draft's `tokenizer.json` to compare their real vocabularies.")
        t_file = st.file_uploader("target tokenizer.json", type=["json"], key="selection_target_tok")
        d_file = st.file_uploader("draft tokenizer.json", type=["json"], key="selection_draft_tok")
        models = [r.draft for r in matrix.rows if r.method == "draft_model"]
        draft_for_files = st.selectbox("Draft model", models, key="selection_tok_draft")
        t_data = upload_bytes(t_file, "tokenizer", MAX_TOKENIZER_UPLOAD_BYTES) if t_file is not None else None
        d_data = upload_bytes(d_file, "tokenizer", MAX_TOKENIZER_UPLOAD_BYTES) if d_file is not None else None
        if t_data is not None and d_data is not None and dep is not None:
            verdict = guarded(
                lambda: check_pair(
                    dep.target,
                    lookup_model(draft_for_files),
                    engine=dep.engine,
                    target_tp=dep.tp,
                    target_tokenizer=load_tokenizer_vocab(t_data, field="target_tokenizer", name=t_file.name[:200]),
                    draft_tokenizer=load_tokenizer_vocab(d_data, field="draft_tokenizer", name=d_file.name[:200]),
                ),
                "the uploaded tokenizer files",
            )
            if verdict is not None:
                tokenizer = next(c for c in verdict.checks if c.name == "tokenizer")
                (st.success if tokenizer.status == "pass" else st.error)(f"tokenizer: {plain_text(tokenizer.detail)}")
                if verdict.vocab_comparison is not None:
                    st.json(verdict.vocab_comparison.model_dump(), expanded=False)

    with st.expander("Assumptions"):
        for note in matrix.assumptions:
            st.write(f"- {plain_text(note)}")
