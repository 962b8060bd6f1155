"""The latency no run of a replica can beat, however few requests it is offered: what rules a latency objective out
for a configuration before any fleet of it is sized.

A request's first token comes at the end of the step that prefills its prompt's last chunk, so its TTFT is at least
its prompt prefilled alone: in whole-budget chunks where the engine chunks prefills (each step at least the time of
its chunk alone), else in one step. Each of its later tokens comes from a decode step that holds at least itself
with its prompt cached, and such a step advances it by the tokens a step accepts on average (1 without speculation;
the serving simulator advances every request so). Both are priced by
:meth:`planner.speed.engine_step.EngineStep.step_totals`, as the simulator prices every step it runs
(:func:`alone_latency_s`).

Every request of a run is at least as slow as it is alone, so a run's percentile of TTFT (or TPOT) is at least the
same percentile of its requests' times alone (sorted lists that are larger element by element have larger
percentiles, interpolated or not). A run's requests keep their lengths whatever the rate (a quote's sizing draws the
same requests at every fleet size), so :func:`latency_floor_s` is a floor of every run the sizing would try: the
percentile the objectives hold at, over the prompts of the requests the run counts (for TPOT, those with more than
one output token). Drawn lengths make it far tighter than the shortest prompt's: ShareGPT-like prompts run from 4 to
1,024 tokens. ``tests/core/decisions/test_search.py`` and ``tests/core/speed/test_latency_floor.py`` check runs of
plain and speculative replicas against it at every percentile, on every engine's scheduler and with prompts of many
chunks.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> engine = EngineStep(Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb")))
>>> ttft_s, tpot_s = alone_latency_s(engine, None, None, prompt_tokens=512, token_budget=8192)
>>> 0.002 < tpot_s < 0.01, ttft_s > tpot_s
(True, True)
>>> floor = latency_floor_s(engine, None, None, [16] * 90 + [1024] * 10, [64] * 100, 8192, 99.0)
>>> floor.ttft_s > alone_latency_s(engine, None, None, 16, 8192)[0], floor.alike
(True, False)
>>> beyond_floor(LatencyFloor(0.030, 0.0062), ttft_slo_s=2.0, tpot_slo_s=1e-5)
'one request alone takes 6.2 ms per output token (against p99 TPOT ≤ 0.01 ms)'
>>> beyond_floor(LatencyFloor(0.030, 0.0062, alike=False), ttft_slo_s=0.01, tpot_slo_s=None)
'its requests, each served alone, wait 30.0 ms for their first token at p99 (against p99 TTFT ≤ 10 ms)'
>>> beyond_floor(LatencyFloor(0.030, 0.0062), ttft_slo_s=2.0, tpot_slo_s=0.0061) is None  # within the slack
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import floor

from planner.defaults import OBJECTIVE_PERCENTILE
from planner.speed.drafting import DraftShape
from planner.speed.engine_step import Chunks, EngineStep
from planner.units import fmt_ms, fmt_ms_entered

#: An objective rules a configuration out only when it lies below the floor by more than this share of the floor: a
#: step priced from measured kernel tables can dip slightly between measured shapes as the context grows (by 0.15%
#: at most over the search test's configurations), never by 5%.
FLOOR_SLACK = 0.95
#: Chunks of a long prompt priced one by one for its TTFT floor; later ones are counted at the last one priced.
PRICED_CHUNKS = 16


@dataclass(frozen=True)
class LatencyFloor:
    """The TTFT and TPOT (s) at the objectives' percentile that no run of a replica can beat; ``alike`` when every
    request of the run has the same prompt (the floor is then one request's alone)."""

    ttft_s: float
    tpot_s: float
    alike: bool = True

    def over(self, ttft_slo_s: float | None, tpot_slo_s: float | None) -> float:
        """How far the floor lies above the objectives: the largest floor / objective of those set (0 for none).

        >>> LatencyFloor(0.030, 0.0062).over(ttft_slo_s=0.010, tpot_slo_s=None)
        3.0
        """
        ratios = [floor_s / slo_s for floor_s, slo_s in ((self.ttft_s, ttft_slo_s), (self.tpot_s, tpot_slo_s)) if slo_s]
        return max(ratios, default=0.0)


def alone_latency_s(
    engine: EngineStep, shape: DraftShape | None, alpha: float | None, prompt_tokens: int, token_budget: int | None
) -> tuple[float, float]:
    """(TTFT s, TPOT s) no request of ``prompt_tokens`` or more can beat on ``engine``'s replica, drafting as
    ``shape`` (None: without speculation) at acceptance ``alpha``, under a step budget of ``token_budget`` tokens.

    TTFT: the prompt prefilled alone, in chunks of the whole budget where the engine chunks prefills, else in one
    step. A step that holds more work takes longer, and a step's cost grows more slowly than its chunk (its weights
    are read once), so a prompt split into smaller chunks, as the budget shared with other requests splits it, takes
    longer; the positions its chunks attend to sum to the same whatever the split. Chunks after the first
    ``PRICED_CHUNKS`` are counted at the last one priced (their context is longer, so they take at least as long)."""
    advance = 1.0 if shape is None else shape.tokens_per_step(alpha or 0.0)
    step = token_budget if token_budget and engine.profile.chunked_prefill else prompt_tokens
    ttft_s, cached, priced_s = 0.0, 0, 0.0
    for index in range(-(-prompt_tokens // step)):
        take = min(step, prompt_tokens - cached)
        if index < PRICED_CHUNKS or take < step:  # the last, partial chunk is priced too: it is smaller
            chunk = Chunks()
            chunk.add(take, cached)
            priced_s = engine.step_totals(shape, 0, 0.0, chunk)[0]
        ttft_s += priced_s
        cached += take
    tpot_s = engine.step_totals(shape, 1, float(prompt_tokens))[0] / advance
    return ttft_s, tpot_s


def _percentile_of_alone(prompts: list[int], pct: float, alone) -> float:
    """``pct``'s linear-interpolated percentile (as :func:`planner.speed.serving_metrics.percentile`) of
    ``alone(prompt)`` over ``prompts``, priced at the two order statistics it interpolates: a request's time alone
    grows with its prompt (to within the floor's slack)."""
    if not prompts:
        return 0.0
    ordered = sorted(prompts)
    rank = (len(ordered) - 1) * pct / 100
    low = floor(rank)
    high = min(low + 1, len(ordered) - 1)
    at_low = alone(ordered[low])
    return at_low + (alone(ordered[high]) - at_low) * (rank - low)


def latency_floor_s(
    engine: EngineStep,
    shape: DraftShape | None,
    alpha: float | None,
    prompts: Sequence[int],
    outputs: Sequence[int],
    token_budget: int | None,
    percentile: float = OBJECTIVE_PERCENTILE,
) -> LatencyFloor:
    """The ``percentile`` of TTFT and TPOT that no run of these requests (``prompts`` and ``outputs``, tokens) can
    beat on ``engine``'s replica: the percentile of each request's :func:`alone_latency_s`, TTFT over every
    request and TPOT over those with more than one output token (the ones a run's TPOT counts)."""
    prompts = list(prompts)
    decoded = [p for p, out in zip(prompts, outputs, strict=True) if out > 1]
    memo: dict[int, tuple[float, float]] = {}

    def alone(prompt: int) -> tuple[float, float]:
        if prompt not in memo:
            memo[prompt] = alone_latency_s(engine, shape, alpha, prompt, token_budget)
        return memo[prompt]

    ttft_s = _percentile_of_alone(prompts, percentile, lambda p: alone(p)[0])
    tpot_s = _percentile_of_alone(decoded, percentile, lambda p: alone(p)[1])
    return LatencyFloor(ttft_s, tpot_s, alike=len(set(prompts)) <= 1)


def _floor_words(floor_s: LatencyFloor, kind: str, pct: str) -> tuple[float, str]:
    """The ``kind`` (``TTFT`` or ``TPOT``) floor in seconds, and what it says in words: one request alone, or its
    requests each served alone at ``pct``."""
    kind_floor_s, one, each = {
        "TPOT": (floor_s.tpot_s, "takes {} per output token", "take {} per output token"),
        "TTFT": (floor_s.ttft_s, "waits {} for its first token", "wait {} for their first token"),
    }[kind]
    took = fmt_ms(kind_floor_s)
    if floor_s.alike:
        return kind_floor_s, f"one request alone {one.format(took)}"
    return kind_floor_s, f"its requests, each served alone, {each.format(took)} at {pct}"


def floor_share(floor_s: LatencyFloor, kind: str, slo_s: float, percentile: float = OBJECTIVE_PERCENTILE) -> str:
    """How close a request served alone already comes to the ``kind`` objective (``TTFT`` or ``TPOT``), in words:
    why a fleet that meets it may have to run its replicas nearly empty.

    >>> floor_share(LatencyFloor(1.6, 0.05), "TTFT", 2.0)
    'one request alone waits 1,600.0 ms for its first token, 80% of p99 TTFT ≤ 2,000 ms'
    >>> floor_share(LatencyFloor(1.6, 0.05, alike=False), "TPOT", 0.2)
    'its requests, each served alone, take 50.0 ms per output token at p99, 25% of p99 TPOT ≤ 200 ms'
    """
    pct = f"p{percentile:g}"
    kind_floor_s, said = _floor_words(floor_s, kind, pct)
    return f"{said}, {kind_floor_s / slo_s:.0%} of {pct} {kind} ≤ {fmt_ms_entered(slo_s)}"


def beyond_floor(
    floor_s: LatencyFloor,
    ttft_slo_s: float | None,
    tpot_slo_s: float | None,
    percentile: float = OBJECTIVE_PERCENTILE,
) -> str | None:
    """Why no fleet can meet the objectives, in words, where one lies below its floor by more than ``FLOOR_SLACK``;
    else None (TPOT checked first)."""
    pct = f"p{percentile:g}"
    for kind, slo_s in (("TPOT", tpot_slo_s), ("TTFT", ttft_slo_s)):
        if slo_s is None:
            continue
        kind_floor_s, said = _floor_words(floor_s, kind, pct)
        if FLOOR_SLACK * kind_floor_s > slo_s:
            return f"{said} (against {pct} {kind} ≤ {fmt_ms_entered(slo_s)})"
    return None
