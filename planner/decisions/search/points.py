"""One point of the design space: its configuration, its memory plan and the figures the search gives it.

Figures are per replica loaded to its batch cap (a closed loop of ``max_num_seqs`` requests in flight,
or fewer when the user's concurrency is lower), the way throughput-per-GPU against throughput-per-user
charts are drawn (NVIDIA aiconfigurator, InferenceMAX): output tokens per second per GPU and per user,
and TTFT / TPOT at the user's percentile. The fleet follows from the workload: enough replicas to carry
the request rate at that throughput (or the concurrency at that batch), whole nodes, and the cost per
million output tokens at the catalog's price (data/prices.json).

>>> fleet = fleet_figures(requests_per_s=20.0, concurrency=None, mean_output_tokens=256, replica_requests_per_s=3.0,
...                       replica_output_tok_s=768.0, replicas_for_concurrency=None, replicas_per_node=2,
...                       gpu_count=8, usd_per_gpu_hour=3.0)
>>> fleet.replicas, fleet.nodes, fleet.gpus, round(fleet.usd_per_million_output_tokens, 2)
(7, 4, 32, 5.21)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from math import ceil

#: Stages a point reaches: ``memory`` (it does not fit or would not start), ``screened`` (static step model),
#: ``simulated`` (serving simulator).
STAGES: tuple[str, ...] = ("memory", "screened", "simulated")


@dataclass(frozen=True, slots=True)
class FleetFigures:
    replicas: int
    nodes: int
    gpus: int
    usd_per_hour: float | None
    usd_per_million_output_tokens: float | None


def fleet_figures(
    *,
    requests_per_s: float | None,
    concurrency: int | None,
    mean_output_tokens: float,
    replica_requests_per_s: float,
    replica_output_tok_s: float,
    replicas_for_concurrency: int | None,
    replicas_per_node: int,
    gpu_count: int,
    usd_per_gpu_hour: float | None,
) -> FleetFigures:
    """Replicas, whole nodes, GPUs and cost of serving the workload with replicas of this throughput.

    At a rate ``R``: ``replicas = ceil(R / replica requests/s)`` and the fleet serves ``R · output`` tokens/s;
    at a concurrency the replicas were chosen before (``replicas_for_concurrency``) and serve what they run.
    ``nodes = ceil(replicas / replicas per node)``; the cost counts every GPU of every node (as the quote does).
    """
    if requests_per_s is not None:
        replicas = max(1, ceil(requests_per_s / replica_requests_per_s - 1e-9))
        served_tok_s = requests_per_s * mean_output_tokens
    else:
        replicas = int(replicas_for_concurrency or 1)
        served_tok_s = replicas * replica_output_tok_s
    nodes = ceil(replicas / replicas_per_node)
    gpus = nodes * gpu_count
    per_hour = gpus * usd_per_gpu_hour if usd_per_gpu_hour else None
    per_million = per_hour / (served_tok_s * 3600) * 1e6 if per_hour and served_tok_s > 0 else None
    return FleetFigures(replicas, nodes, gpus, per_hour, per_million)


@dataclass(slots=True)
class SearchPoint:
    """One configuration and what the search found for it (``stage`` says how far it got)."""

    index: int
    node: str
    gpu: str
    gpus_per_node: int
    tp: int
    pp: int
    dtype: str
    kv_dtype: str
    engine: str
    #: none, draft_model, eagle, eagle3, mtp or ngram; ``speculator`` names the draft, head or method.
    method: str
    draft: str | None
    speculator: str
    k: int | None
    #: The batch cap; None only where the engine's default could not be resolved (the point cannot be built).
    max_num_seqs: int | None
    alpha: float | None
    alpha_source: str | None
    gpus_per_replica: int
    stage: str = "memory"
    fits: bool = False
    starts: bool = False
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    #: Why the point has no figures (does not fit, would not start), or the objectives it misses.
    reason: str | None = None
    #: Requests in flight per replica and the mean running batch.
    concurrency_per_replica: int | None = None
    batch_size: float | None = None
    output_tok_s_per_gpu: float | None = None
    output_tok_s_per_user: float | None = None
    replica_requests_per_s: float | None = None
    replica_output_tok_s: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    replicas: int | None = None
    nodes: int | None = None
    gpus: int | None = None
    usd_per_hour: float | None = None
    usd_per_million_output_tokens: float | None = None
    meets_objectives: bool | None = None
    misses: list[str] = field(default_factory=list)
    #: The frontiers this point is on: ``throughput`` (tok/s per GPU vs per user) and ``cost`` ($/M vs TPOT).
    frontiers: list[str] = field(default_factory=list)

    @property
    def has_figures(self) -> bool:
        return self.stage in ("screened", "simulated")

    @property
    def label(self) -> str:
        """The configuration in one line, e.g. ``8x-h100-sxm-80gb TP 4 fp8/auto, Llama-3.2-1B K 3, 64 seqs``."""
        how = "no speculation" if self.method == "none" else f"{self.speculator} K {self.k}"
        layout = f"TP {self.tp}" + (f" PP {self.pp}" if self.pp > 1 else "")
        seqs = f"{self.max_num_seqs} seqs" if self.max_num_seqs is not None else "the engine's default seqs"
        return f"{self.node} {layout} {self.dtype}/{self.kv_dtype}, {how}, {seqs}, {self.engine}"

    def as_dict(self) -> dict:
        out = {name: getattr(self, name) for name in _FIELDS}  # every field is a scalar but two flat lists
        out["misses"], out["frontiers"] = list(self.misses), list(self.frontiers)
        out["label"] = self.label
        return out

    def set_fleet(self, fleet: FleetFigures) -> None:
        self.replicas, self.nodes, self.gpus = fleet.replicas, fleet.nodes, fleet.gpus
        self.usd_per_hour, self.usd_per_million_output_tokens = fleet.usd_per_hour, fleet.usd_per_million_output_tokens


_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SearchPoint))
