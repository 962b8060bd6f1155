"""Measured kernel tables: the wrapper's interpolation against table rows, the fallback when the package is
missing, and the physics every priced pass obeys (measured or roofline)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_gpu, get_kv_dtype, get_model, get_node, get_weight_format
from planner.deployment import Deployment
from planner.speed.engine_step import EngineStep
from planner.speed.estimate import SpeedWorkload, baseline_speed, estimate_speed
from planner.speed.kernels import aiconfigurator_tables as tables_module
from planner.speed.kernels.grid import Grid
from planner.speed.profiles import speed_profile
from planner.speed.roofline import model_cost, peak_flops
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate_one
from planner.speed.speed_source import speed_source
from planner.speed.step_model import StepModel
from planner.units import GB

INSTALLED = tables_module.systems_dir() is not None
needs_tables = pytest.mark.skipif(not INSTALLED, reason="aiconfigurator-core is not installed here")


def _rows(path, **equal):
    table = pd.read_parquet(path)
    for name, value in equal.items():
        table = table[table[name] == value]
    return table


def test_grid_interpolates_linearly_and_refuses_outside():
    grid = Grid.build([(1, 10, 1.0), (1, 30, 3.0), (5, 10, 5.0), (5, 30, 7.0)])
    assert grid.at((1, 10)) == 1.0
    assert grid.at((3, 20)) == pytest.approx(4.0)
    assert grid.at((0.5, 10)) is None and grid.at((1, 31)) is None
    assert grid.fix_last(20).at((5,)) == pytest.approx(6.0)


def test_grid_refuses_a_bracket_with_an_unmeasured_corner():
    grid = Grid.build([(1, 10, 1.0), (1, 30, 3.0), (5, 10, 5.0)])
    assert grid.at((1, 20)) == pytest.approx(2.0)
    assert grid.at((3, 20)) is None


_AXIS = st.lists(st.integers(1, 64), min_size=2, max_size=5, unique=True).map(sorted)


@given(st.lists(_AXIS, min_size=2, max_size=3), st.data())
@settings(max_examples=300, deadline=None)
def test_a_two_or_three_axis_lookup_is_the_corner_sum_bit_for_bit(axes, data):
    """The fast paths of two axes (attention kernels) and three (GEMMs) return exactly what the general corner sum
    returns, measured or not (NaN corners), on the grid's points, between them and outside it."""
    cells = list(itertools.product(*axes))
    values = data.draw(st.lists(st.one_of(st.floats(0.01, 100.0), st.just(float("nan"))), min_size=len(cells),
                                max_size=len(cells)))  # fmt: skip
    grid = Grid.build([(*cell, v) for cell, v in zip(cells, values, strict=True)])
    point = tuple(data.draw(st.one_of(st.sampled_from(axis), st.floats(0.0, 70.0))) for axis in axes)
    fast, general = grid.at(point), grid.at_corners(point)
    assert fast == general or (fast is None and general is None)


def _padded(rows, first, **at):
    """The table's value at a shape: the least latency over measured sizes at least as large on the first axis."""
    name, value = first
    rows = rows[rows[name] >= value]
    for name, value in at.items():
        rows = rows[rows[name] == value]
    return rows.latency.min()


@needs_tables
def test_gemm_matches_measured_rows_and_interpolates_between_them():
    tables = tables_module.kernel_tables("h100-sxm-80gb", "vllm")
    path = tables.root / tables.system / "gemm" / tables.engine / tables.version / "gemm_perf.parquet"
    rows = _rows(path, gemm_dtype="bfloat16")
    ms = sorted(rows[(rows.n == 8192) & (rows.k == 8192)].m.unique())
    low_m, high_m = ms[10], ms[11]
    low = _padded(rows, ("m", low_m), n=8192, k=8192)
    high = _padded(rows, ("m", high_m), n=8192, k=8192)
    assert low == pytest.approx(rows[(rows.m == low_m) & (rows.n == 8192) & (rows.k == 8192)].latency.min(), rel=0.2)
    assert tables.gemm_ms("bf16", low_m, 8192, 8192) == pytest.approx(low)
    mid = (low_m + high_m) / 2
    assert tables.gemm_ms("bf16", mid, 8192, 8192) == pytest.approx((low + high) / 2)
    assert tables.gemm_ms("bf16", max(ms) * 2, 8192, 8192) is None  # never extrapolated
    assert tables.gemm_ms("fp8", low_m, 8192, 8192) < low  # another dtype, another table


