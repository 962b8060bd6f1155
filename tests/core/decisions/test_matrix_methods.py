"""The decision matrix compares separate drafts with draft-free methods: n-gram lookup and the target's MTP."""

from planner.catalog.lookup import get_model, get_node
from planner.decisions import decision_matrix
from planner.deployment import Deployment


def _matrix(target: str, node: str, **kw):
    return decision_matrix(Deployment.on_node(get_model(target), get_node(node), tp=8), **kw)


def test_ngram_row_has_memory_speed_and_why_it_ranks_lower():
    matrix = _matrix("Llama-3.1-70B", "8x-h100-sxm-80gb", batch_size=32)
    ngram = next(r for r in matrix.rows if r.method == "ngram")
    drafts = [r for r in matrix.rows if r.method == "draft_model" and r.verdict != "incompatible"]
    assert ngram.draft == "n-gram lookup" and ngram.parameter_ratio is None
    assert ngram.fits and ngram.draft_weights_bytes_per_gpu == 0 and ngram.lost_concurrency <= 1
    assert ngram.alpha_source == "prior" and ngram.speedup_batch_1 > 1 and ngram.speedup_at_batch is not None
    assert ngram.rank > drafts[0].rank and "vs" in ngram.why_lower and "prior" in ngram.why_lower
    assert all("n-gram" in a or "α" in a or "speedups" in a or "drafts" in a for a in matrix.assumptions)


def test_mtp_row_for_a_target_that_ships_mtp_layers_at_their_own_k():
    matrix = _matrix("DeepSeek-V3", "8x-h200-sxm-141gb", batch_size=16)
    mtp = next(r for r in matrix.rows if r.method == "mtp")
    assert mtp.draft == "DeepSeek-V3 MTP module" and mtp.alpha_source == "published"
    assert mtp.optimal_k_at_batch == 1 and mtp.speedup_batch_1 > 1
    assert mtp.parameter_ratio > 10


def test_no_mtp_row_without_mtp_layers_and_draft_free_can_be_left_out():
    matrix = _matrix("Llama-3.1-70B", "8x-h100-sxm-80gb")
    assert not any(r.method == "mtp" for r in matrix.rows)
    assert not any(
        r.method != "draft_model" for r in _matrix("Llama-3.1-70B", "8x-h100-sxm-80gb", draft_free=False).rows
    )


def test_an_engine_release_without_the_method_sinks_it():
    base = Deployment.on_node(
        get_model("DeepSeek-V3"), get_node("8x-h200-sxm-141gb"), tp=8, engine="vllm-v0", engine_version="0.7.0"
    )
    mtp = next(r for r in decision_matrix(base).rows if r.method == "mtp")
    assert mtp.verdict == "incompatible" and mtp.checks[0].status == "fail" and "0.7.3" in mtp.checks[0].detail
    assert mtp.speedup_batch_1 is None and "incompatible" in mtp.why_lower


def test_heads_trained_for_the_target_join_the_ranking_with_their_published_alpha():
    matrix = _matrix_on("Llama-3.1-8B", "1x-h100-sxm-80gb", batch_size=32)
    head = next(r for r in matrix.rows if r.draft == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    assert head.method == "eagle3" and head.alpha_source == "published"
    assert head.fits and 0 < head.draft_weights_bytes_per_gpu < 2**30  # one layer and a 32k-token LM head
    assert head.speedup_batch_1 > 1 and head.speedup_at_batch is not None and head.why_lower
    assert {r.method for r in matrix.rows} >= {"draft_model", "eagle3", "ngram"}
    # a head for another target is not offered
    assert not any(r.method in ("eagle", "eagle3") for r in _matrix_on("Qwen2.5-7B", "1x-h100-sxm-80gb").rows)


def _matrix_on(target: str, node: str, **kw):
    return decision_matrix(Deployment.on_node(get_model(target), get_node(node), tp=1), **kw)
