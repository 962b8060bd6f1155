"""Kept pass prices: a step priced from the memos equals the same step priced afresh, field for field, and what a
model records as left to the roofline never depends on what was priced before it."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.facts import clear_caches
from planner.speed import engine_step
from planner.speed.drafting import DraftShape
from planner.speed.engine_step import NO_CHUNKS, Chunks, EngineStep, EngineStepTime
from planner.speed.kernels import aiconfigurator_tables as tables_module
from planner.speed.kernels.grid import Grid

TARGET, DRAFT = get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B")
HEAD = get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
#: Decode batches around the captured CUDA-graph sizes of vLLM (tokens), SGLang (requests) and TensorRT-LLM.
BATCHES = (1, 2, 3, 7, 8, 9, 31, 32, 33, 40, 41, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300, 511, 512, 513)

DEPLOYMENTS = {
    "vLLM, draft model, measured kernels": Deployment.on_node(
        TARGET, get_node("8x-h100-sxm-80gb"), tp=4, draft=DRAFT, num_speculative_tokens=3
    ),
    "SGLang, EAGLE-3 head": Deployment.on_node(
        get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), draft=HEAD, engine="sglang"
    ),
    "TensorRT-LLM, n-gram, no padding": Deployment.on_node(
        get_model("Llama-3.1-8B"), get_node("1x-a100-sxm-80gb"), method="ngram", engine="trtllm"
    ),
    "sliding window, draft model": Deployment.on_node(
        get_model("gemma-2-9b"), get_node("1x-h100-sxm-80gb"), draft=get_model("gemma-2-2b")
    ),
    "roofline GPU, eager": Deployment.build(
        target=TARGET, gpu=get_gpu("mi300x-192gb"), gpu_count=8, tp=8, draft=DRAFT, enforce_eager=True
    ),
}


def _mixes(seed: int) -> list[tuple[int, float, tuple[tuple[int, int], ...], int]]:
    """Step mixes: (decode sequences, their summed context, prefill chunks (tokens, cached), K), some sharing a
    token count with a different split or context, so that a key missing a field would hand back another's price."""
    rng = random.Random(seed)
    mixes = []
    for _ in range(120):
        dec = rng.choice([*BATCHES, 0, rng.randint(1, 600)])
        chunks = tuple(
            (rng.randint(1, 2048), rng.choice([0, rng.randint(1, 8000)])) for _ in range(rng.choice([0, 1, 2]))
        )
        if dec == 0 and not chunks:
            dec = 1
        k = rng.choice([1, 3, 5])
        context = dec * rng.uniform(1.0, 30_000.0)
        mixes.append((dec, context, chunks, k))
        if chunks:  # the same tokens in the step, split or cached differently
            total = sum(c for c, _ in chunks)
            mixes.append((dec, context, ((total, rng.randint(0, 4000)),), k))
        mixes.append((dec, context * rng.uniform(0.5, 1.5), chunks, k))  # the same batch at another context
    return mixes


def _price(engine: EngineStep, mix) -> list[EngineStepTime]:
    dec, context, parts, k = mix
    chunks = Chunks()
    for tokens, cached in parts:
        chunks.add(tokens, cached)
    steps = [engine.plain(decode_seqs=dec, decode_context_tokens=context, chunks=chunks)]
    if engine.deployment.is_speculative:
        steps.append(engine.speculative(k, decode_seqs=dec, decode_context_tokens=context, chunks=chunks))
    return steps


def _numbers(step: EngineStepTime) -> tuple:
    """Every figure of a step (its sources aside: those name the fallbacks recorded so far, compared below)."""
    passes = tuple(
        (label, tuple(getattr(p, name) for name in p.__slots__ if name != "source"), p.total_s)
        for label, p in step.passes
    )
    return step.total_s, step.flops, step.bytes_moved, passes


@pytest.mark.parametrize("name", sorted(DEPLOYMENTS))
def test_kept_step_prices_equal_fresh_ones(name):
    dep = DEPLOYMENTS[name]
    mixes = _mixes(seed=len(name))
    clear_caches()
    warm = EngineStep(dep)
    for mix in mixes:  # the first time every part is priced and kept
        _price(warm, mix)
    kept = [_numbers(s) for mix in mixes for s in _price(EngineStep(dep), mix)]  # a second model: all from the memos
    again = [_numbers(s) for mix in mixes for s in _price(warm, mix)]
    clear_caches()  # nothing kept: every part priced afresh, in another order
    fresh_engine = EngineStep(dep)
    fresh = {i: [_numbers(s) for s in _price(fresh_engine, mixes[i])] for i in reversed(range(len(mixes)))}
    fresh_in_order = [n for i in range(len(mixes)) for n in fresh[i]]
    assert kept == fresh_in_order
    assert again == fresh_in_order
    assert fresh_engine.target.source == warm.target.source


