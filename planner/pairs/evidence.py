"""Published measurements of catalog pairs (``data/pair_evidence.json``) and the α they imply.

Each row is one public measurement (a paper table, an engine's benchmark, a vendor post) with its
source URL: speedup, batch, hardware and the acceptance as reported (α, or τ / ρ with K, converted by
:mod:`planner.acceptance_math`). The file is read lazily, once, and validated by pydantic.

>>> from planner.catalog.lookup import get_model
>>> rows = published_evidence(get_model("Qwen2.5-72B"), get_model("Qwen2.5-7B"))
>>> len(rows) >= 1, all(r.draft == "Qwen/Qwen2.5-7B" for r in rows)
(True, True)
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.acceptance_math import alpha_from_draft_acceptance_rate, alpha_from_tau
from planner.catalog.lookup import get_gpu, get_model
from planner.catalog.schemas import ModelSpec
from planner.errors import CatalogError, first_pydantic_error
from planner.facts import data_cache, read_data_file
from planner.pairs.size_ratio import parameter_ratio

Convention = Literal["alpha", "tau", "rho"]


class AcceptanceFigure(BaseModel):
    model_config = ConfigDict(extra="forbid")

    convention: Convention
    value: float = Field(ge=0)


def _alpha_of(figures: list[AcceptanceFigure], k: int | None) -> float | None:
    """α from the first figure that converts: α as is, τ or ρ only with a known K."""
    for figure in figures:
        if figure.convention == "alpha":
            return figure.value
        if k is not None and figure.convention == "tau":
            return alpha_from_tau(figure.value, k)
        if k is not None and figure.convention == "rho":
            return alpha_from_draft_acceptance_rate(figure.value, k)
    return None


class PairEvidence(BaseModel):
    """One published measurement of a catalog pair (a row of data/calibration/specdec-measured.csv)."""

    model_config = ConfigDict(extra="forbid")

    target: str
    draft: str
    target_measured: str
    draft_measured: str
    hardware: str
    gpu: str | None = None
    engine: Literal["vllm", "vllm-v0", "sglang", "trtllm", "hf", "other"]
    batch_size: int | None = Field(default=None, ge=1)
    batch_note: str
    k: int | None = Field(default=None, ge=1)
    k_implied: int | None = Field(default=None, ge=1)
    k_note: str | None = None
    acceptance: list[AcceptanceFigure] = []
    speedup: float | None = Field(default=None, gt=0)
    speedup_text: str
    task: str
    source: str = Field(min_length=1)
    date: str | None = None
    reliability: Literal["reported", "computed", "unverified"]
    note: str = ""

    @property
    def alpha(self) -> float | None:
        """α implied by the reported acceptance (K as stated, else as implied), or None."""
        return _alpha_of(self.acceptance, self.k or self.k_implied)

    def describe(self) -> str:
        """One line: '3.55x at batch 1 on 1x NVIDIA H200 (FP8), trtllm (Llama-3.3-70B-Instruct + ...)'."""
        speed = f"{self.speedup:.2f}x" if self.speedup is not None else self.speedup_text
        batch = f"batch {self.batch_size}" if self.batch_size else self.batch_note
        where = "" if batch == "not stated" else f" at {batch}"
        where += "" if self.hardware == "not stated" else f" on {self.hardware}"
        flag = "" if self.reliability == "reported" else f", {self.reliability}"
        task = "" if self.task == "not stated" else f"; {self.task}"
        return f"{speed}{where}, {self.engine} ({self.target_measured} + {self.draft_measured}{task}{flag})"


@data_cache
def load_pair_evidence() -> tuple[PairEvidence, ...]:

    raw = read_data_file("pair_evidence.json")
    rows = []
    for index, entry in enumerate(raw.get("evidence") or []):
        try:
            row = PairEvidence.model_validate(entry)
        except ValidationError as exc:
            raise CatalogError(f"pair_evidence.json entry {index}: {first_pydantic_error(exc)}") from exc
        try:
            row = row.model_copy(update={"target": get_model(row.target).id, "draft": get_model(row.draft).id})
            if row.gpu is not None:
                get_gpu(row.gpu)
        except CatalogError as exc:
            raise CatalogError(f"pair_evidence.json entry {index}: {exc}") from exc
        rows.append(row)
    return tuple(rows)


@data_cache
def evidence_ratios() -> tuple[tuple[PairEvidence, float], ...]:
    """Every evidence row with its pair's exact parameter ratio (computed once)."""
    return tuple((row, parameter_ratio(get_model(row.target), get_model(row.draft))) for row in load_pair_evidence())


def published_evidence(target: ModelSpec, draft: ModelSpec) -> list[PairEvidence]:
    """Published measurements of exactly this (target, draft) pair, best numeric speedup first.

    A head that republishes another head's weights (``speculator.copy_of``) shares that head's measurements.
    """
    same = {draft.id} | ({draft.speculator.copy_of} if draft.speculator and draft.speculator.copy_of else set())
    rows = [e for e in load_pair_evidence() if e.target == target.id and e.draft in same]
    return sorted(rows, key=lambda e: -(e.speedup or 0.0))
