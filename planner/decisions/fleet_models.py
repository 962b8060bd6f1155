"""The fleet's data: the traffic to serve with its latency objectives, an option's figures and what it misses, and a
node type's quote (its cheapest option without speculation and with it). :mod:`planner.decisions.fleet` sizes them.

>>> Traffic(requests_per_s=5).objectives()
'p99 TTFT ≤ 2,000 ms and p99 TPOT ≤ 200 ms'
"""

from __future__ import annotations

from pydantic import BaseModel, Field, ValidationError, computed_field

from planner.defaults import (
    DEFAULT_SLO_PRESET,
    OBJECTIVE_PERCENTILE,
    SERVING_OUTPUT_TOKENS,
    SERVING_PROMPT_TOKENS,
    SLO_PRESETS,
)
from planner.errors import first_pydantic_error
from planner.units import fmt_ms_entered, latency_objectives_text

HOURS_PER_MONTH = 730  # 8,760 hours / 12 months


class Traffic(BaseModel):
    """The load to serve and its latency objectives."""

    requests_per_s: float = Field(gt=0)
    #: Tokens per request (by default a fleet's request, as every page and command defaults to).
    prompt_tokens: int = Field(default=SERVING_PROMPT_TOKENS, ge=1)
    output_tokens: int = Field(default=SERVING_OUTPUT_TOKENS, ge=1)
    #: Time-to-first-token objective at ``percentile`` (None: none).
    ttft_slo_s: float | None = Field(default=SLO_PRESETS[DEFAULT_SLO_PRESET][0], gt=0)
    #: Time-per-output-token objective at ``percentile`` (None: none).
    tpot_slo_s: float | None = Field(default=SLO_PRESETS[DEFAULT_SLO_PRESET][1], gt=0)
    percentile: float = Field(default=OBJECTIVE_PERCENTILE, gt=0, le=100)
    #: Acceptance assumed for the draft (Leviathan α); None: the speculator's own (measured, published or the
    #: prior of its kind, :func:`planner.speed.deployment_acceptance`), as every page and command uses.
    alpha: float | None = Field(default=None, ge=0, le=1)
    #: Override of the catalog price ($/GPU-hour).
    usd_per_gpu_hour: float | None = Field(default=None, gt=0)

    @classmethod
    def build(cls, **fields) -> Traffic:
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    def objectives(self) -> str:
        return latency_objectives_text(self.ttft_slo_s, self.tpot_slo_s, self.percentile)


class ObjectiveMiss(BaseModel):
    """One latency objective an option misses: the percentile it reaches against the limit.

    >>> miss = ObjectiveMiss(objective="p99 TPOT", value_s=0.052, limit_s=0.040)
    >>> round(miss.shortfall_frac, 2), miss.describe()
    (0.3, 'p99 TPOT 52.0 ms against an objective of 40 ms (30% over)')
    >>> ObjectiveMiss(objective="p99 TTFT", value_s=0.0285, limit_s=1e-6).describe()
    'p99 TTFT 28.5 ms against an objective of 0.001 ms (28,500 times the objective)'
    """

    objective: str
    value_s: float
    limit_s: float

    @computed_field
    @property
    def shortfall_frac(self) -> float:
        """How far over the objective, as a fraction of it (0.3: 30% over)."""
        return self.value_s / self.limit_s - 1

    def describe(self) -> str:
        return (
            f"{self.objective} {self.value_s * 1e3:,.1f} ms against an objective of {fmt_ms_entered(self.limit_s)} "
            f"({self._how_far()})"
        )

    def _how_far(self) -> str:
        """30% over; from ten times the objective on, as a multiple (a percentage of six digits reads as noise)."""
        ratio = self.value_s / self.limit_s
        return f"{ratio:,.0f} times the objective" if ratio >= 10 else f"{self.shortfall_frac:.0%} over"


class FleetOption(BaseModel):
    speculation: bool
    #: The tensor-parallel degree of the option's replicas (a node type's options may differ in layout).
    tp: int
    #: Pipeline stages per replica (2 only where no tensor-parallel layout of the node holds the weights).
    pp: int = 1
    #: Mean running requests per replica in the simulation at the quoted load.
    batch_size: float
    k: int | None
    #: TTFT and TPOT at the traffic's percentile, per replica at the quoted load.
    tpot_s: float
    ttft_s: float
    requests_per_s_per_replica: float
    #: The replica's saturated steady-state throughput (requests/s), where the replica search starts.
    capacity_requests_per_s: float
    replicas: int
    nodes: int
    gpus: int
    usd_per_hour: float | None
    usd_per_month: float | None
    usd_per_million_output_tokens: float | None
    #: The objective that needs the last replica (or the capacity bound), and the scheduler's limit.
    limited_by: str
    replica_limited_by: str
    meets_slo: bool
    delivered_flops_frac: float
    delivered_bandwidth_frac: float
    #: The objectives missed at the largest fleet searched (empty when ``meets_slo``).
    misses: list[ObjectiveMiss] = Field(default_factory=list)

    @property
    def layout(self) -> str:
        """``TP 4``, or ``TP 4 PP 2`` for replicas in pipeline stages."""
        return f"TP {self.tp}" + (f" PP {self.pp}" if self.pp > 1 else "")

    @computed_field
    @property
    def replicas_nodes_hold(self) -> int:
        """The replicas its nodes hold: those beyond :attr:`replicas` are headroom at no extra cost (3 replicas of
        TP 4 need two 8-GPU nodes, which hold 4)."""
        per_node = (self.gpus // self.nodes) // (self.tp * self.pp) if self.nodes else 0
        return self.nodes * per_node


class FleetQuote(BaseModel):
    """A node type's cheapest option without speculation and its cheapest option with it, each at its own layout."""

    node: str
    #: The tensor-parallel degree of the chosen option, and its pipeline stages.
    tp: int
    pp: int = 1
    gpu: str
    gpus_per_node: int
    replicas_per_node: int
    usd_per_gpu_hour: float | None
    price_source: str
    traffic: Traffic
    kv_concurrency_limit: float
    without_speculation: FleetOption
    with_speculation: FleetOption | None
    #: Speculation meets the objectives and needs fewer GPUs (or the option without it misses) at this load on
    #: this node type: the option ``recommend_fleet`` recommends among this quote's two.
    speculation_chosen: bool = False
    #: GPUs speculation saves on this node type against its cheapest layout without it, only when both options meet
    #: the objectives and it saves some.
    savings_frac: float | None
    notes: list[str]
    #: Where the replica's step times come from (measured kernel tables or the roofline), in words.
    speed_source: str = ""
    #: The engine release whose memory rules and defaults size the replicas, in words (:func:`engine_release`).
    engine_release: str = ""
    #: The α the speculative option assumes and where it comes from ("no speculation" without a speculator).
    alpha_basis: str = "no speculation"

    @property
    def chosen(self) -> FleetOption:
        if self.speculation_chosen and self.with_speculation is not None:
            return self.with_speculation
        return self.without_speculation
