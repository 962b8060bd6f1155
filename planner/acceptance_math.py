"""Acceptance-rate math of speculative decoding: tokens per step, the metrics engines report, K, break-even.

Symbols (docs/acceptance.md): ``alpha`` (α) is the per-token acceptance
probability of the Leviathan model, ``k`` (K) the draft length, ``tau`` (τ) the mean number of
tokens a verification step emits (bonus token included), ``rho`` (ρ) vLLM V1's "draft acceptance
rate". Formulas:

* τ(α, K) = (1 − α^(K+1)) / (1 − α) = Σ_{i=0..K} α^i (Leviathan et al. 2023, §3.1, https://arxiv.org/abs/2211.17192);
* ρ = (τ − 1) / K (vLLM V1 ``vllm/v1/spec_decode/metrics.py``,
  https://github.com/vllm-project/vllm/blob/main/vllm/v1/spec_decode/metrics.py);
* SGLang "accept len", NVIDIA "acceptance rate" and Spec-Bench "mean accepted tokens" are τ;
  vLLM V0 ``system_efficiency`` × (K+1) is τ (https://github.com/vllm-project/vllm/issues/9565);
* speedup = τ · T_AR / T_SD(K); with free verification T_SD/T_AR = K·c + 1 and the break-even is
  Leviathan's α = c (Leviathan et al. 2023, corollary of §3.4; docs/speed-model.md).

>>> round(expected_tokens_per_step(0.8, 5), 2), round(draft_acceptance_rate(0.8, 5), 2)
(3.69, 0.54)
>>> round(alpha_from_tau(expected_tokens_per_step(0.8, 5), 5), 9)
0.8
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from planner.errors import InputError

#: Bisection stops when the α bracket is this narrow (far below the 1e-6 round-trip promise).
_ALPHA_TOLERANCE = 1e-12
_MAX_ITERATIONS = 200


def check_k(k: int, field: str = "k") -> int:
    """K must be an integer >= 1."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(field, k, "an integer draft length >= 1")
    return k


