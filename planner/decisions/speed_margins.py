"""How much slower than the planner estimates a quoted fleet's replicas may be and still meet the objectives.

A quote sizes each option on the planner's step times. Those are within a few percent of published runs on most
rows and further off on some (``make bench-serving``, recorded in ``data/speed_profiles.json``), and a fleet
sized where a latency percentile has just come under its objective is the one that is least forgiving of that
error: near a replica's capacity the queueing latencies climb steeply with the load. The speed margin of an option
is the largest slowdown ``s`` of every engine step (each step ``1 + s`` times as long as estimated: a replica that
serves ``1 / (1 + s)`` of the estimated tokens per second) at which its quoted replica count still meets every
objective and still covers the offered rate.

A replica whose steps all take ``c = 1 + s`` times as long is the same replica on a clock ``c`` times slower: its
run at ``r`` requests per second is the estimated replica's run at ``c · r`` with every latency times ``c`` (the
arrivals of a draw are the same unit gaps divided by the rate, and nothing in a run but its steps takes time). So
the check simulates the quoted replicas as planned, at ``c`` times the traffic, against objectives ``c`` times
tighter (:func:`slowed_traffic`): the same simulations, caches and objective checks as the quote's own sizing
(``tests/core/decisions/test_speed_margins.py`` checks the equivalence against slowed step times).

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.decisions.fleet import size_option
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=640)
>>> traffic = Traffic(requests_per_s=40, prompt_tokens=512, output_tokens=128, ttft_slo_s=0.2, tpot_slo_s=0.03)
>>> option = size_option(dep, traffic, 2.0, None)
>>> margin = speed_margin(dep, traffic, option)
>>> option.replicas, round(margin.margin_frac, 3), round(margin.fails_frac, 3), margin.binding
(1, 0.328, 0.332, 'p99 TPOT')
"""

from __future__ import annotations

from collections.abc import Callable
from math import ceil
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from planner.decisions.fleet import MAX_REPLICA_FACTOR, ReplicaSearch, capacity_bound
from planner.decisions.fleet_models import FleetOption, Traffic
from planner.decisions.side_by_side import each_in_order
from planner.decisions.traffic_draws import fewest_replicas_from
from planner.deployment import Deployment
from planner.errors import InputError
from planner.speed.profiles import ThroughputError, measured_throughput_error
from planner.speed.speed_source import step_times_of
from planner.units import fmt_counted

if TYPE_CHECKING:  # the recommendation imports the quotes, which import the search
    from planner.decisions.fleet_recommendation import FleetRecommendation, QuotedOption

#: The largest slowdown the check tries: a fleet that holds with every step half again as long as estimated has
#: more margin than the planner's error on any published run (its worst is recorded beside the margin).
SPEED_MARGIN_LIMIT = 0.5
#: The margin is found to within this much slowdown (half a percent: finer than the planner's error is known).
SPEED_MARGIN_RESOLUTION = 0.005


