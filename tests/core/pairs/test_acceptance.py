"""α per pair: measured beats published beats the documented prior; the evidence and prior files hold."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.acceptance_math import alpha_from_tau
from planner.catalog.lookup import get_model
from planner.errors import CatalogError, InputError
from planner.pairs.acceptance import (
    acceptance_prior,
    head_prior_alphas,
    load_acceptance_priors,
    load_pair_evidence,
    prior_alpha,
    published_evidence,
    refit_priors,
)
from planner.pairs.lineage import RELATIONS


def test_measured_alpha_wins():
    est = acceptance_prior(get_model("Qwen2.5-72B"), get_model("Qwen2.5-7B"), measured_alpha=0.61)
    assert (est.source, est.alpha) == ("measured", 0.61)
    with pytest.raises(InputError) as err:
        acceptance_prior(get_model("Qwen2.5-72B"), get_model("Qwen2.5-7B"), measured_alpha=1.5)
    assert err.value.field == "measured_alpha"


def test_published_alpha_is_the_median_of_the_pairs_measurements():
    # https://github.com/vllm-project/vllm/pull/53987 (data/calibration/specdec-measured.csv):
    # tau 9.80, 8.98, 8.60 at K = (tau-1)/rho = 15.
    est = acceptance_prior(get_model("Qwen2.5-72B"), get_model("Qwen2.5-7B"))
    assert est.source == "published"
    assert est.alpha == pytest.approx(statistics.median(alpha_from_tau(t, 15) for t in (9.80, 8.98, 8.60)), abs=1e-9)
    assert est.alpha == pytest.approx(0.916, abs=1e-3)
    assert "vllm-project/vllm/pull/53987" in " ".join(est.evidence)


def test_prior_for_a_distilled_pair_follows_the_documented_formula():
    est = acceptance_prior(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"))
    assert (est.source, est.relation, est.basis) == ("prior", "distilled", "fit")
    expected = 0.898 - 0.078 * math.log10(est.parameter_ratio / 10)  # data/acceptance_priors.json
    assert est.alpha == pytest.approx(expected, abs=1e-9)
    assert "assumed" in est.detail and est.derivation


def test_unmeasured_relations_are_labelled_assumptions():
    est = acceptance_prior(get_model("Qwen3-32B"), get_model("Qwen2.5-1.5B"))
    assert (est.relation, est.basis) == ("other_generation", "assumption")
    cross = acceptance_prior(get_model("Llama-2-70b-hf"), get_model("Phi-3-mini-4k-instruct"))
    assert cross.relation == "different_family" and cross.alpha == load_acceptance_priors().alpha_min


def test_the_stored_prior_is_what_its_derivation_gives():
    priors, fit = load_acceptance_priors(), refit_priors()
    assert priors.slope_per_decade == pytest.approx(fit.slope_per_decade, abs=0.001)
    assert priors.alpha_min == pytest.approx(fit.alpha_min, abs=0.001)
    assert priors.alpha_max == pytest.approx(fit.alpha_max, abs=0.001)
    for rel in priors.relations:
        if rel.basis == "fit":
            assert rel.alpha_at_ratio_10 == pytest.approx(fit.alpha_at_ratio_10[rel.id], abs=0.001), rel.id
    assert {r.id for r in priors.relations} == set(RELATIONS)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(RELATIONS), st.floats(1.0, 5000.0), st.floats(1.0, 5000.0))
def test_prior_never_rises_with_the_ratio_and_stays_in_the_observed_range(relation, r1, r2):
    low, high = sorted((r1, r2))
    priors = load_acceptance_priors()
    assert prior_alpha(relation, high) <= prior_alpha(relation, low) + 1e-12
    assert priors.alpha_min <= prior_alpha(relation, low) <= priors.alpha_max


def test_published_evidence_finds_the_best_70b_pair():
    # NVIDIA TensorRT-LLM blog (Llama 3.3 70B): 51.14 -> 181.74 tok/s, 3.55x at batch 1 on one H200.
    rows = published_evidence(get_model("Llama-3.3-70B-Instruct"), get_model("Llama-3.2-1B"))
    assert rows[0].speedup == 3.55 and rows[0].batch_size == 1 and rows[0].gpu == "h200-sxm-141gb"
    assert published_evidence(get_model("Llama-3.2-1B"), get_model("Llama-3.3-70B-Instruct")) == []


def test_every_evidence_row_is_a_sourced_catalog_pair(repo):
    raw = json.loads((repo / "data/pair_evidence.json").read_text())
    rows = load_pair_evidence()
    assert len(rows) == len(raw["evidence"]) > 20
    for row in rows:
        assert row.source and get_model(row.target).id == row.target and get_model(row.draft).id == row.draft
        assert row.speedup is not None or row.speedup_text
        if row.alpha is not None:
            assert 0 < row.alpha < 1
        for figure in row.acceptance:
            if figure.convention == "tau":
                assert row.k or row.k_implied, row


def test_a_broken_evidence_file_is_a_catalog_error_naming_the_entry(tmp_data_dir):
    path = tmp_data_dir / "pair_evidence.json"
    raw = json.loads(path.read_text())
    raw["evidence"][0]["target"] = "no-such-model"
    path.write_text(json.dumps(raw))
    with pytest.raises(CatalogError, match=r"pair_evidence\.json entry 0"):
        load_pair_evidence()


def test_a_typed_alpha_is_the_users_value_never_measured():
    typed = acceptance_prior(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"), entered_alpha=0.61)
    assert (typed.source, typed.alpha) == ("entered", 0.61) and "your value" in typed.detail
    measured = acceptance_prior(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"), measured_alpha=0.61)
    assert measured.source == "measured" and "your value" not in measured.detail


def test_a_head_without_its_own_measurement_takes_the_median_of_its_kind():
    head = get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    unmeasured = head.model_copy(
        update={"id": "test/unmeasured-eagle3", "speculator": head.speculator.model_copy(update={"copy_of": None})}
    )
    est = acceptance_prior(get_model("Llama-3.1-8B"), unmeasured)
    assert (est.source, est.basis) == ("prior", "fit") and "eagle3 heads" in est.detail
    assert est.alpha == pytest.approx(statistics.median(head_prior_alphas("eagle3")))
    eagle1 = acceptance_prior(get_model("Meta-Llama-3-8B"), get_model("lmzheng/sglang-EAGLE-LLaMA3-Instruct-8B"))
    assert head_prior_alphas("eagle") == [] and eagle1.basis == "assumption"  # no published EAGLE-1 row yet
