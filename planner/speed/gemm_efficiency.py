"""What fraction of a GPU's dense peak its large weight GEMMs reach, per precision, where kernels are not looked up.

The roofline prices a compute-bound GEMM at ``flops_frac · N / (N + N½)`` of the dense peak of the weights' GEMM
precision (:mod:`planner.speed.step_model`). One vendor-wide ``flops_frac`` overstates the low precisions: in
aiconfigurator-core's measured GEMM tables the large GEMMs (``m``, ``n`` and ``k`` all at least 4,096) of an H100
reach a median 0.79 of the BF16 peak but 0.54 of the FP8 peak, and a B200's NVFP4 GEMMs 0.44 of the FP4 peak.
``data/gemm_efficiency.json`` records those medians per GPU and precision (over the engines' tables) and, for GPUs
the tables do not cover, per vendor and precision (the median over the covered GPUs), as ``python -m
bench.fit_gemm_efficiency`` derives them. They hold wherever the roofline prices a GEMM: a GPU or engine without
tables, a shape past them, or aiconfigurator-core not installed (the figures are data, not the package).

Which figure (:func:`gemm_flops_frac`): a value set on the profile for a what-if (``with_values``), else the
GPU's own, else its vendor's, else the profile's ``flops_frac`` (vendors without measured tables). FP16 GEMMs run
on the same tensor cores at the BF16 rate and take its figure.

>>> from planner.catalog.lookup import get_gpu
>>> from planner.speed.profiles import speed_profile
>>> nvidia = speed_profile("vllm", "nvidia")
>>> frac, source = gemm_flops_frac(get_gpu("b200-180gb"), "fp4", nvidia)
>>> 0.3 < frac < 0.6, source.startswith("measured large GEMMs on this GPU")
(True, True)
>>> gemm_flops_frac(get_gpu("b200-180gb"), "fp4", nvidia.with_values(flops_frac=1.0))[0]
1.0
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from planner.catalog.schemas import GpuSpec
from planner.facts import data_cache, load_model
from planner.speed.profiles import SpeedProfile

GEMM_EFFICIENCY_FILE = "gemm_efficiency.json"

#: Our compute dtypes (:func:`planner.speed.roofline.compute_dtype`) → the data file's precisions.
PRECISIONS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "fp4": "fp4"}


class GemmEfficiencyFile(BaseModel):
    """``data/gemm_efficiency.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    source: str
    shapes: str
    #: GPU id → precision → median fraction of the dense peak over the measured large GEMMs.
    gpus: dict[str, dict[str, float]]
    #: Vendor → precision → the median of its covered GPUs' figures (for its GPUs without tables).
    vendors: dict[str, dict[str, float]]

    def model_post_init(self, _context: object) -> None:
        for where, table in (("gpus", self.gpus), ("vendors", self.vendors)):
            for key, fractions in table.items():
                for precision, value in fractions.items():
                    if precision not in PRECISIONS.values() or not 0 < value <= 1:
                        raise ValueError(
                            f"{where}.{key}.{precision}: a precision of {sorted(set(PRECISIONS.values()))} "
                            f"with a fraction in (0, 1], got {value!r}"
                        )


@data_cache
def gemm_efficiency() -> GemmEfficiencyFile:
    """The data file, validated (a bad file is a CatalogError naming it and the field)."""
    return load_model(GEMM_EFFICIENCY_FILE, GemmEfficiencyFile)


def gemm_flops_frac(gpu: GpuSpec, compute_dtype: str, profile: SpeedProfile) -> tuple[float, str]:
    """(fraction of the dense peak the roofline's large GEMMs reach, where it comes from) for ``gpu`` at
    ``compute_dtype`` under ``profile`` (the order of the module docstring)."""
    if profile.sources.get("flops_frac") == "override":
        return profile.flops_frac, "set on the speed profile"
    data = gemm_efficiency()
    precision = PRECISIONS.get(compute_dtype)
    own = data.gpus.get(gpu.id, {}).get(precision or "")
    if own is not None:
        return own, f"measured large GEMMs on this GPU at {precision} ({data.source})"
    vendor = data.vendors.get(gpu.vendor, {}).get(precision or "")
    if vendor is not None:
        return vendor, f"measured large GEMMs at {precision}, median of {gpu.vendor}'s covered GPUs ({data.source})"
    return profile.flops_frac, profile.sources.get("flops_frac", "speed profile")