def test_padding_is_priced_at_the_captured_size():
    engine = EngineStep(DEPLOYMENTS["vLLM, draft model, measured kernels"])
    at_32 = engine.plain(decode_seqs=32, decode_context_tokens=32 * 1000.0).passes[0][1]
    at_33 = engine.plain(decode_seqs=33, decode_context_tokens=33 * 1000.0).passes[0][1]
    at_40 = engine.plain(decode_seqs=40, decode_context_tokens=40 * 1000.0).passes[0][1]
    assert (at_32.tokens, at_33.tokens, at_40.tokens) == (32, 40, 40)  # 33 runs as the graph captured for 40
    assert at_33.attention_kv_s < at_40.attention_kv_s  # padding tokens add GEMM work only


@pytest.mark.skipif(tables_module.systems_dir() is None, reason="aiconfigurator-core is not installed here")
def test_a_models_source_label_does_not_depend_on_earlier_runs():
    dep = DEPLOYMENTS["vLLM, draft model, measured kernels"]
    clear_caches()
    fresh = EngineStep(dep).plain(decode_seqs=4, decode_context_tokens=4 * 1000.0).passes[0][1].source
    chunk = Chunks()
    chunk.add(500_000, 0)  # a prompt past the measured prefill kernels
    first = EngineStep(dep)
    past = first.plain(decode_seqs=4, decode_context_tokens=4 * 1000.0, chunks=chunk).passes[0][1].source
    assert past != fresh and "prefill attention" in past
    later = EngineStep(dep)  # prices from what ``first`` kept, but records only its own fallbacks
    assert later.plain(decode_seqs=4, decode_context_tokens=4 * 1000.0).passes[0][1].source == fresh
    assert later.plain(decode_seqs=4, decode_context_tokens=4 * 1000.0, chunks=chunk).passes[0][1].source == past


@pytest.mark.skipif(tables_module.systems_dir() is None, reason="aiconfigurator-core is not installed here")
def test_a_decode_plan_past_the_measured_context_records_the_fallback_as_a_fresh_step_does():
    """A kept decode plan prices its pass along the measured decode line; asked at a context past that line it
    falls back to the roofline and records so, as a step priced afresh there does."""
    dep = DEPLOYMENTS["vLLM, draft model, measured kernels"]
    clear_caches()
    fresh = EngineStep(dep)
    past_source = fresh.plain(decode_seqs=8, decode_context_tokens=8 * 2_000_000.0).passes[0][1].source
    engine = EngineStep(dep)
    within = engine.step_totals(None, 8, 8 * 1000.0)  # binds the plan's pricer, inside the measured line
    assert "decode attention" not in engine.target.source
    assert engine.step_totals(None, 8, 8 * 2_000_000.0) == fresh.step_totals(None, 8, 8 * 2_000_000.0)
    assert "decode attention" in engine.target.source and engine.target.source == past_source
    assert engine.step_totals(None, 8, 8 * 1000.0) == within


def test_a_line_lookup_equals_the_general_interpolation():
    rng = np.random.default_rng(0)
    xs = np.unique(rng.uniform(1, 5000, 40))
    values = rng.uniform(0.01, 3.0, len(xs))
    values[[5, 17]] = np.nan  # shapes that were not measured
    line = Grid((tuple(float(x) for x in xs),), values)
    square = Grid((tuple(float(x) for x in xs), (0.0,)), values.reshape(-1, 1))
    probes = [*rng.uniform(0, 5100, 500), *xs, xs[0], xs[-1]]
    for x in probes:
        expected = square.at((float(x), 0.0))
        got = line.at_x(float(x))
        assert (got is None and expected is None) or got == expected
        assert got is None or math.isfinite(got)


def _summed(engine: EngineStep, step: EngineStepTime, dec: int, shape) -> tuple[float, float, float]:
    """A step's seconds, FLOPs and bytes added up from its passes in detail (and the proposer's overheads)."""
    total = sum([p.total_s for _, p in step.passes])
    if shape is not None and dec:
        _, pass_tokens, _, per_pass = engine._drafting_of(shape)
        profile = engine.profile
        total += profile.spec_step_overhead_s + profile.spec_seq_overhead_s * dec
        total += len(pass_tokens) * per_pass
    flops = sum([p.flops for _, p in step.passes])
    moved = sum([p.bytes_moved for _, p in step.passes])
    return engine.with_host(total), flops, moved


def _assert_totals_are_the_passes(engine: EngineStep, shape, dec: int, context: float, chunks: Chunks = NO_CHUNKS):
    """``step_totals`` of a step equals its passes priced one by one, to the last bit, afresh and kept."""
    if shape is None:
        step = engine.plain(decode_seqs=dec, decode_context_tokens=context, chunks=chunks)
    else:
        step = engine.speculative(shape.k, decode_seqs=dec, decode_context_tokens=context, chunks=chunks, shape=shape)
    expected = _summed(engine, step, dec, shape)
    assert (step.total_s, step.flops, step.bytes_moved) == expected
    for _ in range(2):  # the kept batch shape, at this context and again
        assert engine.step_totals(shape, dec, context, chunks) == expected