@needs_tables
def test_decode_attention_matches_a_measured_row():
    tables = tables_module.kernel_tables("h100-sxm-80gb", "vllm")
    path = tables.root / tables.system / "attention" / tables.engine / tables.version
    rows = _rows(
        path / "generation_attention_perf.parquet",
        num_key_value_heads=2,
        head_dim=128,
        kv_cache_dtype="bfloat16",
        window_size=0,
        kernel_source="vllm_flash_attn_fa3",
    )
    expected = _padded(rows, ("batch_size", 64), step=1023, num_heads=16)
    assert tables.decode_attention_ms(64, 1023, 16, 2, 128, "bfloat16") == pytest.approx(expected)


@needs_tables
def test_a_covered_deployment_says_its_kernels_were_measured():
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4)
    assert speed_source(dep).startswith("kernel times measured on H100 SXM for vLLM")
    assert "aiconfigurator-core 0.12.0" in speed_source(dep)


@needs_tables
@pytest.mark.parametrize(
    ("node", "tp", "name"),
    [("8x-b300-288gb", 1, "B300 SXM"), ("4x-gb300-288gb", 1, "GB300"), ("8x-rtx-pro-6000-96gb", 2, "RTX PRO 6000")],
)
@pytest.mark.parametrize(
    ("engine", "engine_name"), [("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM")]
)
def test_blackwell_ultra_and_rtx_pro_nodes_are_priced_from_their_own_tables(node, tp, name, engine, engine_name):
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node(node), tp=tp, engine=engine)
    assert speed_source(dep).startswith(f"kernel times measured on {name}")
    assert f"for {engine_name}" in speed_source(dep)
    step = EngineStep(dep).target.decode(64, 1, 2048)
    assert "roofline" not in step.source.split(";")[0]
    assert 0 < step.total_s < 1


def test_a_gpu_without_tables_uses_the_roofline():
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-l4-24gb"), tp=1)
    assert speed_source(dep).startswith("roofline estimate:")


@pytest.fixture
def without_package():
    with tables_module.roofline_only():  # import (and find_spec) of aiconfigurator_core now fail
        yield


def test_every_speed_entry_point_works_and_says_roofline_without_the_package(without_package):
    assert tables_module.systems_dir() is None
    dep = Deployment.on_node(
        get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4, draft=get_model("Llama-3.2-1B")
    )
    label = "roofline estimate: aiconfigurator-core is not installed"
    assert speed_source(dep) == label
    engine = EngineStep(dep)
    assert engine.target.measured is None and engine.target.source == label
    step = engine.speculative(3, decode_seqs=4, decode_context_tokens=4096)
    assert all(p.source == label for _, p in step.passes)
    est = estimate_speed(dep, SpeedWorkload.build(alpha=0.8))
    assert est.speedup > 0 and est.steps.target_decode.source == label
    assert baseline_speed(dep, SpeedWorkload.build(alpha=0.8)).decode.source == label
    run = simulate_one(dep, ServingWorkload.build(request_rate=2.0, dataset="sharegpt", num_prompts=20), alpha=0.8, k=3)
    assert run.output_tokens_per_s > 0


CASES = [
    ("Llama-3.1-70B", "bf16", "auto", "h100-sxm-80gb", 4, "vllm"),
    ("Llama-3.1-8B", "fp8", "fp8", "h200-sxm-141gb", 1, "trtllm"),
    ("Llama-3.1-405B", "nvfp4", "fp8", "b200-180gb", 4, "trtllm"),
    ("Llama-3.1-8B", "bf16", "auto", "a100-sxm-80gb", 2, "sglang"),
    ("Llama-3.1-8B", "bf16", "auto", "l4-24gb", 1, "vllm"),
    ("Mixtral-8x7B-v0.1", "bf16", "auto", "h100-sxm-80gb", 2, "vllm"),
    ("Qwen3-30B-A3B", "fp8", "fp8", "h200-sxm-141gb", 1, "sglang"),
    ("Llama-3.1-70B", "nvfp4", "fp8", "b300-288gb", 1, "vllm"),
    ("Llama-3.1-70B", "fp8", "fp8", "gb300-288gb", 2, "trtllm"),
    ("Llama-3.1-8B", "bf16", "auto", "rtx-pro-6000-96gb", 2, "sglang"),
]


