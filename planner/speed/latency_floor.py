"""The latency no request can beat on a replica, however few requests it is offered: what rules a latency objective
out for a configuration before any fleet of it is sized.

A request's first token comes at the end of the step that prefills its prompt's last chunk, so its TTFT is at least
one step holding its first chunk alone (``min(prompt, token budget)`` tokens). Each of its later tokens comes from a
decode step that holds at least itself with its prompt cached, and such a step advances it by the tokens a step
accepts on average (1 without speculation; the serving simulator advances every request so). Both are priced by
:meth:`planner.speed.engine_step.EngineStep.step_totals`, as the simulator prices every step it runs, so the floor is
the simulator's own lower bound: ``tests/core/decisions/test_search.py`` checks every request of plain and
speculative replicas against it.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> engine = EngineStep(Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb")))
>>> ttft_s, tpot_s = latency_floor_s(engine, None, None, prompt_tokens=512, token_budget=8192)
>>> 0.002 < tpot_s < 0.01, ttft_s > tpot_s
(True, True)
>>> beyond_floor((0.030, 0.0062), ttft_slo_s=2.0, tpot_slo_s=1e-5)
'one request alone takes 6.2 ms per output token (against p99 TPOT ≤ 0.01 ms)'
>>> beyond_floor((0.030, 0.0062), ttft_slo_s=2.0, tpot_slo_s=0.0061) is None  # within the floor's slack
True
"""

from __future__ import annotations

from planner.defaults import OBJECTIVE_PERCENTILE
from planner.speed.drafting import DraftShape
from planner.speed.engine_step import Chunks, EngineStep
from planner.units import fmt_ms, fmt_ms_entered

#: An objective rules a configuration out only when it lies below the floor by more than this share of the floor: a
#: step priced from measured kernel tables can dip slightly between measured shapes as the context grows (by 0.15%
#: at most over the search test's configurations), never by 5%.
FLOOR_SLACK = 0.95


def latency_floor_s(
    engine: EngineStep, shape: DraftShape | None, alpha: float | None, prompt_tokens: int, token_budget: int | None
) -> tuple[float, float]:
    """(TTFT s, TPOT s) no request of ``prompt_tokens`` or more can beat on ``engine``'s replica, drafting as
    ``shape`` (None: without speculation) at acceptance ``alpha``, under a step budget of ``token_budget`` tokens."""
    advance = 1.0 if shape is None else shape.tokens_per_step(alpha or 0.0)
    chunk = Chunks()
    chunk.add(min(prompt_tokens, token_budget) if token_budget else prompt_tokens, 0)
    ttft_s = engine.step_totals(shape, 0, 0.0, chunk)[0]
    tpot_s = engine.step_totals(shape, 1, float(prompt_tokens))[0] / advance
    return ttft_s, tpot_s


def beyond_floor(
    floor_s: tuple[float, float],
    ttft_slo_s: float | None,
    tpot_slo_s: float | None,
    percentile: float = OBJECTIVE_PERCENTILE,
) -> str | None:
    """Why no fleet can meet the objectives, in words, where one lies below its floor by more than ``FLOOR_SLACK``;
    else None."""
    ttft_s, tpot_s = floor_s
    if tpot_slo_s is not None and FLOOR_SLACK * tpot_s > tpot_slo_s:
        return (
            f"one request alone takes {fmt_ms(tpot_s)} per output token (against p{percentile:g} TPOT ≤ "
            f"{fmt_ms_entered(tpot_slo_s)})"
        )
    if ttft_slo_s is not None and FLOOR_SLACK * ttft_s > ttft_slo_s:
        return (
            f"one request alone waits {fmt_ms(ttft_s)} for its first token (against p{percentile:g} TTFT ≤ "
            f"{fmt_ms_entered(ttft_slo_s)})"
        )
    return None
