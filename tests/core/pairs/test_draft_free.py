"""Acceptance of n-gram lookup (by task) and of a target's MTP module."""

import pytest

from planner.catalog.lookup import get_model
from planner.errors import InputError
from planner.pairs import draft_free_acceptance


def test_ngram_depends_on_the_task_and_grounded_tasks_accept_more():
    target = get_model("Llama-3.1-70B")
    open_ended = draft_free_acceptance(target, "ngram")
    grounded = draft_free_acceptance(target, "ngram", task="grounded")
    assert open_ended.source == grounded.source == "prior"
    assert grounded.alpha > open_ended.alpha
    assert "prompt" in open_ended.detail and open_ended.evidence


def test_measured_alpha_wins():
    est = draft_free_acceptance(get_model("Llama-3.1-8B"), "ngram", measured_alpha=0.42)
    assert (est.alpha, est.source) == (0.42, "measured")


def test_mtp_alpha_is_published_for_deepseek_and_refused_elsewhere():
    est = draft_free_acceptance(get_model("DeepSeek-V3"), "mtp")
    assert est.source == "published" and est.alpha == 0.85 and "2412.19437" in est.evidence[0]
    with pytest.raises(InputError) as err:
        draft_free_acceptance(get_model("Llama-3.1-8B"), "mtp")
    assert err.value.field == "alpha"


def test_unknown_task_names_the_allowed_ones():
    with pytest.raises(InputError) as err:
        draft_free_acceptance(get_model("Llama-3.1-8B"), "ngram", task="poetry")
    assert "grounded" in str(err.value) and "open_ended" in str(err.value)