@settings(max_examples=60, deadline=None)
@given(
    case=st.sampled_from(CASES),
    seqs=st.integers(0, 300),
    query=st.integers(1, 9),
    context=st.integers(1, 60_000),
    chunk=st.integers(0, 8192),
    prefix=st.integers(0, 16_000),
)
def test_no_priced_pass_beats_peak_flops_or_bandwidth(case, seqs, query, context, chunk, prefix):
    model_id, fmt, kv, gpu_id, tp, engine = case
    if seqs == 0 and chunk == 0:
        chunk = 1
    gpu = get_gpu(gpu_id)
    cost = model_cost(get_model(model_id), get_weight_format(fmt), get_kv_dtype(kv), gpu, tp=tp)
    model = StepModel(cost, gpu, speed_profile(engine, gpu.vendor))
    step = model.forward(
        decode_seqs=seqs,
        decode_query_tokens=query,
        decode_context_tokens=seqs * context,
        prefill_tokens=chunk,
        prefill_seqs=1 if chunk else 0,
        prefill_positions=chunk * (prefix + (chunk + 1) / 2) if chunk else 0.0,
        prefill_context_tokens=prefix if chunk else 0,
    )
    assert step.total_s >= step.flops / peak_flops(gpu, cost.compute_dtype) * (1 - 1e-9)
    assert step.total_s >= step.bytes_moved / (gpu.memory_bandwidth_gb_s * GB) * (1 - 1e-9)
    assert step.weight_gemm_s >= step.weight_read_bytes / (gpu.memory_bandwidth_gb_s * GB) * (1 - 1e-9)


#: Deployments whose decode kernels the tables measure at fewer contexts for larger batches (a staircase edge).
_STAIRCASE = [case for case in CASES if case[3] in ("h100-sxm-80gb", "h200-sxm-141gb", "b200-180gb")][:3]
#: The most the measured decode kernels themselves run faster for a longer context, within the grid (7.7% on B200,
#: 3.8% on H100 under vLLM, where the kernel changes how it splits a long context): not a pricing error.
_TABLE_NOISE = 0.08


def _step_model(case: tuple) -> StepModel:
    model_id, fmt, kv, gpu_id, tp, engine = case
    gpu = get_gpu(gpu_id)
    cost = model_cost(get_model(model_id), get_weight_format(fmt), get_kv_dtype(kv), gpu, tp=tp)
    return StepModel(cost, gpu, speed_profile(engine, gpu.vendor))


def _decode_attention(case: tuple) -> Callable[[int, int], float]:
    model = _step_model(case)
    return lambda batch, mean_context: model.decode(batch, 1, mean_context).breakdown()["attention_kv"]


def _prefill_attention(case: tuple) -> Callable[[int, int], float]:
    """Seconds of the causal attention of ``prompts`` whole prompts of ``tokens`` tokens each in one pass."""
    model = _step_model(case)

    def attention_s(prompts: int, tokens: int) -> float:
        step = model.forward(
            prefill_tokens=prompts * tokens, prefill_seqs=prompts, prefill_positions=prompts * tokens * (tokens + 1) / 2
        )
        return step.breakdown()["attention_new"]

    return attention_s


@needs_tables
def test_past_the_grids_edge_attention_costs_no_less_than_the_measured_kernel_before_it():
    """1,040 sequences at 300 tokens on 8x H100 (Llama-3.1-405B FP8) lie past the grid (its 2,048-sequence row stops
    at 256 tokens): the roofline read them in 3.3 ms where 1,003 measured took 5.8 ms."""
    attention_s = _decode_attention(("Llama-3.1-405B", "fp8", "fp8", "h100-sxm-80gb", 8, "trtllm"))
    assert attention_s(1040, 300) >= attention_s(1003, 300)
    assert attention_s(129, 2176) >= attention_s(128, 2176) * (1 - 1e-9)
    assert attention_s(182, 2100) >= attention_s(182, 2047)
    # prefill: the table stops at 16,384-token prompts; one of 16,640 took a third of that time by the roofline
    prefill_s = _prefill_attention(("Llama-3.1-405B", "nvfp4", "fp8", "b200-180gb", 4, "trtllm"))
    assert prefill_s(1, 16_640) >= prefill_s(1, 16_384)
    assert prefill_s(259, 128) >= prefill_s(256, 128)


