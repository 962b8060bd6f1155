"""Acceptance-rate math: τ(α, K), the engines' metrics and their conversions, optimal K, break-even."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner import acceptance_math as spec
from planner.errors import InputError


def test_tau_and_rho_of_the_worked_example():
    # Leviathan et al. 2023 §3.1 (https://arxiv.org/abs/2211.17192): τ(0.8, 5) = (1 − 0.8^6)/0.2 = 3.69;
    # vLLM V1 ρ = (τ − 1)/K = 0.54 (vllm/v1/spec_decode/metrics.py; docs/acceptance.md).
    assert round(spec.expected_tokens_per_step(0.8, 5), 2) == 3.69
    assert round(spec.draft_acceptance_rate(0.8, 5), 2) == 0.54


def test_tau_matches_the_closed_form():
    # Leviathan et al. 2023 §3.1: (1 − α^(K+1)) / (1 − α).
    for alpha, k in ((0.3, 1), (0.6, 4), (0.9, 15)):
        assert spec.expected_tokens_per_step(alpha, k) == pytest.approx((1 - alpha ** (k + 1)) / (1 - alpha))


def test_edges_of_alpha():
    assert spec.expected_tokens_per_step(0.0, 7) == 1.0
    assert spec.expected_tokens_per_step(1.0, 7) == 8.0
    assert spec.alpha_from_tau(1.0, 7) == 0.0
    assert spec.alpha_from_tau(8.0, 7) == 1.0


@given(st.floats(min_value=0.0, max_value=1.0), st.integers(min_value=1, max_value=32))
def test_alpha_round_trips_through_tau(alpha, k):
    tau = spec.expected_tokens_per_step(alpha, k)
    assert abs(spec.alpha_from_tau(tau, k) - alpha) < 1e-6


@given(st.floats(min_value=0.0, max_value=1.0), st.integers(min_value=1, max_value=32))
def test_alpha_round_trips_through_rho(alpha, k):
    rho = spec.draft_acceptance_rate(alpha, k)
    assert abs(spec.alpha_from_draft_acceptance_rate(rho, k) - alpha) < 1e-6


@given(st.floats(min_value=0.0, max_value=0.999), st.integers(min_value=1, max_value=16))
def test_tau_grows_with_alpha_and_k(alpha, k):
    tau = spec.expected_tokens_per_step(alpha, k)
    assert 1.0 <= tau <= k + 1
    assert spec.expected_tokens_per_step(min(1.0, alpha + 0.001), k) >= tau
    assert spec.expected_tokens_per_step(alpha, k + 1) >= tau


def test_engine_conventions_convert_to_alpha():
    # SGLang "accept len" and NVIDIA "acceptance rate" are τ; vLLM V0 system efficiency × (K+1) is τ
    # (docs/acceptance.md); the V0 example of https://github.com/vllm-project/vllm/issues/9565:
    # efficiency 0.4 at K = 4 is τ = 2.
    tau = spec.expected_tokens_per_step(0.7, 4)
    assert spec.alpha_from_accept_length(tau, 4) == pytest.approx(0.7, abs=1e-6)
    assert spec.tau_from_system_efficiency(0.4, 4) == pytest.approx(2.0)
    assert spec.resolve_alpha(4, mean_accepted_len=tau) == pytest.approx(0.7, abs=1e-6)


def test_leviathan_break_even_is_alpha_equals_c():
    # With free verification the cost of K drafts is K·c + 1 and the break-even is α = c (Leviathan et al. 2023,
    # corollary of §3.4, https://arxiv.org/abs/2211.17192).
    for c in (0.02, 0.1, 0.3):
        ratios = {k: 1 + k * c for k in range(1, 17)}
        assert spec.break_even_alpha(ratios) == pytest.approx(c, abs=1e-6)


def test_break_even_none_when_nothing_pays():
    assert spec.break_even_alpha({1: 2.5, 2: 3.5}) is None


def test_optimal_k_is_the_argmax():
    ratios = {k: 1 + 0.05 * k for k in range(1, 17)}
    best_k, best = spec.optimal_k(0.8, ratios)
    assert best == max(spec.speedup_from_step_cost(0.8, k, r) for k, r in ratios.items())
    assert spec.speedup_from_step_cost(0.8, best_k, ratios[best_k]) == best


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: spec.expected_tokens_per_step(1.2, 5), "alpha"),
        (lambda: spec.expected_tokens_per_step(-0.1, 5), "alpha"),
        (lambda: spec.expected_tokens_per_step(0.5, 0), "k"),
        (lambda: spec.alpha_from_tau(0.5, 5), "mean_accepted_len"),
        (lambda: spec.alpha_from_tau(6.5, 5), "mean_accepted_len"),
        (lambda: spec.alpha_from_draft_acceptance_rate(1.5, 5), "draft_acceptance_rate"),
        (lambda: spec.resolve_alpha(5), "acceptance"),
        (lambda: spec.resolve_alpha(5, alpha=0.5, mean_accepted_len=2.0), "acceptance"),
    ],
)
def test_invalid_inputs_name_their_field(call, field):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field
