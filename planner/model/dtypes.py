"""Weight formats and KV-cache dtypes as the catalog describes them (``data/precisions.json``).

A :class:`WeightFormat` says how many bits a quantized weight takes and what per-group scales and zero
points vLLM stores beside it; a :class:`KvDtype` the bytes of one cached element.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from planner.facts import SourcedFact


class WeightFormat(SourcedFact):
    id: str
    name: str
    weight_bits: int = Field(ge=1, le=32)
    quantized: bool
    unquantized_dtype: Literal["fp32", "bf16", "fp16"]
    group_size: int | None = Field(default=None, ge=1)
    scale_bytes: int = Field(default=0, ge=0)
    zero_point_bits: int = Field(default=0, ge=0)
    g_idx_bytes: int = Field(default=0, ge=0)
    tensor_scale_bytes: int = Field(default=0, ge=0)


class KvDtype(SourcedFact):
    id: str
    name: str
    bytes: int | None = Field(default=None, ge=1)
