"""How much a quoted replica count owes to the one draw of traffic it was sized on.

A quote sizes each option on one simulated draw of its traffic (``QUOTE_REQUESTS`` Poisson arrivals, the first
seed). Where an objective is a high percentile of a latency that queues (TTFT waiting for a KV-cache slot, or a
prompt arriving while another one prefills), that percentile falls steeply with the replicas near the objective and
moves from one draw of the same traffic to the next, and the fewest replicas that meet it moves with it: a tail
percentile rests on the few longest busy periods of a run, so longer runs settle it only slowly (the figures are in
``docs/fleet-and-quotes.md``).

:func:`count_across_draws` sizes a quoted option again on further draws (the seeds after the quote's own), each
search starting from the quoted count (down from it where the draw meets the objectives there, else up) and never
going below the quote's capacity bound, and gives the count each draw needs and the fewest replicas that meet the
objectives in every draw: the count to buy for a fleet that holds whichever way the requests happen to arrive.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.decisions.fleet import size_option
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=640)
>>> traffic = Traffic(requests_per_s=20, prompt_tokens=512, output_tokens=128, ttft_slo_s=0.2, tpot_slo_s=0.03)
>>> option = size_option(dep, traffic, 2.0, None)
>>> check = count_across_draws(dep, traffic, option, draws=3)
>>> check.draws[0].replicas == option.replicas, len(check.draws), check.replicas_every_draw >= option.replicas
(True, 3, True)
"""

from __future__ import annotations

from collections.abc import Callable
from math import ceil
from typing import TYPE_CHECKING

from pydantic import BaseModel

from planner.decisions.fleet import (
    MAX_REPLICA_FACTOR,
    QUOTE_REQUESTS,
    ReplicaSearch,
    capacity_bound,
    first_count_that_meets,
)
from planner.decisions.fleet_models import HOURS_PER_MONTH, FleetOption, Traffic
from planner.decisions.side_by_side import each_in_order
from planner.defaults import MAX_TRAFFIC_DRAWS, TRAFFIC_DRAWS
from planner.deployment import Deployment
from planner.errors import InputError
from planner.units import fmt_counted

if TYPE_CHECKING:  # the recommendation imports the quotes, which import the search, which imports this module
    from planner.decisions.fleet_recommendation import FleetRecommendation, QuotedOption


class DrawCount(BaseModel):
    """The fewest replicas that meet the objectives in one draw of the traffic (1: the draw the quote was sized on)."""

    draw: int
    #: None: no count up to the check's limit meets the objectives in this draw.
    replicas: int | None
    nodes: int | None


class CountAcrossDraws(BaseModel):
    """A quoted option sized again on other draws of the same traffic."""

    quoted_replicas: int
    quoted_nodes: int
    requests_per_draw: int
    draws: list[DrawCount]
    #: The most replicas one check searches (the quoted count times ``MAX_REPLICA_FACTOR``).
    limit_replicas: int
    #: The fewest replicas that meet the objectives in every draw (None: a draw meets them at no count searched).
    replicas_every_draw: int | None
    nodes_every_draw: int | None
    usd_per_month_every_draw: float | None

    @property
    def extra_nodes(self) -> int | None:
        """Nodes the every-draw fleet needs beyond the quoted one (None where no count holds in every draw)."""
        return None if self.nodes_every_draw is None else self.nodes_every_draw - self.quoted_nodes

    def describe(self) -> str:
        """The check in words.

        >>> check = CountAcrossDraws(quoted_replicas=44, quoted_nodes=11, requests_per_draw=400, limit_replicas=2816,
        ...     draws=[DrawCount(draw=1, replicas=44, nodes=11), DrawCount(draw=2, replicas=48, nodes=12),
        ...            DrawCount(draw=3, replicas=40, nodes=10)],
        ...     replicas_every_draw=48, nodes_every_draw=12, usd_per_month_every_draw=None)
        >>> check.describe().split(": ")[1]
        '48 replicas (on 12 nodes, 1 node more than quoted) meet the objectives in every draw'
        """
        counts = [d.replicas for d in self.draws]
        listed = [f"{c:,}" if c is not None else f"more than {self.limit_replicas:,}" for c in counts]
        said = ", ".join(listed[:-1]) + f" and {listed[-1]}" if len(listed) > 1 else listed[0]
        head = (
            f"Sized on {len(self.draws)} draws of the same traffic ({self.requests_per_draw:,} simulated requests "
            f"each), this option needs {said} replicas"
        )
        if self.replicas_every_draw is None:
            return head + ": no fleet searched meets the objectives in every draw"
        if len(set(counts)) == 1:
            return head + ": the count does not depend on the draw"
        if self.replicas_every_draw == self.quoted_replicas:
            return head + ": the quoted count meets the objectives in every draw"
        nodes, extra = self.nodes_every_draw, self.extra_nodes or 0
        where = (
            f"still on the quoted {fmt_counted(nodes, 'node')}"
            if extra == 0
            else f"on {fmt_counted(nodes, 'node')}, {fmt_counted(extra, 'node')} more than quoted"
            + (f", ${self.usd_per_month_every_draw:,.0f} per month" if self.usd_per_month_every_draw else "")
        )
        return f"{head}: {fmt_counted(self.replicas_every_draw, 'replica')} ({where}) meet the objectives in every draw"