@needs_tables
def test_past_the_grid_decode_attention_reads_no_faster_than_the_measured_kernel_ever_did():
    """With one KV head per GPU (Llama-3.1-405B at TP 8) the decode kernel reaches 0.65 of an H200's bandwidth on its
    grid; past the grid the roofline reads at that, not at the vendor's 0.90 (a third faster)."""
    model = _step_model(("Llama-3.1-405B", "fp8", "fp8", "h200-sxm-141gb", 8, "trtllm"))
    peak = get_gpu("h200-sxm-141gb").memory_bandwidth_gb_s * GB
    bandwidth = model.measured.decode_bandwidth()
    assert 0.5 * peak < bandwidth < 0.8 * peak < model.bw
    seqs, context = 720, 2000
    assert model.measured.decode_attention_s(seqs, seqs * context) is None  # past the measured grid
    attention_s = model.decode(seqs, 1, context).breakdown()["attention_kv"]
    assert attention_s >= model.kv_full_per_token * seqs * context / bandwidth * (1 - 1e-9)


@needs_tables
@pytest.mark.parametrize(
    ("gpu", "engine"),
    [("a100-sxm-80gb", "trtllm"), ("l40s-48gb", "vllm"), ("h100-sxm-80gb", "sglang"), ("rtx-pro-6000-96gb", "vllm")],
)
def test_past_the_grid_decode_attention_never_reads_faster_than_hbm(gpu, engine):
    """Some measured shapes read faster than the listed bandwidth: L40S's and the RTX PRO 6000's small caches sit in
    their L2 (the RTX PRO's table reads up to 2.4 TB/s where its GDDR7 streams 1.6), and A100's
    TensorRT-LLM table reads 2.1 GB at 1.65 times its bandwidth. None says how fast a cache past the grid, larger
    still, streams from memory: the rate taken there is the best of the shapes memory can have served."""
    model = _step_model(("Llama-3.1-8B", "bf16", "auto", gpu, 1, engine))
    bandwidth = model.measured.decode_bandwidth()
    assert bandwidth is not None and 0.5 * model.bandwidth < bandwidth <= model.bandwidth


@needs_tables
@settings(max_examples=40, deadline=None)
@given(elements=st.floats(min_value=1e7, max_value=4e9), more=st.floats(min_value=1.0, max_value=3.0))
def test_a_larger_all_reduce_never_costs_less_even_past_the_tables(elements, more):
    """The tables measure all-reduces up to 2^28 (NCCL) and 2^29 (custom) values: past them a message is priced as
    slices of the largest, never faster than that edge measured (the ring roofline was 7% faster on 4x H100)."""
    tables = tables_module.kernel_tables("h100-sxm-80gb", "vllm")
    small, large = tables.allreduce_ms(elements, 4), tables.allreduce_ms(elements * more, 4)
    assert small is not None and large is not None and large >= small * (1 - 1e-9)
    edge = tables.allreduce_ms(2.0**29, 4)
    assert tables.allreduce_ms(2.0**30, 4) >= 2 * edge * (1 - 1e-9)


@needs_tables
def test_past_the_grid_prefill_attention_computes_no_faster_than_the_measured_kernel_ever_did():
    """A 4-bit model's attention runs at 8 or 16 bits: its measured prefill kernel reaches a fraction of a B200's FP4
    peak, and past the grid the roofline computes at that rate, not at half of that peak."""
    case = ("meta-llama/Llama-3.3-70B-Instruct", "nvfp4", "fp8", "b200-180gb", 1, "trtllm")
    model = _step_model(case)
    rate = model.measured.prefill_positions_per_s() * model.attn_per_position / model.layers  # FLOP/s
    assert rate < 0.3 * peak_flops(model.gpu, model.cost.compute_dtype)
    tokens = 20_000
    assert model.measured.prefill_attention_s(1, tokens, 0.0) is None  # past the measured grid
    step = model.forward(prefill_tokens=tokens, prefill_seqs=1, prefill_positions=tokens * (tokens + 1) / 2)
    flops = model.attn_per_position * tokens * (tokens + 1) / 2
    assert step.breakdown()["attention_new"] >= flops / rate * (1 - 1e-9)


