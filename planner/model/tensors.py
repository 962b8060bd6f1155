"""A model's weights as groups of equal matrices: the shared currency of parameter and byte formulas.

>>> WeightTensor("mlp", "linear", 28672, 8192, 3, tuple(range(80)), "column").numel
56371445760
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: ``index``: an int64 index buffer (EAGLE-3's draft-to-target token map ``d2t``).
TensorKind = Literal["linear", "bias", "embedding", "lm_head", "norm", "router", "buffer", "index"]
COMPONENTS = (
    "embedding",
    "lm_head",
    "attention",
    "mlp",
    "experts",
    "shared_experts",
    "router",
    "norms",
    "fc",
    "vocab_map",
    "vision",
)


TpStyle = Literal["column", "row", "kv_column", "replicated", "vocab"]


@dataclass(frozen=True)
class WeightTensor:
    """A tensor of shape ``(rows, cols)``, ``per_layer`` times in each layer of ``layers``.

    A linear layer maps ``cols`` inputs to ``rows`` outputs. ``layers`` is empty for tensors outside
    the decoder stack (embedding, LM head, final norm), which occur ``per_layer`` times in all.
    ``tp_style`` says how tensor parallelism shards it (Megatron-style, as vLLM does): ``column``
    splits rows, ``row`` splits columns, ``kv_column`` splits KV heads but keeps at least one per
    rank, ``vocab`` splits vocabulary rows, ``replicated`` keeps a full copy on every rank.
    """

    component: str
    kind: TensorKind
    rows: int
    cols: int
    per_layer: int = 1
    layers: tuple[int, ...] = ()
    tp_style: TpStyle = "replicated"

    @property
    def count(self) -> int:
        return self.per_layer * (len(self.layers) if self.layers else 1)

    @property
    def numel(self) -> int:
        return self.rows * self.cols * self.count
