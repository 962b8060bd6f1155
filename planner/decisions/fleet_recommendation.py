"""A fleet comparison read as a decision: the cheapest option that meets every objective, the options that miss,
what speculation saves on the same node type, what a change of node type saves (a separate line), and flags for
fleets beyond any real purchase.

>>> from planner.catalog.lookup import get_model, get_node
>>> plan = plan_fleet(get_model("Llama-3.1-8B"), [get_node("1x-l40s-48gb")],
...                   Traffic(requests_per_s=1, prompt_tokens=512, output_tokens=64), method="ngram")
>>> plan.recommended is not None, plan.flags
(True, [])
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel

from planner.decisions.fleet import AT_ANY_FLEET_SIZE
from planner.decisions.fleet_models import FleetOption, FleetQuote, Traffic
from planner.decisions.fleet_quotes import compare_nodes, quote_is_kept
from planner.decisions.side_by_side import side_by_side
from planner.defaults import LARGEST_REPORTED_CLUSTER_GPUS
from planner.errors import PlannerError
from planner.units import fmt_counted


class QuotedOption(BaseModel):
    """One option of a comparison: a node type, its layout, and the fleet with or without speculation."""

    node: str
    tp: int
    pp: int = 1
    gpu: str
    usd_per_gpu_hour: float | None
    option: FleetOption

    @property
    def label(self) -> str:
        how = f"with speculation (K {self.option.k})" if self.option.speculation else "without speculation"
        return f"{self.node}, {self.option.layout}, {how}"

    def cost_key(self) -> tuple:
        """Cheapest first: priced options by $/month, then unpriced ones by GPUs."""
        o = self.option
        return (o.usd_per_month is None, o.usd_per_month or 0.0, o.gpus)

    def miss_key(self) -> tuple:
        """Nearest miss first: the smallest worst shortfall, then the cost."""
        return (max((m.shortfall_frac for m in self.option.misses), default=0.0), *self.cost_key())


class SpeculationSaving(BaseModel):
    """What the recommended (speculative) option saves against the same node type without speculation, at its
    cheapest layout without it.

    Both meet every objective; the saving is positive (never a negative saving)."""

    against: str
    gpus_saved: int
    gpus_frac: float | None
    usd_per_month: float | None

    def describe(self) -> str:
        parts = []
        if self.gpus_frac is not None:
            parts.append(f"{self.gpus_frac:.0%} of GPUs ({fmt_counted(self.gpus_saved, 'GPU')})")
        if self.usd_per_month is not None:
            parts.append(f"${self.usd_per_month:,.0f} per month")
        return f"speculation saves {' and '.join(parts)} against {self.against}"


class FleetRecommendation(BaseModel):
    """A comparison read as a decision: the cheapest option that meets every objective, and the others."""

    traffic: Traffic
    quotes: list[FleetQuote]
    unusable: list[str]
    #: Options that meet every objective, cheapest first.
    meeting: list[QuotedOption]
    #: Options that miss at least one objective, nearest miss first, each with its misses.
    missing: list[QuotedOption]
    saving: SpeculationSaving | None = None
    #: Why speculation is not recommended when an option with the draft also meets the objectives.
    speculation_note: str | None = None
    #: The recommended node type against the cheapest other node type, both without speculation (a change of
    #: hardware, never credited to speculation).
    hardware_note: str | None = None
    #: Inputs or results beyond any real purchase (a fleet larger than the largest reported GPU cluster).
    flags: list[str] = []

    @property
    def alpha_basis(self) -> str | None:
        """The α the speculative options assume and its source (None when nothing speculates)."""
        return next((q.alpha_basis for q in self.quotes if q.with_speculation is not None), None)

    @property
    def alpha(self) -> float | None:
        return next((q.traffic.alpha for q in self.quotes if q.with_speculation is not None), self.traffic.alpha)

    @property
    def recommended(self) -> QuotedOption | None:
        return self.meeting[0] if self.meeting else None

    @property
    def nearest_miss(self) -> QuotedOption | None:
        return self.missing[0] if self.missing else None

    @property
    def headline(self) -> str:
        """The verdict in one sentence."""
        best = self.recommended
        if best is not None:
            o = best.option
            cost = f"${o.usd_per_month:,.0f} per month" if o.usd_per_month is not None else "no catalog price"
            return (
                f"Cheapest option that meets every objective: {o.nodes} x {best.node} ({o.layout}, "
                f"{'with' if o.speculation else 'without'} speculation), {fmt_counted(o.gpus, 'GPU')}, {cost}"
            )
        near = self.nearest_miss
        if near is None:
            return "No node type can serve this model: see the reasons below"
        headline = (
            f"No option meets every objective ({self.traffic.objectives()}). Nearest miss: {near.label}, which misses "
            + "; ".join(m.describe() for m in near.option.misses)
        )
        _, anywhere, why = near.option.limited_by.partition(AT_ANY_FLEET_SIZE)
        return f"{headline}; no fleet of it meets them: {why}" if anywhere else headline


def _saving(plain: QuotedOption, cheaper: QuotedOption) -> SpeculationSaving | None:
    """What ``cheaper`` saves against ``plain`` (None when it saves neither GPUs nor money)."""
    gpus = plain.option.gpus - cheaper.option.gpus
    usd = (
        plain.option.usd_per_month - cheaper.option.usd_per_month
        if plain.option.usd_per_month is not None and cheaper.option.usd_per_month is not None
        else None
    )
    saving = SpeculationSaving(
        against=f"{plain.label} ({fmt_counted(plain.option.gpus, 'GPU')})",
        gpus_saved=max(gpus, 0),
        gpus_frac=gpus / plain.option.gpus if gpus > 0 else None,
        usd_per_month=usd if usd is not None and usd > 0 else None,
    )
    return None if saving.gpus_frac is None and saving.usd_per_month is None else saving


def _hardware_note(other: QuotedOption, same: QuotedOption) -> str:
    """The recommended node type against the cheapest other one, both without speculation: a change of hardware.

    >>> from planner.decisions.fleet import FleetOption
    >>> def opt(node, gpus, usd):
    ...     o = FleetOption(speculation=False, tp=1, batch_size=1, k=None, tpot_s=0.01, ttft_s=0.1,
    ...         requests_per_s_per_replica=1, capacity_requests_per_s=1, replicas=1, nodes=1, gpus=gpus,
    ...         usd_per_hour=None, usd_per_month=usd, usd_per_million_output_tokens=None, limited_by="",
    ...         replica_limited_by="", meets_slo=True, delivered_flops_frac=0.1, delivered_bandwidth_frac=0.1)
    ...     return QuotedOption(node=node, tp=1, gpu="g", usd_per_gpu_hour=None, option=o)
    >>> _hardware_note(opt("8x-h100", 32, 95_000.0), opt("8x-b200", 16, 96_000.0))
    'without speculation, 8x-b200 needs 16 GPUs ($96,000 per month) against 32 GPUs ($95,000 per month) on 8x-h100'
    """

    def cost(o: FleetOption) -> str:
        return fmt_counted(o.gpus, "GPU") + (
            f" (${o.usd_per_month:,.0f} per month)" if o.usd_per_month is not None else ""
        )

    return f"without speculation, {same.node} needs {cost(same.option)} against {cost(other.option)} on {other.node}"


def _absurd(options: list[QuotedOption]) -> list[str]:
    """A fleet larger than any publicly reported GPU cluster is flagged: the request rate is likely a typo."""
    largest = max((o for o in options), key=lambda o: o.option.gpus, default=None)
    if largest is None or largest.option.gpus <= LARGEST_REPORTED_CLUSTER_GPUS:
        return []
    return [
        f"{largest.label} needs {largest.option.gpus:,} GPUs, more than the largest GPU cluster publicly reported "
        f"({LARGEST_REPORTED_CLUSTER_GPUS:,} GPUs): check the request rate; a fleet this size is not a purchase "
        "any provider can fill"
    ]


def recommend_fleet(traffic: Traffic, quotes: list[FleetQuote], unusable: list[str]) -> FleetRecommendation:
    """Split every option into those that meet the objectives (cheapest first) and those that miss.

    A saving is computed only between options that meet every objective: the recommended option, when it
    speculates, against the cheapest option without speculation, and only where that one costs more.
    """
    options = [
        QuotedOption(node=q.node, tp=o.tp, pp=o.pp, gpu=q.gpu, usd_per_gpu_hour=q.usd_per_gpu_hour, option=o)
        for q in quotes
        for o in (q.without_speculation, q.with_speculation)
        if o is not None
    ]
    meeting = sorted((o for o in options if o.option.meets_slo), key=QuotedOption.cost_key)
    missing = sorted((o for o in options if not o.option.meets_slo), key=QuotedOption.miss_key)
    saving, note, hardware = None, None, None
    if meeting:
        best = meeting[0]
        # speculation is credited only against the same node type without it, at that node type's cheapest layout
        # without it (each quote holds it); a change of node type is a separate line (a B200 fleet with a draft
        # against an H100 fleet without one is mostly hardware)
        plain = next((o for o in meeting if not o.option.speculation and o.node == best.node), None)
        spec = next((o for o in meeting if o.option.speculation), None)
        if best.option.speculation and plain is not None and plain.cost_key() > best.cost_key():
            saving = _saving(plain, best)
        elif best.option.speculation and plain is None:
            note = f"On {best.node} only the option with speculation meets every objective"
        elif not best.option.speculation and spec is not None:
            usd = (
                spec.option.usd_per_month - best.option.usd_per_month
                if spec.option.usd_per_month is not None and best.option.usd_per_month is not None
                else None
            )
            if spec.option.gpus == best.option.gpus and not usd:
                extra = (
                    f"the same {fmt_counted(best.option.gpus, 'GPU')} (p{traffic.percentile:g} TPOT "
                    f"{spec.option.tpot_s * 1e3:.1f} ms against {best.option.tpot_s * 1e3:.1f} ms): it buys latency, "
                    "not capacity"
                )
            elif usd is not None:
                extra = f"${usd:,.0f} per month more"
            else:
                extra = f"{fmt_counted(spec.option.gpus, 'GPU')} against {best.option.gpus:,}"
            note = (
                f"Speculation does not pay at this load: the cheapest option with speculation ({spec.label}) "
                f"needs {extra}"
            )
        elif not best.option.speculation and any(o.option.speculation for o in missing):
            note = "With the draft, no option meets every objective"
        other = next((o for o in meeting if not o.option.speculation and o.node != best.node), None)
        same = plain if best.option.speculation else (best if not best.option.speculation else None)
        if other is not None and same is not None:
            hardware = _hardware_note(other, same)
    flags = _absurd(meeting + missing)
    return FleetRecommendation(
        traffic=traffic,
        quotes=quotes,
        unusable=unusable,
        meeting=meeting,
        missing=missing,
        saving=saving,
        speculation_note=note,
        hardware_note=hardware,
        flags=flags,
    )


def plan_fleet(target, nodes, traffic: Traffic, *, draft=None, **fields) -> FleetRecommendation:
    """:func:`compare_nodes` read as a decision (:func:`recommend_fleet`); ``workers`` among ``fields``: how many
    processes quote the node types side by side (:mod:`planner.decisions.side_by_side`)."""
    quotes, unusable = compare_nodes(target, nodes, traffic, draft=draft, **fields)
    return recommend_fleet(traffic, quotes, unusable)


def plans_by_node(
    target, nodes, traffic: Traffic, *, draft=None, workers: int | None = None, **fields
) -> Iterator[tuple[int, FleetRecommendation | PlannerError]]:
    """Each node type's own plan (:func:`plan_fleet` of it alone, or the error that stopped it) with its place in
    ``nodes``, as each is done: the node types quoted already first, in order, then the others side by side in
    ``workers`` processes (:mod:`planner.decisions.side_by_side`; 1: one after another, in order). A
    :func:`plan_fleet` of them all that follows reuses their quotes.

    >>> from planner.catalog.lookup import get_model, get_node
    >>> nodes = [get_node("1x-l40s-48gb"), get_node("1x-h100-sxm-80gb")]
    >>> traffic = Traffic(requests_per_s=1, prompt_tokens=512, output_tokens=64)
    >>> sorted((i, plan.quotes[0].node) for i, plan in plans_by_node(get_model("Llama-3.1-8B"), nodes, traffic))
    [(0, '1x-l40s-48gb'), (1, '1x-h100-sxm-80gb')]
    """

    def plan_one(node) -> FleetRecommendation:
        return plan_fleet(target, [node], traffic, draft=draft, workers=1, **fields)

    def kept(node) -> bool:
        return quote_is_kept(target, node, traffic, draft=draft, **fields)

    yield from side_by_side(plan_one, nodes, group=lambda node: node.gpu, workers=workers, kept=kept)
