"""The decision matrix: ranking, reasons, α sources, and the engine's rules reaching the plan."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions.selection import candidate_drafts, decision_matrix, matrix_table
from planner.deployment import Deployment
from planner.errors import InputError
from planner.memory.plan import plan_memory

#: The matrix ranks every catalog draft; models without a closed form are counted on the meta device.
pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def matrix_70b():
    base = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8, max_model_len=8192)
    return decision_matrix(base, batch_size=8)


def test_same_family_small_draft_ranks_first_and_every_other_row_says_why(matrix_70b):
    top = matrix_70b.rows[0]
    assert top.draft in ("meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.2-3B")
    assert top.verdict != "incompatible" and top.fits and top.speedup_at_batch > 1
    assert all(r.why_lower for r in matrix_70b.rows[1:])
    ranks = [r.rank for r in matrix_70b.rows]
    assert ranks == list(range(1, len(ranks) + 1))


def test_incompatible_drafts_sink_with_their_reason(matrix_70b):
    verdicts = [r.verdict for r in matrix_70b.rows]
    first_bad = verdicts.index("incompatible")
    assert all(v == "incompatible" for v in verdicts[first_bad:])
    qwen = next(r for r in matrix_70b.rows if r.draft == "Qwen/Qwen2.5-0.5B")
    assert qwen.check("tokenizer").status == "fail" and "tokenizer" in qwen.why_lower
    assert qwen.speedup_at_batch is None  # no speed claim for a pair the engine rejects


def test_compatible_rows_are_ordered_by_predicted_speedup(matrix_70b):
    fitting = [r for r in matrix_70b.rows if r.verdict != "incompatible" and r.fits]
    speeds = [r.speedup_at_batch for r in fitting]
    assert speeds == sorted(speeds, reverse=True)
    for row in fitting:
        assert row.alpha_source in ("published", "prior") and row.alpha_detail
        assert row.lost_concurrency >= 0
        assert 0 < row.draft_kv_share_frac < 1 if row.method == "draft_model" else row.draft_kv_share_frac == 0


def test_an_entered_alpha_is_used_for_every_pair():
    base = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=8192)
    low = decision_matrix(base, batch_size=1, alpha=0.3)
    high = decision_matrix(base, batch_size=1, alpha=0.9)
    learned = [r for r in low.rows if r.alpha is not None and r.method != "ngram"]
    assert learned and all(r.alpha == 0.3 and r.alpha_source == "entered" for r in learned)
    assert all("your value" in r.alpha_detail and "measured for" not in r.alpha_detail for r in learned)
    # n-gram lookup keeps its own α: one assumed α for drafts never makes free lookup the winner
    ngram = next(r for r in low.rows if r.method == "ngram")
    assert ngram.alpha_source != "entered" and ngram.alpha == next(r for r in high.rows if r.method == "ngram").alpha
    assert high.rows[0].speedup_at_batch > low.rows[0].speedup_at_batch


def test_a_measured_alpha_is_labelled_measured_and_a_typed_one_wins_over_it():
    base = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=8192)
    draft = "meta-llama/Llama-3.2-1B"
    measured = decision_matrix(base, measured_alphas={draft: 0.55})
    row = next(r for r in measured.rows if r.draft == draft)
    assert (row.alpha, row.alpha_source) == (0.55, "measured")
    typed = decision_matrix(base, alpha=0.7, measured_alphas={draft: 0.55})
    row = next(r for r in typed.rows if r.draft == draft)
    assert (row.alpha, row.alpha_source) == (0.7, "entered")


def test_candidates_are_smaller_than_the_target():
    target = get_model("Llama-3.1-8B")
    ids = {d.id for d in candidate_drafts(target)}
    assert "meta-llama/Llama-3.2-1B" in ids
    assert target.id not in ids and "meta-llama/Llama-3.1-70B" not in ids


def test_table_has_units_and_one_row_per_draft(matrix_70b):
    table = matrix_table(matrix_70b)
    assert len(table) == len(matrix_70b.rows)
    assert "draft weights / GPU (GiB)" in table.columns and "speedup @ batch 8" in table.columns


def test_bad_batch_size():
    base = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"))
    with pytest.raises(InputError, match="batch_size"):
        decision_matrix(base, batch_size=0)


def test_engine_rejections_reach_the_memory_plan():
    plan = plan_memory(
        Deployment.on_node(
            get_model("Llama-2-70b-hf"), get_node("8x-h100-sxm-80gb"), tp=8, draft=get_model("Llama-3.2-1B")
        )
    )
    assert any(p.startswith(("vocab_size:", "tokenizer:")) for p in plan.problems)