class SpeedMargin(BaseModel):
    """An option's speed margin: the quoted count holds with every step up to ``margin_frac`` longer."""

    quoted_replicas: int
    quoted_nodes: int
    #: The largest slowdown found to hold (within ``resolution_frac`` below the first that fails), or
    #: ``limit_frac`` where the count holds at the largest slowdown tried.
    margin_frac: float
    #: True where the count still holds at ``limit_frac``: the margin is at least that.
    at_least: bool
    #: The smallest slowdown found to fail (None where nothing failed up to ``limit_frac``).
    fails_frac: float | None
    limit_frac: float
    resolution_frac: float
    #: What fails first beyond the margin: an objective (``p99 TTFT``) or ``capacity`` (the replicas no longer
    #: cover the offered rate); "" where nothing failed up to the limit.
    binding: str
    #: The planner's measured throughput error on published runs, recorded with the data (None: not recorded).
    planner_error: ThroughputError | None
    #: Where the margin is below the planner's median error: the fewest replicas that still meet everything with
    #: every step that much longer, and their nodes (None otherwise, or where no count up to the search's limit
    #: holds there).
    replicas_at_median_error: int | None = None
    nodes_at_median_error: int | None = None

    def covers(self) -> Literal["worst", "median", "neither"] | None:
        """Which of the planner's recorded errors the margin covers: its worst overestimate (and so its median), its
        median error only, or neither (None: no error recorded).

        >>> error = ThroughputError(median_abs_pct=4.8, most_over_pct=27.6, rows=45, source="make bench-serving")
        >>> [SpeedMargin(quoted_replicas=1, quoted_nodes=1, margin_frac=m, at_least=False, fails_frac=m + 0.005,
        ...     limit_frac=0.5, resolution_frac=0.005, binding="capacity", planner_error=error).covers()
        ...  for m in (0.3, 0.1, 0.01)]
        ['worst', 'median', 'neither']
        """
        error = self.planner_error
        if error is None:
            return None
        pct = 100 * self.margin_frac
        return "worst" if pct >= error.most_over_pct else "median" if pct >= error.median_abs_pct else "neither"

    def describe(self) -> str:
        """The margin in words, beside the planner's own measured error.

        >>> error = ThroughputError(median_abs_pct=4.8, most_over_pct=27.6, rows=45, source="make bench-serving")
        >>> margin = SpeedMargin(quoted_replicas=4, quoted_nodes=1, margin_frac=0.085, at_least=False,
        ...     fails_frac=0.09, limit_frac=0.5, resolution_frac=0.005, binding="p99 TTFT", planner_error=error)
        >>> import textwrap
        >>> print(textwrap.fill(margin.describe(), 110))
        the quoted 4 replicas still meet the objectives with every step up to 8.5% longer than estimated (at 9.0%
        longer, p99 TTFT fails): more than the planner's median throughput error on published runs (4.8%), less than
        the most it has overestimated one (27.6%)
        >>> at_once = margin.model_copy(update={"margin_frac": 0.0, "fails_frac": 0.004, "binding": "capacity"})
        >>> at_once.describe().split(": ")[0]
        'the quoted 4 replicas meet the objectives at the estimated speed only (at 0.4% longer steps, capacity fails)'
        """
        replicas = f"the quoted {fmt_counted(self.quoted_replicas, 'replica')}"
        meet = "meets" if self.quoted_replicas == 1 else "meet"
        if self.at_least:
            said = (
                f"{replicas} still {meet} the objectives with every step {self.limit_frac:.0%} longer than estimated "
                "(the most this check tries)"
            )
        elif self.margin_frac == 0:
            said = (
                f"{replicas} {meet} the objectives at the estimated speed only "
                f"(at {self.fails_frac or 0:.1%} longer steps, {self.binding} fails)"
            )
        else:
            said = (
                f"{replicas} still {meet} the objectives with every step up to {self.margin_frac:.1%} longer than "
                f"estimated (at {self.fails_frac or 0:.1%} longer, {self.binding} fails)"
            )
        error, covers = self.planner_error, self.covers()
        if error is None:
            return said
        priced = " priced on the roofline" if error.step_times == "roofline" else ""
        median = f"the planner's median throughput error on published runs{priced} ({error.median_abs_pct:g}%)"
        most = f"the most it has overestimated one ({error.most_over_pct:g}%)"
        if covers == "worst":
            return f"{said}: more than {median} and than {most}"
        if covers == "median":
            return f"{said}: more than {median}, less than {most}"
        if self.replicas_at_median_error is None:
            return f"{said}: less than {median}"
        extra = (self.nodes_at_median_error or 0) - self.quoted_nodes
        nodes = fmt_counted(self.nodes_at_median_error, "node")
        more = f"{extra:,} more than quoted" if extra else "the quoted nodes"
        return (
            f"{said}: less than {median}; {self.replicas_at_median_error:,} replicas ({nodes}, {more}) "
            "still meet them at that error"
        )


def slowed_traffic(traffic: Traffic, slowdown: float) -> Traffic:
    """What the estimated replicas face when every step takes ``1 + slowdown`` times as long: the same traffic on a
    clock that many times faster (``1 + slowdown`` times the requests per second, objectives that many times
    tighter).

    >>> traffic = Traffic(requests_per_s=10, prompt_tokens=8, output_tokens=8, ttft_slo_s=2, tpot_slo_s=None)
    >>> t = slowed_traffic(traffic, 0.25)
    >>> t.requests_per_s, t.ttft_slo_s, t.tpot_slo_s
    (12.5, 1.6, None)
    """
    c = 1.0 + slowdown
    return traffic.model_copy(
        update={
            "requests_per_s": traffic.requests_per_s * c,
            "ttft_slo_s": None if traffic.ttft_slo_s is None else traffic.ttft_slo_s / c,
            "tpot_slo_s": None if traffic.tpot_slo_s is None else traffic.tpot_slo_s / c,
        }
    )


def _holds(dep: Deployment, traffic: Traffic, option: FleetOption, slowdown: float, dataset: str) -> bool:
    """Whether the quoted count meets everything the quote's sizing asks at ``slowdown``: the replicas' capacity
    covers the offered rate, and each objective holds on the quote's draw (a run stopped as soon as a miss is
    certain)."""
    slowed = slowed_traffic(traffic, slowdown)
    if _over_capacity(slowed, option):
        return False
    return not _search(dep, slowed, option, dataset).misses_at(option.replicas)


def _over_capacity(slowed: Traffic, option: FleetOption) -> bool:
    """Whether the quoted replicas no longer cover ``slowed``'s rate (the quote's own capacity bound)."""
    return option.replicas < capacity_bound(slowed.requests_per_s, option.capacity_requests_per_s)


