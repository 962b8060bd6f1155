"""How a speculative method drafts and verifies: the passes of one step and the tokens it emits.

* a separate draft model or an EAGLE / EAGLE-3 / MTP head drafting a **chain** (vLLM V1): a first draft pass over
  the tokens the last step verified, K − 1 passes of one token, one target pass over K + 1 tokens
  (``vllm/v1/spec_decode/eagle.py`` ``EagleProposer.propose``; ``draft_model.py`` for a separate model, whose
  first pass the speed profile sizes); tokens per step τ(α, K) (Leviathan et al. 2023, §3.1);
* a head drafting a **tree** (SGLang's EAGLE worker): ``depth`` draft passes of ``topk`` candidates per
  sequence after the first, one target pass over the tree's ``verify_tokens`` (tree attention); tokens per
  step :func:`planner.acceptance_math.tree_tokens_per_step` over the level widths of
  :func:`planner.acceptance_math.tree_widths` (EAGLE-2, https://arxiv.org/abs/2406.16858);
* **n-gram** lookup: no draft pass at all (the proposer matches the last tokens against the prompt on the
  CPU, ``vllm/v1/spec_decode/ngram_proposer.py``), a target pass over K + 1 tokens.

>>> chain = DraftShape(method="eagle3", verification="chain", k=3)
>>> chain.verify_tokens, chain.draft_pass_tokens(first_pass_tokens=4), round(chain.tokens_per_step(0.7), 3)
(4, (4, 1, 1), 2.533)
>>> tree = DraftShape(method="eagle3", verification="tree", k=5, topk=4, tree_verify_tokens=8)
>>> tree.widths, tree.verify_tokens, tree.draft_pass_tokens(first_pass_tokens=6)
((3, 1, 1, 1, 1), 8, (6, 4, 4, 4, 4))
>>> DraftShape(method="ngram", verification="chain", k=4).draft_pass_tokens(first_pass_tokens=5)
()
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from planner import acceptance_math as spec
from planner.catalog.schemas import SpeculatorKind
from planner.errors import InputError, first_pydantic_error

Verification = Literal["chain", "tree"]
VERIFICATIONS: tuple[str, ...] = ("chain", "tree")


class DraftShape(BaseModel):
    """The drafting and verification of one speculative step (K is the chain length or the tree depth)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: SpeculatorKind
    verification: Verification = "chain"
    k: int = Field(ge=1, le=64)
    topk: int = Field(default=1, ge=1, le=64)
    tree_verify_tokens: int | None = Field(default=None, ge=2, le=1024)

    @classmethod
    def build(cls, **fields) -> DraftShape:
        """Validate ``fields``; a problem is one ``PlannerError`` naming its field."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    @model_validator(mode="after")
    def _check(self) -> DraftShape:
        if self.verification == "tree":
            if self.method in ("ngram", "draft_model"):
                raise InputError("verification", "tree", "chain for a separate draft model or n-gram lookup")
            spec.tree_widths(self.k, self.topk, self.tree_verify_tokens or self.k + 1)
        return self

    @property
    def widths(self) -> tuple[int, ...]:
        """Candidates verified per level (all ones for a chain)."""
        if self.verification == "chain":
            return (1,) * self.k
        return spec.tree_widths(self.k, self.topk, self.tree_verify_tokens or self.k + 1)

    @property
    def verify_tokens(self) -> int:
        """Query tokens per sequence in the target's verify pass: K + 1, or the tree's budget."""
        return 1 + sum(self.widths)

    @property
    def has_draft_passes(self) -> bool:
        return self.method != "ngram"

    def draft_pass_tokens(self, *, first_pass_tokens: int) -> tuple[int, ...]:
        """Query tokens per sequence of each draft pass (the first re-reads the verified tokens)."""
        if not self.has_draft_passes:
            return ()
        later = self.topk if self.verification == "tree" else 1
        return (first_pass_tokens, *([later] * (self.k - 1)))

    def tokens_per_step(self, alpha: float) -> float:
        """Tokens one step emits at per-token acceptance ``alpha`` (bonus token included)."""
        if self.verification == "chain":
            return spec.expected_tokens_per_step(alpha, self.k)
        return spec.tree_tokens_per_step(alpha, self.widths)
