"""The load and acceptance an estimate is made at: batch size, request lengths, α / τ / ρ, K.

Exactly one acceptance figure is given, in the convention the user reads (Leviathan's α, the mean
accepted length τ that vLLM, SGLang and NVIDIA report, or vLLM V1's draft acceptance rate ρ); the
others follow from it at K (``planner.acceptance_math``).

>>> w = SpeedWorkload.build(draft_acceptance_rate=0.5, k=4)
>>> w.convention, round(w.resolved_alpha(4), 3), w.batch_size
('draft_acceptance_rate', 0.741, 1)
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from planner import acceptance_math as spec
from planner.catalog.schemas import SpeculatorKind
from planner.deployment import Deployment
from planner.errors import InputError, first_pydantic_error
from planner.speed.drafting import DraftShape, Verification
from planner.speed.policy import speculation_rules
from planner.speed.serving_workload import Dataset, datasets, longest_prompt_tokens, prompt_length_points
from planner.speed.steady_step import RequestLengths


class SpeedWorkload(BaseModel):
    """Load and acceptance: batch size, request lengths, exactly one of α / τ / ρ, optional K."""

    model_config = ConfigDict(extra="forbid")

    batch_size: int | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    alpha: float | None = None
    mean_accepted_len: float | None = None
    draft_acceptance_rate: float | None = None
    #: Draft length (a tree's depth); None means the deployment's ``num_speculative_tokens``.
    k: int | None = None
    #: ``chain`` (vLLM) or ``tree`` (SGLang's EAGLE worker, heads only); a tree's branching and verify budget
    #: default to the engine defaults in ``data/speculation_rules.json``.
    verification: Verification = "chain"
    tree_topk: int | None = None
    tree_verify_tokens: int | None = None
    #: How request lengths vary around ``prompt_tokens`` and ``output_tokens``: ``fixed`` (every request alike) or
    #: as a dataset's do (``sharegpt``, ``mlperf-openorca``: its spread and limits, ``data/serving_workloads.json``),
    #: whose means the lengths default to; the estimate prices each step over the prompt lengths it may meet.
    dataset: Dataset = "fixed"

    @classmethod
    def build(cls, **fields) -> SpeedWorkload:
        """Validate ``fields``; a problem is one ``PlannerError`` naming its field."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise first_pydantic_error(exc) from None

    @model_validator(mode="after")
    def _check(self) -> SpeedWorkload:
        defaults = speculation_rules().default_workload
        if self.dataset != "fixed":
            drawn = datasets()[self.dataset]
            if self.prompt_tokens is None:
                self.prompt_tokens = round(drawn.prompt.mean_tokens)
            if self.output_tokens is None:
                self.output_tokens = round(drawn.output.mean_tokens)
            longest = longest_prompt_tokens(self.dataset)
            if not isinstance(self.prompt_tokens, bool) and self.prompt_tokens > longest:
                raise InputError(
                    "prompt_tokens",
                    self.prompt_tokens,
                    f"a mean of at most {longest:,} tokens with {self.dataset} lengths (its longest prompt)",
                )
        for name in ("batch_size", "prompt_tokens", "output_tokens"):
            value = getattr(self, name)
            if value is None:
                setattr(self, name, getattr(defaults, name))
            elif isinstance(value, bool) or value < 1:
                raise InputError(name, value, "an integer >= 1")
        if self.k is not None:
            spec.check_k(self.k)
        if self.verification == "chain":  # a chain verifies one candidate per level: tree settings would be ignored
            for name in ("tree_topk", "tree_verify_tokens"):
                if getattr(self, name) is not None:
                    raise InputError(
                        name,
                        getattr(self, name),
                        "a tree's setting, with verification tree (a chain verifies one candidate per level)",
                    )
        given = [n for n in ("alpha", "mean_accepted_len", "draft_acceptance_rate") if getattr(self, n) is not None]
        if len(given) != 1:
            raise InputError(
                "acceptance",
                ", ".join(given) or None,
                "exactly one of alpha, mean_accepted_len (τ) or draft_acceptance_rate (ρ)",
            )
        if self.alpha is not None:
            spec.check_alpha(self.alpha)
        return self

    def request_lengths(self) -> RequestLengths:
        """The mean prompt and output tokens and, where prompts vary, their equally likely lengths around the mean."""
        points = None if self.dataset == "fixed" else prompt_length_points(self.dataset, self.prompt_tokens)  # type: ignore[arg-type]
        return RequestLengths(self.prompt_tokens, self.output_tokens, points)  # type: ignore[arg-type]

    def resolved_k(self, deployment: Deployment) -> int:
        """K as given, else the deployment's K (``planner.defaults.NUM_SPECULATIVE_TOKENS`` unless set), for every
        speculator kind, an MTP module included: one default K for every page and command."""
        return self.k if self.k is not None else deployment.num_speculative_tokens

    def draft_shape(self, method: SpeculatorKind, k: int, verification: Verification | None = None) -> DraftShape:
        """How ``method`` drafts and verifies at draft length (tree depth) ``k`` under this workload.

        A tree's token budget is the one given, else the engine default raised to ``k + 1`` so that every level
        holds a candidate (a chain of ``k`` is the smallest tree of depth ``k``); a tree drawn only for comparison
        with a chain (``verification`` other than the workload's) is raised the same way even when a budget is given.

        >>> w = SpeedWorkload.build(alpha=0.8)
        >>> w.draft_shape("eagle3", 8, "tree").verify_tokens, w.draft_shape("eagle3", 3, "tree").verify_tokens
        (9, 8)
        """
        tree = speculation_rules().tree
        chosen = verification or self.verification
        budget = self.tree_verify_tokens or max(tree.verify_tokens, k + 1)
        if chosen != self.verification:
            budget = max(budget, k + 1)
        return DraftShape.build(
            method=method,
            verification=chosen,
            k=k,
            topk=self.tree_topk or tree.topk,
            tree_verify_tokens=budget,
        )

    def allows_depth(self, k: int) -> bool:
        """Whether a tree of depth ``k`` fits the workload's token budget (always for a chain or no budget given)."""
        return self.verification == "chain" or self.tree_verify_tokens is None or self.tree_verify_tokens >= k + 1

    @property
    def convention(self) -> str:
        """Which acceptance figure the user gave: "alpha", "mean_accepted_len" (τ) or "draft_acceptance_rate" (ρ)."""
        if self.alpha is not None:
            return "alpha"
        return "mean_accepted_len" if self.mean_accepted_len is not None else "draft_acceptance_rate"

    def resolved_alpha(self, k: int) -> float:
        return spec.resolve_alpha(
            k,
            alpha=self.alpha,
            mean_accepted_len=self.mean_accepted_len,
            draft_acceptance_rate=self.draft_acceptance_rate,
        )