def _search(dep: Deployment, slowed: Traffic, option: FleetOption, dataset: str) -> ReplicaSearch:
    return ReplicaSearch(dep, slowed, slowed.alpha if option.speculation else None, option.k, dataset)


def _binding(dep: Deployment, traffic: Traffic, option: FleetOption, slowdown: float, dataset: str) -> str:
    """What fails at ``slowdown``: ``capacity``, else the first objective the whole run misses."""
    slowed = slowed_traffic(traffic, slowdown)
    if _over_capacity(slowed, option):
        return "capacity"
    search = _search(dep, slowed, option, dataset)
    missed = search.objective_misses(search.at(option.replicas))
    return missed[0].objective if missed else "capacity"


def speed_margin(dep: Deployment, traffic: Traffic, option: FleetOption, *, dataset: str = "fixed") -> SpeedMargin:
    """The speed margin of ``option`` (sized by :func:`planner.decisions.fleet.size_option` for ``dep`` and
    ``traffic``, the α of a speculative option in ``traffic.alpha``, its request lengths from ``dataset`` where it
    drew them): bisection on the slowdown between 0 (the quote, which meets the objectives) and
    ``SPEED_MARGIN_LIMIT``, to ``SPEED_MARGIN_RESOLUTION``. Objectives that tighten as steps lengthen are assumed
    to fail from one slowdown on (as the replica search assumes they ease as replicas are added)."""
    if not option.meets_slo:
        raise InputError("option", option.replicas, "an option that meets the objectives (this one misses them)")
    held, failed = 0.0, None
    if not _holds(dep, traffic, option, SPEED_MARGIN_LIMIT, dataset):
        failed = SPEED_MARGIN_LIMIT
        while failed - held > SPEED_MARGIN_RESOLUTION:
            middle = (held + failed) / 2
            if _holds(dep, traffic, option, middle, dataset):
                held = middle
            else:
                failed = middle
    found = SpeedMargin(
        quoted_replicas=option.replicas,
        quoted_nodes=option.nodes,
        margin_frac=SPEED_MARGIN_LIMIT if failed is None else held,
        at_least=failed is None,
        fails_frac=failed,
        limit_frac=SPEED_MARGIN_LIMIT,
        resolution_frac=SPEED_MARGIN_RESOLUTION,
        binding="" if failed is None else _binding(dep, traffic, option, failed, dataset),
        planner_error=measured_throughput_error(step_times_of(dep)),
    )
    error = found.planner_error
    if error is None or found.covers() != "neither":
        return found
    at_error = _replicas_at(dep, traffic, option, error.median_abs_pct / 100, dataset)
    return found.model_copy(
        update={
            "replicas_at_median_error": at_error,
            "nodes_at_median_error": None if at_error is None else ceil(at_error / dep.replicas_per_node),
        }
    )


def _replicas_at(dep: Deployment, traffic: Traffic, option: FleetOption, slowdown: float, dataset: str) -> int | None:
    """The fewest replicas that meet everything at ``slowdown`` (searched from the quoted count, which fails there,
    or from the capacity bound of the slowed replicas where that is higher, never below it), as a quote sizes its
    options; None where no count up to ``MAX_REPLICA_FACTOR`` times the quoted one holds."""
    slowed = slowed_traffic(traffic, slowdown)
    low = capacity_bound(slowed.requests_per_s, option.capacity_requests_per_s)
    limit = option.replicas * MAX_REPLICA_FACTOR
    return fewest_replicas_from(_search(dep, slowed, option, dataset), max(option.replicas, low), low, limit)


def options_speed_margins(
    plan: FleetRecommendation,
    deployment_of: Callable[[QuotedOption], Deployment],
    *,
    before_option: Callable[[int, QuotedOption], None] = lambda done, quoted: None,
    workers: int | None = None,
) -> list[tuple[QuotedOption, SpeedMargin]]:
    """The speed margin of every option of ``plan`` that meets the objectives (the recommended one first);
    ``deployment_of`` gives each option's deployment (``planner.launch.quoted_deployment``); ``before_option(done,
    option)`` as :func:`planner.decisions.side_by_side.with_progress` calls it (a page's progress bar). The options of
    each GPU are checked in ``workers`` processes side by side (:mod:`planner.decisions.side_by_side`); the answer is
    the same."""
    traffic_of = {q.node: q.traffic for q in plan.quotes}  # a node type's quote holds the α its options assume
    meeting = plan.meeting
    deployments = [deployment_of(quoted) for quoted in meeting]  # here: the caller's function may read its session

    def margin(i: int) -> SpeedMargin:
        return speed_margin(deployments[i], traffic_of[meeting[i].node], meeting[i].option)

    margins = each_in_order(margin, range(len(meeting)), group=lambda i: meeting[i].gpu, workers=workers,
                            before_item=lambda done, i: before_option(done, meeting[i]))  # fmt: skip
    return list(zip(meeting, margins, strict=True))
