"""Validation: real measurements beside the planner's estimates, and a start-up log checked against `size`."""

import streamlit as st

from planner import GIB, check_log
from planner.measure import detect_gpus, load_records, measurements_dir
from planner.reports import log_facts_view, plain_text, task_verdicts_table
from planner.reports.charts import (
    acceptance_by_position_bars,
    filter_records,
    log_check_bars,
    log_check_frame,
    memory_comparison_bars,
    memory_timeline,
    records_frame,
    speed_comparison_bars,
    task_acceptance_bars,
)
from planner.validation import MAX_LOG_CHARS
from ui._common import MAX_LOG_UPLOAD_BYTES, guarded, shown_table, upload_text
from ui._frame import ensure_app_frame

ensure_app_frame()
st.title("Validation")
st.caption(
    "Measured speculative runs (python -m planner measure, make validate-gpu) against the planner's estimate "
    "for the same deployment; error = (predicted − measured) / measured. GiB = 2^30 bytes."
)

gpus = detect_gpus()
if gpus.available and gpus.devices:
    names = ", ".join(f"{plain_text(d.name)} ({d.total_bytes / GIB:.0f} GiB)" for d in gpus.devices)
    st.info(f"GPU on this machine: {names}. Run `make validate-gpu` or `python -m planner measure ...` to add records.")
else:
    st.warning(
        f"No GPU on this machine ({plain_text(gpus.reason)}): new GPU measurements cannot run here. "
        "Stored records and the log check below still work.",
        icon="🖥️",
    )

records, problems = load_records()
for problem in problems:
    st.warning(plain_text(problem), icon="⚠️")

st.header("Measurement records")
if not records:
    st.info(f"No records yet in {plain_text(measurements_dir())} or the store.")
else:
    all_gpus = sorted({r.gpu_label for r in records})
    all_pairs = sorted({r.pair for r in records})
    left, right = st.columns(2)
    chosen_gpus = left.multiselect("GPU", all_gpus, key="validation_gpus")
    chosen_pairs = right.multiselect("Pair", all_pairs, key="validation_pairs")
    shown = filter_records(records, chosen_gpus, chosen_pairs)
    shown_table(records_frame(shown), "records", key="validation_records_table")
    if shown:
        labels = {f"{r.created_at} · {r.pair} · {r.gpu_label} · {r.status}": r for r in shown}
        record = labels[st.selectbox("Record", list(labels), key="validation_record")]
        if record.did_not_fit is not None:
            st.error(
                f"Did not fit (CUDA out of memory while {plain_text(record.did_not_fit.stage)}): "
                f"{plain_text(record.did_not_fit.message)}"
            )
        if not record.acceptance_meaningful:
            st.caption("Random weights: memory and speed are real; acceptance is not meaningful.")
        cols = st.columns(4)
        cols[0].metric("α (first position)", "-" if record.alpha is None else f"{record.alpha:.3f}")
        cols[1].metric(
            "τ (tokens per step)", "-" if record.mean_accepted_len is None else f"{record.mean_accepted_len:.2f}"
        )
        cols[2].metric("decode speedup", "-" if record.speedup is None else f"{record.speedup:.2f}x")
        peak = record.peak_memory_bytes
        cols[3].metric("peak GPU memory", "-" if not peak else f"{peak / GIB:.2f} GiB")
        if not record.predicted.applicable:
            st.info(f"Prediction: {plain_text(record.predicted.reason)}")
        left, right = st.columns(2)
        left.plotly_chart(memory_comparison_bars(record), key="validation_memory_bars")
        right.plotly_chart(speed_comparison_bars(record), key="validation_speed_bars")
        if record.nvml.available and record.nvml.samples:
            st.plotly_chart(memory_timeline(record), key="validation_timeline")
        else:
            st.caption(f"No NVML timeline: {plain_text(record.nvml.reason or 'no samples')}")
        left, right = st.columns(2)
        left.plotly_chart(acceptance_by_position_bars(record), key="validation_positions")
        right.plotly_chart(task_acceptance_bars(record), key="validation_tasks")
        shown_table(task_verdicts_table(record), key="validation_verdicts")
        with st.expander("Errors, notes and assumptions"):
            st.json(
                {
                    "errors_frac": record.errors_frac,
                    "notes": record.notes,
                    "assumptions": record.predicted.assumptions,
                    "memory notes": record.memory.notes if record.memory else {},
                }
            )

st.header("Check a serving-engine start-up log")
st.caption(
    "Paste or upload a vLLM (V0/V1), SGLang or TensorRT-LLM start-up log: its figures beside the planner's `size`."
)
with st.form("validation_log_form"):
    upload = st.file_uploader(
        f"Log file (at most {MAX_LOG_UPLOAD_BYTES // 2**20} MB)", type=["log", "txt"], key="validation_log_file"
    )
    text = st.text_area("…or paste the log", height=160, max_chars=MAX_LOG_CHARS, key="validation_log_text")
    with st.expander("Facts the log may not state"):
        c1, c2, c3 = st.columns(3)
        model = c1.text_input("Model (catalog id or checkpoint name)", max_chars=200, key="validation_log_model")
        gpu = c2.text_input("GPU (catalog id, e.g. h100-sxm-80gb)", max_chars=100, key="validation_log_gpu")
        tp = c3.number_input("Tensor parallel (0 = from the log)", 0, 64, 0, key="validation_log_tp")
    launch_command = st.text_area(
        "Launch command that produced the log (optional: its flags set the deployment checked)",
        height=100,
        max_chars=20_000,
        key="validation_log_launch",
        help="The vllm serve / sglang / trtllm-serve command, e.g. as the Sizing page's Launch section writes it "
        "(TensorRT-LLM: the options file may follow it).",
    )
    submitted = st.form_submit_button("Check the log", key="validation_log_submit")
if submitted:
    source = upload_text(upload, "log", MAX_LOG_UPLOAD_BYTES) if upload is not None else text
    if source is not None and source.strip():
        with st.spinner(f"Reading {len(source):,} characters of log…"):
            st.session_state["validation_log_check"] = guarded(
                lambda: check_log(
                    source,
                    model=model.strip() or None,
                    gpu=gpu.strip() or None,
                    tp=int(tp) or None,
                    launch_command=launch_command.strip() or None,
                )
            )
    elif source is not None:
        st.info("Paste a log or choose a file, then press Check the log.")
if (check := st.session_state.get("validation_log_check")) is not None:
    facts = check.facts
    st.write(f"Engine: **{plain_text(facts.engine or 'not recognised')}** {plain_text(facts.engine_version or '')}")
    st.dataframe(log_facts_view(facts), hide_index=True, key="validation_log_facts")
    if check.applicable:
        d = check.deployment
        st.success(
            plain_text(f"Planner ({d.engine_profile}) for {d.target} on {d.gpu_count}x {d.gpu}, TP {d.tp} PP {d.pp}")
        )
        shown_table(log_check_frame(check), key="validation_log_rows")
        st.plotly_chart(log_check_bars(check), key="validation_log_bars")
    else:
        st.info(f"No comparison: {plain_text(check.reason)}")
    for note in check.notes + facts.notes:
        st.caption(plain_text(note))