def check_alpha(alpha: float, field: str = "alpha") -> float:
    """α must be a probability in [0, 1]."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0.0 <= alpha <= 1.0:
        raise InputError(field, alpha, "an acceptance probability in [0, 1]")
    return float(alpha)


def check_tau(tau: float, k: int, field: str = "mean_accepted_len") -> float:
    """τ must lie in [1, K+1]: one token at least, K drafted plus the bonus token at most."""
    check_k(k)
    if isinstance(tau, bool) or not isinstance(tau, int | float) or not 1.0 <= tau <= k + 1:
        raise InputError(field, tau, f"a mean accepted length in [1, K+1] = [1, {k + 1}] for K = {k}")
    return float(tau)


def expected_tokens_per_step(alpha: float, k: int) -> float:
    """τ(α, K): tokens one verification step emits on average, bonus token included.

    Summed as Σ α^i so that α = 1 (τ = K+1) needs no special case (Leviathan et al. 2023, §3.1).

    >>> expected_tokens_per_step(0.0, 4), expected_tokens_per_step(1.0, 4)
    (1.0, 5.0)
    """
    check_alpha(alpha)
    check_k(k)
    return _tau(float(alpha), k)


@lru_cache(maxsize=8192)
def _tau(alpha: float, k: int) -> float:
    """Σ_{i=0..K} α^i, remembered: optimal-K scans and break-even bisections ask for the same (α, K) again."""
    return sum(alpha**i for i in range(k + 1))


def tree_widths(depth: int, topk: int, verify_tokens: int) -> tuple[int, ...]:
    """Candidates verified at each depth of a draft tree of ``depth`` levels within a ``verify_tokens`` budget.

    The budget counts the root (the last verified token), as SGLang's ``--speculative-num-draft-tokens`` does
    (it is ``steps + 1`` for a chain). Every level gets one candidate; the rest go to the shallowest levels
    first, at most ``topk`` each, since a shallow candidate is accepted more often than a deep one (EAGLE-2,
    Li et al. 2024, §4: the tree keeps the nodes with the highest joint confidence, https://arxiv.org/abs/2406.16858).

    >>> tree_widths(5, 4, 8), tree_widths(3, 1, 4), tree_widths(2, 4, 20)
    ((3, 1, 1, 1, 1), (1, 1, 1), (4, 4))
    """
    check_k(depth, "tree_depth")
    check_k(topk, "tree_topk")
    if isinstance(verify_tokens, bool) or not isinstance(verify_tokens, int) or verify_tokens < depth + 1:
        raise InputError("tree_verify_tokens", verify_tokens, f"an integer >= depth + 1 = {depth + 1}")
    widths = [1] * depth
    spare = verify_tokens - 1 - depth
    for level in range(depth):
        extra = min(topk - 1, spare)
        widths[level] += extra
        spare -= extra
    return tuple(widths)


def tree_tokens_per_step(alpha: float, widths: tuple[int, ...]) -> float:
    """Tokens one tree verification emits: Σ_d Π_{i<d} (1 − (1 − α)^{w_i}), bonus token included.

    A level with ``w`` candidates is passed when any of them is accepted; the candidates are taken as
    independent draws at α each, so this is an upper bound on a real tree (sibling candidates are
    correlated). With one candidate per level it is the chain's τ(α, K) (Leviathan et al. 2023, §3.1).

    >>> tree_tokens_per_step(0.8, (1, 1, 1, 1, 1)) == expected_tokens_per_step(0.8, 5)
    True
    >>> round(tree_tokens_per_step(0.6, (3, 1, 1, 1, 1)), 3), round(expected_tokens_per_step(0.6, 5), 3)
    (3.158, 2.383)
    """
    check_alpha(alpha)
    total, reach = 1.0, 1.0
    for width in widths:
        check_k(width, "tree_width")
        reach *= 1.0 - (1.0 - alpha) ** width
        total += reach
    return total


def alpha_from_tau(tau: float, k: int) -> float:
    """α whose τ(α, K) equals a measured mean accepted length ``tau`` (bisection; docs/acceptance.md).

    >>> alpha_from_tau(1.0, 5), alpha_from_tau(6.0, 5)
    (0.0, 1.0)
    """
    check_tau(tau, k)
    if tau <= 1.0:
        return 0.0
    if tau >= k + 1:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(_MAX_ITERATIONS):
        mid = (low + high) / 2
        if expected_tokens_per_step(mid, k) < tau:
            low = mid
        else:
            high = mid
        if high - low < _ALPHA_TOLERANCE:
            break
    return (low + high) / 2


def draft_acceptance_rate(alpha: float, k: int) -> float:
    """vLLM V1's "Avg Draft acceptance rate" ρ = (τ − 1)/K: accepted prefix tokens per drafted token.

    It is not α (docs/acceptance.md): α = 0.8 at K = 5 reports ρ = 0.54.
    """
    return (expected_tokens_per_step(alpha, k) - 1.0) / k


def alpha_from_draft_acceptance_rate(rho: float, k: int) -> float:
    """α from vLLM V1's ρ: solve τ = 1 + ρ·K (docs/acceptance.md).

    >>> round(alpha_from_draft_acceptance_rate(draft_acceptance_rate(0.7, 4), 4), 9)
    0.7
    """
    check_k(k)
    if isinstance(rho, bool) or not isinstance(rho, int | float) or not 0.0 <= rho <= 1.0:
        raise InputError("draft_acceptance_rate", rho, "a vLLM V1 draft acceptance rate in [0, 1]")
    return alpha_from_tau(1.0 + rho * k, k)


def alpha_from_accept_length(accept_length: float, k: int) -> float:
    """α from SGLang's "accept len" or NVIDIA's "acceptance rate": both are τ (docs/acceptance.md)."""
    return alpha_from_tau(check_tau(accept_length, k, "accept_length"), k)


def tau_from_system_efficiency(system_efficiency: float, k: int) -> float:
    """τ from vLLM V0's ``system_efficiency`` (emitted / max emittable): τ = efficiency × (K+1).

    V0's own "draft acceptance rate" counts accepted tokens at any position, not the prefix, so
    only the efficiency converts (https://github.com/vllm-project/vllm/issues/9565).

    >>> tau_from_system_efficiency(0.4, 4)
    2.0
    """
    check_k(k)
    if not 1.0 / (k + 1) <= system_efficiency <= 1.0:
        raise InputError("system_efficiency", system_efficiency, f"a fraction in [1/(K+1), 1] for K = {k}")
    return system_efficiency * (k + 1)


def speedup_from_step_cost(alpha: float, k: int, step_cost_ratio: float) -> float:
    """τ(α, K) / (T_SD(K) / T_AR): tokens per step over the step's cost in plain decoding steps.

    With Leviathan's free verification the cost ratio is ``K·c + 1`` (Leviathan et al. 2023, §3.4):

    >>> round(speedup_from_step_cost(0.8, 5, 5 * 0.05 + 1), 2)
    2.95
    """
    if step_cost_ratio <= 0:
        raise InputError("step_cost_ratio", step_cost_ratio, "a positive time ratio")
    return expected_tokens_per_step(alpha, k) / step_cost_ratio


def optimal_k(alpha: float, step_cost_ratios: Mapping[int, float]) -> tuple[int, float]:
    """The draft length with the highest speedup and that speedup, from T_SD(K)/T_AR per K.

    There is no closed form (Leviathan et al. 2023, Figure 3): scan the K given. Ties keep the
    shorter K (it costs less KV and compute).

    >>> optimal_k(0.8, {k: 1 + 0.05 * k for k in range(1, 17)})
    (8, 3.09...)
    """
    if not step_cost_ratios:
        raise InputError("k", None, "at least one draft length to compare")
    by_k = {k: speedup_from_step_cost(alpha, k, ratio) for k, ratio in step_cost_ratios.items()}
    best_k = optimal_of(by_k)
    return best_k, by_k[best_k]


def optimal_of(speedup_by_k: Mapping[int, float]) -> int:
    """The draft length with the highest speedup; a tie keeps the shorter one (it costs less KV and compute).

    >>> optimal_of({3: 1.5, 2: 1.5, 4: 1.4})
    2
    """
    return min(speedup_by_k, key=lambda k: (-speedup_by_k[k], k))


def break_even_alpha(step_cost_ratios: Mapping[int, float]) -> float | None:
    """The smallest α at which the best K of ``step_cost_ratios`` reaches speedup 1 (bisection).

    With free verification it is Leviathan's α = c:

    >>> round(break_even_alpha({k: 1 + 0.1 * k for k in range(1, 9)}), 6)
    0.1
    >>> break_even_alpha({1: 2.5}) is None
    True
    """
    return break_even(lambda alpha: optimal_k(alpha, step_cost_ratios)[1])


def break_even(
    best_speedup: Callable[[float], float], tolerance: float = _ALPHA_TOLERANCE, upper: float = 1.0
) -> float | None:
    """The smallest α at which ``best_speedup(α)`` (the best speedup over the draft lengths compared, rising with
    α) reaches 1, by bisection to ``tolerance``; ``None`` when even α = ``upper`` does not pay.

    The speed model prices the speedup at one batch size (planner/speed/estimate.py), so the break-even rises with
    batch as verification stops being free (docs/speed-model.md):

    >>> round(break_even(lambda alpha: 0.5 + alpha), 6)
    0.5
    >>> break_even(lambda alpha: 0.9) is None
    True
    """
    if best_speedup(upper) < 1.0:
        return None
    if best_speedup(0.0) >= 1.0:
        return 0.0
    low, high = 0.0, upper
    for _ in range(_MAX_ITERATIONS):
        mid = (low + high) / 2
        if best_speedup(mid) < 1.0:
            low = mid
        else:
            high = mid
        if high - low < tolerance:
            break
    return high


def resolve_alpha(
    k: int,
    *,
    alpha: float | None = None,
    mean_accepted_len: float | None = None,
    draft_acceptance_rate: float | None = None,
) -> float:
    """α from exactly one of α, τ (SGLang / NVIDIA / vLLM "mean acceptance length") or vLLM V1 ρ.

    >>> round(resolve_alpha(5, draft_acceptance_rate=0.538), 3)
    0.8
    """
    given = {
        name: value
        for name, value in (
            ("alpha", alpha),
            ("mean_accepted_len", mean_accepted_len),
            ("draft_acceptance_rate", draft_acceptance_rate),
        )
        if value is not None
    }
    if len(given) != 1:
        raise InputError(
            "acceptance",
            ", ".join(given) or None,
            "exactly one of alpha, mean_accepted_len (τ) or draft_acceptance_rate (ρ)",
        )
    check_k(k)
    if alpha is not None:
        return check_alpha(alpha)
    if mean_accepted_len is not None:
        return alpha_from_tau(mean_accepted_len, k)
    assert draft_acceptance_rate is not None  # one of the three is given
    return alpha_from_draft_acceptance_rate(draft_acceptance_rate, k)
