"""The ``parameter_ratio`` check: is the draft's size in the band where speculation usually pays?

Inside the band of data/compatibility_rules.json passes; outside it warns with measured
counter-evidence (data/pair_evidence.json); under ``fail_below`` or over ``fail_above`` fails unless
this very pair measured a speedup.

>>> from planner.catalog.lookup import get_model
>>> from planner.pairs.context import PairContext
>>> parameter_ratio_check(PairContext.build(get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B"))).status
'warn'
"""

from __future__ import annotations

import math
from typing import Literal

from planner.catalog.speculators import HEAD_WORDS
from planner.pairs.context import Check, PairContext
from planner.pairs.evidence import PairEvidence, evidence_ratios, published_evidence
from planner.pairs.rules import load_rules
from planner.pairs.size_ratio import active_parameter_ratio


def _log_distance(a: float, b: float) -> float:
    return abs(math.log(a) - math.log(b))


def counter_evidence(ratio: float, side: Literal["below", "above"]) -> PairEvidence | None:
    """The measured pair nearest in ratio on the same side of the band that measured a speedup > 1."""
    rules = load_rules().parameter_ratio
    best: tuple[float, float, PairEvidence] | None = None
    for row, r in evidence_ratios():
        if row.speedup is None or row.speedup <= 1:
            continue
        if (side == "below" and r >= rules.band_low) or (side == "above" and r <= rules.band_high):
            continue
        key = (_log_distance(r, ratio), -row.speedup)
        if best is None or key < best[:2]:
            best = (*key, row)
    return None if best is None else best[2]


def parameter_ratio_check(ctx: PairContext) -> Check:
    """Pass inside the band, warn outside it, fail far outside it unless this pair measured a speedup.

    The band is about separate draft models; a speculator head is one or a few layers by design, so its ratio
    is reported, not judged.
    """
    target, draft, ratio = ctx.target, ctx.draft, ctx.parameter_ratio
    if draft.is_head:
        return Check(
            name="parameter_ratio",
            status="pass",
            detail=(
                f"{ratio:.1f}x: {HEAD_WORDS[draft.speculator.kind]} holds {1 / ratio:.1%} of the target's "
                "parameters as the engine loads it; the draft-model size band does not apply to heads"
            ),
        )
    rules = load_rules().parameter_ratio
    active = active_parameter_ratio(target, draft)
    moe = f" (active parameters {active:.1f}x)" if abs(active - ratio) / ratio > 0.01 else ""
    band = f"the {rules.band_low:g}x-{rules.band_high:g}x band"
    if rules.band_low <= ratio <= rules.band_high:
        return Check(
            name="parameter_ratio", status="pass", detail=f"{ratio:.1f}x{moe}, inside {band}", evidence=rules.source
        )
    measured = published_evidence(target, draft)
    speedups = [e for e in measured if e.speedup is not None]
    side: Literal["below", "above"] = "below" if ratio < rules.band_low else "above"
    fails = ratio < rules.fail_below or ratio > rules.fail_above
    why = (
        "the draft is so large that its forwards eat the gain"
        if side == "below"
        else "so small a draft accepts less (Leviathan et al. 2023, Table 3)"
    )
    evidence = [*rules.source, *sorted({e.source for e in measured})]
    if measured:
        shown = "; ".join(e.describe() for e in measured[:3])
        found = f"measured for this pair: {shown}"
    else:
        nearest = counter_evidence(ratio, side)
        found = "no published measurement of this pair"
        if nearest is not None:
            r = next(row_ratio for row, row_ratio in evidence_ratios() if row is nearest)
            found += f"; the nearest measured pair {side} the band ({r:.0f}x) ran {nearest.describe()}"
            evidence.append(nearest.source)
    if fails:
        limit = f"under {rules.fail_below:g}x" if side == "below" else f"over {rules.fail_above:g}x"
        if rules.measured_pair_overrides_fail and any(e.speedup > 1 for e in speedups):
            return Check(
                name="parameter_ratio",
                status="warn",
                detail=(
                    f"{ratio:.1f}x{moe} is {limit}, which the planner's default band fails, "
                    f"but evidence says otherwise: {found}"
                ),
                evidence=evidence,
            )
        return Check(
            name="parameter_ratio",
            status="fail",
            detail=(
                f"{ratio:.1f}x{moe} is {limit}: {why}"
                + ("" if ratio > 1.0 + 1e-9 else "; a draft as large as the target cannot be faster than it")
                + f"; {found}. Choose a draft {rules.band_low:g}x-{rules.band_high:g}x smaller than the target"
            ),
            evidence=evidence,
        )
    return Check(
        name="parameter_ratio",
        status="warn",
        detail=f"{ratio:.1f}x{moe} is outside {band} ({why}); {found}",
        evidence=evidence,
    )