@pytest.mark.parametrize("name", sorted(DEPLOYMENTS))
def test_a_steps_totals_are_its_passes_added_up(name):
    """What the serving simulator and the search read (``step_totals``, kept per batch shape) equals the step's
    passes priced one by one, to the last bit: plain, chains of every K, and a tree for a head."""
    dep = DEPLOYMENTS[name]
    engine = EngineStep(dep)
    shapes = [None]
    if dep.is_speculative:
        shapes += [engine.shape(k) for k in (1, 3, 5)]
        if dep.speculative_method in ("eagle", "eagle3", "mtp"):
            shapes.append(DraftShape(method=dep.speculative_method, verification="tree", k=4, topk=4,
                                     tree_verify_tokens=16))  # fmt: skip
    for dec, context, parts, _ in _mixes(seed=7 + len(name)):
        chunks = Chunks()
        for tokens, cached in parts:
            chunks.add(tokens, cached)
        for shape in shapes:
            _assert_totals_are_the_passes(engine, shape, dec, context, chunks)


@pytest.mark.parametrize("name", sorted(DEPLOYMENTS))
def test_a_decode_steps_totals_are_its_passes_added_up_past_the_measured_grid_too(name):
    """Decode-only steps (the serving simulator's runs between events) likewise, at every batch around the captured
    sizes and at contexts from one token to past the measured attention grid (where the kernel tables hand the step
    back to the roofline)."""
    dep = DEPLOYMENTS[name]
    engine = EngineStep(dep)
    shapes = [None, *([engine.shape(k) for k in (1, 3)] if dep.is_speculative else [])]
    for dec in BATCHES:
        for per_seq in (1.0, 517.5, 4096.0, 2_000_000.0):
            for shape in shapes:
                _assert_totals_are_the_passes(engine, shape, dec, dec * per_seq)


def test_an_equal_drafting_shape_reuses_the_engines_step_plans():
    """Each run builds its own drafting shape; the engine keeps one instance per shape, so a later run of the same
    replica prices from the plans of the runs before it, and gets the same totals."""
    engine = EngineStep(DEPLOYMENTS["vLLM, draft model, measured kernels"])
    first = engine.interned(DraftShape(method="draft_model", k=3))
    again = DraftShape(method="draft_model", k=3)
    assert again is not first and engine.interned(again) is first
    totals = engine.step_totals(first, 8, 8 * 1000.0)
    plans = len(engine._plans)
    assert engine.step_totals(engine.interned(again), 8, 8 * 1000.0) == totals
    assert len(engine._plans) == plans
    assert engine.interned(DraftShape(method="draft_model", k=4)) is not first


def test_an_empty_chunk_mix_is_priced_as_a_decode_step():
    """The simulator hands a step an empty mix of chunks while requests wait that cannot start: the same step, and
    the same kept plan, as a decode step with no chunks."""
    engine = EngineStep(DEPLOYMENTS["vLLM, draft model, measured kernels"])
    shape = engine.shape(3)
    for dec in (1, 33, 256):
        for s in (None, shape):
            assert engine.step_totals(s, dec, dec * 700.0, Chunks()) == engine.step_totals(s, dec, dec * 700.0)
    assert len(engine._plans) == 6


@pytest.mark.skipif(tables_module.systems_dir() is None, reason="aiconfigurator-core is not installed here")
def test_the_lm_head_line_equals_the_trilinear_lookup():
    """The LM head at a logits count is read along its line over the measured token counts: the value the
    trilinear lookup of that GEMM gives, or none where it gives none (past the table, next to an unmeasured shape)."""
    engine = EngineStep(DEPLOYMENTS["vLLM, draft model, measured kernels"])
    for model in (engine.target, engine.draft):
        measured = model.measured
        for logits in (1, 2, 3, 7, 33, 100, 257, 1000, 4097, 8192, 20_000, 70_000):
            expected = measured._gemm_ms(logits, measured.lm_head_n, measured.hidden)
            got = measured.lm_head_ms(logits, set())
            assert (got is None) == (expected is None)
            assert got is None or got == pytest.approx(expected, rel=1e-12)


def test_the_kept_step_totals_are_bounded_and_start_over_unchanged(monkeypatch):
    """A plan keeps its totals at a few decode contexts and an engine a bounded number in all: past the bound its
    plans start over, and the totals priced again are the same."""
    monkeypatch.setattr(engine_step, "PRICED_ENTRIES", 20)
    engine = EngineStep(DEPLOYMENTS["vLLM, draft model, measured kernels"])
    first = {dec: engine.step_totals(None, dec, dec * 900.0) for dec in range(1, 6)}
    for context in range(30):  # more contexts than a plan keeps, and more totals than the engine keeps
        engine.step_totals(None, 3, 3 * (1000.0 + context))
        assert all(len(plan[3]) <= engine_step.CONTEXTS_PER_PLAN for plan in engine._plans.values())
        assert engine._priced_count < 20
    assert {dec: engine.step_totals(None, dec, dec * 900.0) for dec in range(1, 6)} == first
