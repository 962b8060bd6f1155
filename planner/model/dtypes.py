"""Weight formats and KV-cache dtypes as the catalog describes them (``data/precisions.json``), the one table
of their spellings, and the one element-size function.

A :class:`WeightFormat` says how many bits a quantized weight takes and what per-group scales and zero
points vLLM stores beside it; a :class:`KvDtype` the bytes of one cached element. Configs, logs, checkpoint
names and command lines spell the same format many ways (``bfloat16``, ``torch.float16``, vLLM's
``awq_marlin`` or ``modelopt_fp4``); each entry's ``aliases`` lists them and :func:`precision_id` resolves
any of them to the one id.

>>> precision_id("torch.bfloat16"), precision_id("AWQ_Marlin"), precision_id("fp8_e5m2", "kv")
('bf16', 'int4-awq', 'fp8')
>>> element_bytes("bf16"), element_bytes("float32")
(2, 4)
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from planner.errors import CatalogError
from planner.facts import SourcedFact, data_cache, load_entries

PrecisionKind = Literal["weight", "kv"]


class WeightFormat(SourcedFact):
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    #: The torch dtype name of an unquantized format (what ``--dtype`` takes in vLLM and transformers).
    torch_dtype: str | None = None
    weight_bits: int = Field(ge=1, le=32)
    quantized: bool
    unquantized_dtype: Literal["fp32", "bf16", "fp16"]
    group_size: int | None = Field(default=None, ge=1)
    scale_bytes: int = Field(default=0, ge=0)
    zero_point_bits: int = Field(default=0, ge=0)
    g_idx_bytes: int = Field(default=0, ge=0)
    tensor_scale_bytes: int = Field(default=0, ge=0)
    #: Copies of the group scales the engine keeps after loading (vLLM's Triton MXFP4 MoE path swizzles the scales
    #: into a new tensor and leaves the loaded ones registered: 2).
    scale_copies: int = Field(default=1, ge=1)
    #: The engine pads each rank's MoE expert width to a multiple of this (vLLM's Mxfp4MoEMethod: 64), else None.
    moe_intermediate_align: int | None = Field(default=None, ge=1)
    #: The weight components (``planner.model.tensors.COMPONENTS``) the format quantizes; None: every linear
    #: layer. vLLM runs MXFP4 for fused-MoE experts only (its linear layers fall back to unquantized).
    quantized_components: tuple[str, ...] | None = None
    #: False: vLLM runs this format's experts through kernels that keep no fused-MoE workspace between calls
    #: (MXFP4 through triton_kernels' ``matmul_ogs``), so the profile run's peak has no MoE workspace term.
    fused_moe_workspace: bool = True

    @property
    def activation_dtype(self) -> str:
        """The dtype the model computes (and caches with ``kv_dtype auto``) in: quantized formats dequantize
        to their ``unquantized_dtype``."""
        return self.unquantized_dtype if self.quantized else self.id

    def quantizes(self, component: str, kind: str) -> bool:
        """Whether a tensor of ``component`` and ``kind`` is stored in the quantized form.

        >>> WeightFormat(id="q", name="q", weight_bits=4, quantized=True, unquantized_dtype="bf16",
        ...              quantized_components=("experts",), source="s").quantizes("attention", "linear")
        False
        """
        if not self.quantized or kind != "linear":
            return False
        return self.quantized_components is None or component in self.quantized_components


class KvDtype(SourcedFact):
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    bytes: int | None = Field(default=None, ge=1)


@data_cache
def list_weight_formats() -> tuple[WeightFormat, ...]:
    return load_entries("precisions.json", "weight_formats", WeightFormat)


@data_cache
def list_kv_dtypes() -> tuple[KvDtype, ...]:
    return load_entries("precisions.json", "kv_dtypes", KvDtype)


def _key(spelling: str) -> str:
    return spelling.strip().lower().removeprefix("torch.")


@data_cache
def _alias_table(kind: PrecisionKind) -> dict[str, str]:
    entries = list_weight_formats() if kind == "weight" else list_kv_dtypes()
    table: dict[str, str] = {}
    for entry in entries:
        for spelling in (entry.id, *entry.aliases):
            key = _key(spelling)
            if table.get(key, entry.id) != entry.id:
                raise CatalogError(f"precisions.json: {spelling!r} names both {table[key]} and {entry.id}")
            table[key] = entry.id
    return table


def precision_id(spelling: str, kind: PrecisionKind = "weight") -> str | None:
    """The weight-format (or KV-dtype) id ``spelling`` names, case-insensitively; None when unknown."""
    return _alias_table(kind).get(_key(spelling))


def element_bytes(dtype: str) -> int:
    """Bytes of one element stored in ``dtype`` (an id or alias of an unquantized or 8-bit format).

    >>> element_bytes("half"), element_bytes("fp8")
    (2, 1)
    """
    fmt_id = precision_id(dtype)
    fmt = next((f for f in list_weight_formats() if f.id == fmt_id), None)
    if fmt is None or fmt.weight_bits % 8:
        raise CatalogError(f"{dtype!r} is not a whole-byte element dtype of precisions.json", field="dtype")
    return fmt.weight_bits // 8