@needs_tables
@pytest.mark.parametrize(
    ("case", "tokens"),
    [
        (("Llama-3.1-405B", "nvfp4", "fp8", "b200-180gb", 4, "trtllm"), 32_768),
        (("Llama-3.1-405B", "fp8", "fp8", "h100-sxm-80gb", 8, "trtllm"), 65_536),
    ],
)
def test_a_pass_past_the_largest_measured_gemm_costs_no_less_than_it(case, tokens):
    """Past the GEMM table's largest row count a pass is priced as equal row slices, never below as many whole
    largest passes as it holds: two slices of 16,391 rows cost 14% less than one measured pass of 32,768 on B200."""
    model = _step_model(case)

    def gemm_s(n: int) -> float:
        return model.forward(prefill_tokens=n, prefill_seqs=1, prefill_positions=n * (n + 1) / 2).weight_gemm_s

    assert gemm_s(tokens + 13) >= gemm_s(tokens)
    assert gemm_s(tokens + 2) >= gemm_s(tokens)


@needs_tables
@settings(max_examples=80, deadline=None)
@given(
    case=st.sampled_from(_STAIRCASE),
    seqs=st.integers(1, 3000),
    context=st.integers(1, 40_000),
    more_seqs=st.integers(0, 600),
    more_context=st.integers(0, 12_000),
)
def test_decode_attention_never_costs_less_for_more_sequences_or_a_longer_context(
    case, seqs, context, more_seqs, more_context
):
    """Past the measured grid the roofline prices decode attention, never below the measured kernel at the grid's
    edge (before that bound the roofline priced some shapes 20-40% below a smaller measured one)."""
    attention_s = _decode_attention(case)
    less = attention_s(seqs, context)
    assert attention_s(seqs + more_seqs, context) >= less * (1 - 1e-9)
    assert attention_s(seqs, context + more_context) >= less * (1 - _TABLE_NOISE)


@needs_tables
@settings(max_examples=60, deadline=None)
@given(
    case=st.sampled_from(_STAIRCASE),
    prompts=st.integers(1, 300),
    tokens=st.integers(16, 24_000),
    more_prompts=st.integers(0, 64),
    more_tokens=st.integers(0, 8_000),
)
def test_prefill_attention_never_costs_less_for_more_prompts_or_longer_ones(
    case, prompts, tokens, more_prompts, more_tokens
):
    """The same bound for prefill attention past its grid (prompts of up to 16,384 tokens, 256 at once)."""
    attention_s = _prefill_attention(case)
    less = attention_s(prompts, tokens)
    assert attention_s(prompts + more_prompts, tokens) >= less * (1 - 1e-9)
    assert attention_s(prompts, tokens + more_tokens) >= less * (1 - _TABLE_NOISE)


def test_only_the_wrapper_names_the_optional_package():
    root = Path(tables_module.__file__).resolve().parents[3]
    naming = sorted(
        str(path.relative_to(root))
        for path in (root / "planner").rglob("*.py")
        if "aiconfigurator_core" in path.read_text(encoding="utf-8")
    )
    assert naming == ["planner/speed/kernels/aiconfigurator_tables.py"]