def fewest_replicas_from(search: ReplicaSearch, start: int, low: int, limit: int) -> int | None:
    """The fewest replicas from ``low`` up that meet the objectives in ``search``'s draw, searched from ``start``
    outwards: down in steps that double where ``start`` meets them, else up (``start + 1, + 2, + 4, …`` up to
    ``limit``), then narrowed between the last count that missed and the first that met. ``low`` is the quote's
    capacity bound (the offered rate over one replica's capacity): no count below it serves the traffic, whatever
    the latency percentiles say."""
    if search.misses(search.at(start)):
        miss, step = start, 1
        while start + step <= limit:
            if not search.misses(search.at(start + step)):
                return first_count_that_meets(search, miss, start + step)
            miss, step = start + step, step * 2
        return None
    miss, hit = search.gallop_down(low - 1, start)
    if miss == low - 1:  # every count tried down to ``hit`` met the objectives: the capacity bound is the last to try
        if hit == low or not search.misses(search.at(low)):
            return low
        miss = low
    return first_count_that_meets(search, miss, hit)


def count_across_draws(
    dep: Deployment, traffic: Traffic, option: FleetOption, draws: int = TRAFFIC_DRAWS, *, dataset: str = "fixed"
) -> CountAcrossDraws:
    """``option`` (sized by :func:`planner.decisions.fleet.size_option` for ``dep`` and ``traffic``, the α of a
    speculative option in ``traffic.alpha``, its request lengths from ``dataset`` where it drew them) sized again on
    ``draws`` draws of the traffic, the quote's own first."""
    if isinstance(draws, bool) or not isinstance(draws, int) or not 2 <= draws <= MAX_TRAFFIC_DRAWS:
        raise InputError(
            "draws", draws, f"a whole number of draws from 2 (the quote's and one more) to {MAX_TRAFFIC_DRAWS}"
        )
    if not option.meets_slo:
        raise InputError("option", option.replicas, "an option that meets the objectives (this one misses them)")
    per_node = dep.replicas_per_node
    limit = option.replicas * MAX_REPLICA_FACTOR
    low = min(option.replicas, capacity_bound(traffic.requests_per_s, option.capacity_requests_per_s))
    alpha = traffic.alpha if option.speculation else None
    counts: list[int | None] = [option.replicas]
    for seed in range(1, draws):
        search = ReplicaSearch(dep, traffic, alpha, option.k, dataset=dataset, seed=seed)
        counts.append(fewest_replicas_from(search, option.replicas, low, limit))
    every = None if None in counts else max(counts)
    nodes = None if every is None else ceil(every / per_node)
    per_gpu_hour = option.usd_per_hour / option.gpus if option.usd_per_hour else None
    return CountAcrossDraws(
        quoted_replicas=option.replicas,
        quoted_nodes=option.nodes,
        requests_per_draw=QUOTE_REQUESTS,
        draws=[
            DrawCount(draw=i + 1, replicas=c, nodes=None if c is None else ceil(c / per_node))
            for i, c in enumerate(counts)
        ],
        limit_replicas=limit,
        replicas_every_draw=every,
        nodes_every_draw=nodes,
        usd_per_month_every_draw=(
            nodes * dep.gpu_count * per_gpu_hour * HOURS_PER_MONTH if nodes is not None and per_gpu_hour else None
        ),
    )


def options_across_draws(
    plan: FleetRecommendation,
    deployment_of: Callable[[QuotedOption], Deployment],
    draws: int = TRAFFIC_DRAWS,
    *,
    before_option: Callable[[int, QuotedOption], None] = lambda done, quoted: None,
    workers: int | None = None,
) -> list[tuple[QuotedOption, CountAcrossDraws]]:
    """Every option of ``plan`` that meets the objectives (the recommended one first) sized again on ``draws`` draws
    of its traffic; ``deployment_of`` gives each option's deployment (``planner.launch.quoted_deployment``);
    ``before_option(done, option)`` as :func:`planner.decisions.side_by_side.with_progress` calls it (a page's
    progress bar). The options of each GPU are checked in ``workers`` processes side by side
    (:mod:`planner.decisions.side_by_side`); the answer is the same."""
    traffic_of = {q.node: q.traffic for q in plan.quotes}  # a node type's quote holds the α its options assume
    meeting = plan.meeting
    deployments = [deployment_of(quoted) for quoted in meeting]  # here: the caller's function may read its session

    def check(i: int) -> CountAcrossDraws:
        return count_across_draws(deployments[i], traffic_of[meeting[i].node], meeting[i].option, draws)

    counts = each_in_order(check, range(len(meeting)), group=lambda i: meeting[i].gpu, workers=workers,
                           before_item=lambda done, i: before_option(done, meeting[i]))  # fmt: skip
    return list(zip(meeting, counts, strict=True))
