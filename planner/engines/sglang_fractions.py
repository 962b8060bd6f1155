"""SGLang's default ``mem_fraction_static`` before 0.5.3: the TP table of the 0.4 releases and its large-GPU terms
(0.4.6, 0.4.7), and the reserve by GPU-memory tier of 0.4.8 to 0.5.2 (``data/engines.json``).

Each rule is the release's ``ServerArgs.__post_init__`` (``python/sglang/srt/server_args.py`` at its tag); GPU memory
is nvidia-smi's total in MiB (``get_device_memory_capacity``). From 0.5.3 the reserved-memory rule of
:class:`planner.engines.default_limits.ReservedMemoryRule` applies.

>>> table = FractionByTp(steps=(TpFraction(min_tp=1, fraction=0.88), TpFraction(min_tp=8, fraction=0.81)),
...                      source="")
>>> table.fraction(tp=4, pp=1, gpu_mib=81559, speculative=False)
0.88
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from planner.deployment import Deployment
from planner.errors import InputError
from planner.units import GIB, MIB


def sglang_gpu_mib(dep: Deployment, total_bytes: int) -> float:
    """The GPU memory SGLang's defaults read: nvidia-smi's total in MiB (``get_device_memory_capacity``)."""
    if dep.gpu_memory_bytes is None and dep.gpu.nvidia_smi_total_mib:
        return float(dep.gpu.nvidia_smi_total_mib)
    return total_bytes / MIB


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TpFraction(_Strict):
    """One step of SGLang 0.4's ``mem_fraction_static`` table: the fraction from ``min_tp`` GPUs of TP up."""

    min_tp: int = Field(ge=1)
    fraction: float = Field(gt=0, le=1)


class LargeGpuHeadroom(_Strict):
    """0.4.7 above ``above_mib``: ``min(f + headroom_mib · (1 − f) / gpu, (gpu − reserve_mib) / gpu)``, with
    ``reserve_with_speculation_mib`` when a speculative algorithm is set."""

    above_mib: float
    headroom_mib: float
    reserve_mib: float
    reserve_with_speculation_mib: float


class FractionByTp(_Strict):
    """SGLang 0.4's default ``mem_fraction_static`` by parallel size, with the later 0.4 releases' GPU terms.

    ``table_up_to_mib`` (None: every GPU) bounds the table; above it the fraction is ``above_table_fraction``, or
    ``(gpu − above_table_reserve_mib) / gpu``. Then (0.4.7) above ``fixed_above_mib`` it is ``fixed_fraction``,
    else above ``large_gpu.above_mib`` the large-GPU headroom applies, else a speculative algorithm multiplies it by
    ``speculative_factor``. The fraction is not rounded.
    """

    steps: tuple[TpFraction, ...]
    #: The table reads ``tp_size · pp_size`` (0.4.7) rather than ``tp_size``.
    counts_pipeline: bool = False
    table_up_to_mib: float | None = None
    above_table_fraction: float | None = Field(default=None, gt=0, le=1)
    above_table_reserve_mib: float | None = None
    fixed_above_mib: float | None = None
    fixed_fraction: float | None = Field(default=None, gt=0, le=1)
    large_gpu: LargeGpuHeadroom | None = None
    speculative_factor: float = Field(default=1.0, gt=0, le=1)
    source: str

    @model_validator(mode="after")
    def _one_rule_above_the_table(self) -> FractionByTp:
        if self.table_up_to_mib is not None and (self.above_table_fraction is None) == (
            self.above_table_reserve_mib is None
        ):
            raise ValueError("table_up_to_mib needs exactly one of above_table_fraction and above_table_reserve_mib")
        return self

    def fraction(self, tp: int, pp: int, gpu_mib: float, speculative: bool) -> float:
        """The fraction the release sets.

        >>> rule = FractionByTp(steps=(TpFraction(min_tp=1, fraction=0.88),), table_up_to_mib=81920,
        ...     above_table_reserve_mib=13312, source="")
        >>> round(rule.fraction(1, 1, 143771, False), 4)  # 0.4.6 on an H200: (143,771 - 13 GiB) / 143,771
        0.9074
        """
        parallel = tp * pp if self.counts_pipeline else tp
        if self.table_up_to_mib is None or gpu_mib <= self.table_up_to_mib:
            value = max((s for s in self.steps if s.min_tp <= parallel), key=lambda s: s.min_tp).fraction
        elif self.above_table_fraction is not None:
            value = self.above_table_fraction
        else:
            value = (gpu_mib - (self.above_table_reserve_mib or 0.0)) / gpu_mib
        large = self.large_gpu
        if self.fixed_above_mib is not None and self.fixed_fraction is not None and gpu_mib > self.fixed_above_mib:
            return self.fixed_fraction
        if large is not None and gpu_mib > large.above_mib:
            reserve = large.reserve_with_speculation_mib if speculative else large.reserve_mib
            return min(value + large.headroom_mib * (1 - value) / gpu_mib, (gpu_mib - reserve) / gpu_mib)
        return value * self.speculative_factor if speculative else value


class ReserveTier(_Strict):
    """One GPU class of 0.4.8-0.5.2: ``reserved = (base_gib + tp · pp · per_parallel_gib) · 1024`` MiB below
    ``below_mib`` (None: the largest GPUs)."""

    below_mib: float | None
    base_gib: float = Field(ge=0)
    per_parallel_gib: float = Field(ge=0)


class ReserveByGpuTier(_Strict):
    """SGLang 0.4.8 to 0.5.2: ``mem_fraction_static = round((gpu − reserved) / gpu, decimals)``, ``reserved`` by GPU
    tier plus ``draft_extra_mib`` for the speculative method (``draft_model``, ``eagle``, ...).

    >>> rule = ReserveByGpuTier(tiers=(ReserveTier(below_mib=92160, base_gib=9.5, per_parallel_gib=0.5),),
    ...     draft_extra_mib={"eagle3": 2048}, fraction_decimals=3, source="")
    >>> rule.fraction(1, 1, 81559, None), rule.fraction(1, 1, 81559, "eagle3")  # one H100
    (0.874, 0.849)
    """

    tiers: tuple[ReserveTier, ...]
    draft_extra_mib: dict[str, float]
    fraction_decimals: int = Field(ge=0)
    source: str

    def reserved_mib(self, tp: int, pp: int, gpu_mib: float) -> float:
        tier = next((t for t in self.tiers if t.below_mib is None or gpu_mib < t.below_mib), self.tiers[-1])
        return (tier.base_gib + tp * pp * tier.per_parallel_gib) * GIB / MIB

    def fraction(self, tp: int, pp: int, gpu_mib: float, method: str | None) -> float:
        reserved = self.reserved_mib(tp, pp, gpu_mib)
        if method is not None:
            if method not in self.draft_extra_mib:
                raise InputError("speculative_method", method, f"one of {', '.join(self.draft_extra_mib)}")
            reserved += self.draft_extra_mib[method]
        return round((gpu_mib - reserved) / gpu_mib, self.fraction_decimals)