@pytest.mark.parametrize(
    "argv",
    [
        ["speedup", "--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B", "--node", "8x-h100-sxm-80gb", "--tp", "8"],
        ["simulate", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--offline", "--num-prompts", "20"],
    ],
)
def test_the_cli_says_roofline_without_the_package(without_package, capsys, argv):
    from planner.cli import main as cli_main  # noqa: PLC0415 (the CLI's imports are its own, loaded per test)

    assert cli_main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["speed_source"] == "roofline estimate: aiconfigurator-core is not installed"


@needs_tables
def test_a_built_grid_is_read_back_from_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_CACHE_DIR", str(tmp_path))
    shipped = tables_module.kernel_tables("h100-sxm-80gb", "vllm")
    fresh = tables_module.KernelTables(shipped.root, shipped.system, shipped.engine, shipped.version, "H100", "vLLM")
    built = fresh.gemm_ms("bf16", 100, 10240, 8192)
    (saved,) = (tmp_path / "kernel-grids").glob("*.npy")
    again = tables_module.KernelTables(fresh.root, fresh.system, fresh.engine, fresh.version, "H100 SXM", "vLLM")
    assert again.gemm_ms("bf16", 100, 10240, 8192) == built
    read, made = again.gemm_grid("bf16"), fresh.gemm_grid("bf16")
    assert read.axes == made.axes and np.array_equal(read.values, made.values, equal_nan=True)
    saved.write_bytes(saved.read_bytes()[:-8])  # a damaged entry (a write cut short) is rebuilt, not trusted
    damaged = tables_module.KernelTables(fresh.root, fresh.system, fresh.engine, fresh.version, "H100", "vLLM")
    assert damaged.gemm_ms("bf16", 100, 10240, 8192) == built
    assert tables_module._unpacked(np.load(saved)).axes == made.axes  # and written again whole


@needs_tables
def test_moe_experts_match_a_measured_row():
    tables = tables_module.kernel_tables("h100-sxm-80gb", "vllm")
    path = tables.root / tables.system / "moe" / tables.engine / tables.version / "moe_perf.parquet"
    rows = _rows(path, moe_dtype="bfloat16", hidden_size=4096, inter_size=14336, topk=2, num_experts=8)
    rows = rows[(rows.moe_tp_size == 2) & (rows.moe_ep_size == 1) & (rows.distribution == "balanced")]
    grid = tables.moe_grid("bfloat16", 4096, 14336, 2, 8, 2)
    assert grid.at((64,)) == pytest.approx(_padded(rows, ("num_tokens", 64)))
    assert tables.moe_grid("bfloat16", 4096, 14000, 2, 8, 2) is None  # an expert shape nobody measured


@needs_tables
def test_a_moe_model_prices_its_experts_from_the_moe_table():
    dep = Deployment.on_node(get_model("Mixtral-8x7B-v0.1"), get_node("8x-h100-sxm-80gb"), tp=2)
    assert speed_source(dep) == tables_module.kernel_tables("h100-sxm-80gb", "vllm").label


@needs_tables
@pytest.mark.parametrize(("gpu", "dtype"), [("h200-sxm-141gb", "fp8"), ("b200-180gb", "nvfp4")])
def test_one_unmeasured_large_pass_leaves_the_smaller_passes_measured(gpu, dtype):
    """Llama-3.3-70B at TP 1: the fused gate+up GEMM (n = 57,344) has no cell at m = 32,768 in TensorRT-LLM's tables;
    every smaller pass is still priced from the tables, and a larger one as row slices of the measured range."""
    dep = Deployment.build(
        target=get_model("meta-llama/Llama-3.3-70B-Instruct"), gpu=get_gpu(gpu), gpu_count=1, tp=1, dtype=dtype,
        kv_dtype="fp8", engine="trtllm", max_model_len=4096,
    )  # fmt: skip
    assert "weight GEMMs" not in speed_source(dep)
    engine = EngineStep(dep)
    small = engine.plain(decode_seqs=256, decode_context_tokens=256 * 1500).passes[0][1]
    assert small.weight_gemm_s > 0
    measured = engine.target.measured
    assert measured is not None
    gemm_16k, gemm_32k = measured.gemm_s(16384, 1), measured.gemm_s(32768, 1)
    assert gemm_16k is not None and gemm_32k == pytest.approx(2 * gemm_16k, rel=0.01)


def test_roofline_only_prices_on_the_roofline_within_and_restores_the_tables_after():
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), tp=1)
    assert speed_source(dep).startswith("kernel times measured on H100 SXM")
    with tables_module.roofline_only():
        assert speed_source(dep) == "roofline estimate: aiconfigurator-core is not installed"
        assert EngineStep(dep).target.measured is None
    assert speed_source(dep).startswith("kernel times measured on H100 SXM")
