"""One engine step of a deployment: plain decode, speculative decode and prefill chunks, from one step model.

A plain step is one target pass over the batch. A speculative step with draft length ``K`` is, for
the decoding sequences (vLLM V1 draft_model proposer; Leviathan et al. 2023 for the acceptance)::

    draft pass 1 over n₁ tokens per sequence (vLLM: K + 2 for a draft model, K + 1 for a head; it re-reads
                                                the verified tokens)
    + (K − 1) draft passes over 1 token          (the draft at its own TP, on the same GPUs; ``topk`` for a tree)
    + one target pass over K + 1 tokens          (verify; every token needs logits; a tree's verify budget)
    + rejection sampling and the proposer's bookkeeping: t_spec + t_spec_seq · B + K · t_draft

and every step, plain or speculative, lasts ``(1 + f_host)`` times its GPU time where the engine schedules between
GPU steps rather than one step ahead (``host_serial_frac``: SGLang before v0.4, whose overlap scheduler gained 1.1x).

The drafting shape of each method (a separate model, an EAGLE / EAGLE-3 / MTP head, n-gram lookup with no
draft pass; chain or tree) is :class:`planner.speed.drafting.DraftShape`. A head's pass is one decoder layer
and its LM head over its own (draft) vocabulary (:func:`planner.speed.roofline.model_cost`).

Prefill chunks scheduled in the same step ride along in the target pass (and in the draft's first
pass, which fills the draft's own cache). Every pass is :meth:`planner.speed.step_model.StepModel.forward` at the
size the engine runs it: padded up to its next captured CUDA-graph batch, or without graphs for a decode batch no
graph covers (:mod:`planner.speed.cuda_graphs`).
Work is counted on the busiest GPU (the first, which runs both the target's and the draft's shards).

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4,
...                          draft=get_model("Llama-3.2-1B"))
>>> engine = EngineStep(dep)
>>> plain = engine.plain(decode_seqs=1, decode_context_tokens=1024)
>>> spec = engine.speculative(3, decode_seqs=1, decode_context_tokens=1024)
>>> 1.0 < spec.total_s / plain.total_s < 1.6
True
"""

from __future__ import annotations

from copy import copy
from dataclasses import dataclass

from planner.deployment import Deployment
from planner.errors import InputError
from planner.speed.cuda_graphs import NO_GRAPHS, GraphPlan, graph_plan
from planner.speed.drafting import DraftShape
from planner.speed.pass_memos import MEMO_ENTRIES
from planner.speed.profiles import SpeedProfile, speed_profile
from planner.speed.roofline import ModelCost, model_cost
from planner.speed.step_model import PassTime, StepModel, unhidden_launches

#: Decode contexts whose step totals a step plan keeps: a run asks some again exactly (a lone request's first decode
#: step, the steps of an offline run's waves). Keeping eight would spare the Fleet page's default plan 4.5% more of
#: its pass pricings, for twelve times the memory these take.
CONTEXTS_PER_PLAN = 2
#: Step totals an engine's plans keep in all before they start over.
PRICED_ENTRIES = CONTEXTS_PER_PLAN * MEMO_ENTRIES // 4
#: Methods whose draft passes run a speculator head through the EAGLE proposer (vllm/v1/spec_decode/eagle.py).
HEAD_METHODS: tuple[str, ...] = ("eagle", "eagle3", "mtp")


@dataclass(slots=True)
class Chunks:
    """Prefill chunks of one step, summed: tokens, chunks, Σ c·(p + (c+1)/2) and Σ p."""

    tokens: int = 0
    seqs: int = 0
    positions: float = 0.0
    context_tokens: float = 0.0

    def add(self, chunk_tokens: int, cached_tokens: int) -> None:
        self.tokens += chunk_tokens
        self.seqs += 1
        self.positions += chunk_tokens * (cached_tokens + (chunk_tokens + 1) / 2)
        self.context_tokens += cached_tokens

    def add_prompts(self, count: int, total_tokens: float) -> None:
        """``count`` whole prompts of ``total_tokens`` together with nothing cached, each of their mean length:
        :meth:`add` ``count`` times, in one.

        >>> one, many = Chunks(), Chunks()
        >>> for _ in range(3):
        ...     one.add(100, 0)
        >>> many.add_prompts(3, 300)
        >>> one == many
        True
        """
        length = total_tokens / count
        self.tokens += round(total_tokens)
        self.seqs += count
        self.positions += count * length * (length + 1) / 2


NO_CHUNKS = Chunks()


@dataclass(slots=True)
class EngineStepTime:
    """One engine step: seconds, and the FLOPs and HBM bytes of the busiest GPU."""

    total_s: float
    flops: float
    bytes_moved: float
    passes: tuple[tuple[str, PassTime], ...]


class EngineStep:
    """Step times of a deployment's target (and draft), computed from its static costs once."""

    def __init__(self, deployment: Deployment, profile: SpeedProfile | None = None, *, need_draft: bool = False):
        if need_draft and not deployment.is_speculative:
            raise InputError(
                "draft", None, "a draft model, a head or a draft-free method: speculative decoding needs one"
            )
        self.deployment = deployment
        self.gpu = deployment.gpu
        self.profile: SpeedProfile = profile or speed_profile(deployment.engine, deployment.gpu.vendor)
        #: ``1 + f_host``: a step's seconds per GPU second (:meth:`with_host`).
        self._host_factor = 1.0 + self.profile.host_serial_frac
        graphs = not deployment.enforce_eager
        self.target_cost: ModelCost = model_cost(
            deployment.target, deployment.target_format, deployment.kv, self.gpu, tp=deployment.tp, pp=deployment.pp
        )
        self.target = StepModel(self.target_cost, self.gpu, self.profile, cuda_graphs=graphs)
        self.draft: StepModel | None = None
        speculator = deployment.speculator
        if speculator is not None and deployment.draft_format is not None:
            draft_cost = model_cost(
                speculator, deployment.draft_format, deployment.kv, self.gpu, tp=deployment.resolved_draft_tp or 1
            )
            # the engine prepares a step's per-sequence inputs once, for the target; a draft pass pays the
            # profile's per-sequence cost of a draft pass instead (none in vLLM V1)
            draft_profile = self.profile.model_copy(update={"seq_overhead_s": self.profile.draft_seq_overhead_s})
            self.draft = StepModel(draft_cost, self.gpu, draft_profile, cuda_graphs=graphs)
        #: The batch sizes the engine captured; steps pad up to them or run eagerly above them.
        self.graphs: GraphPlan = graph_plan(deployment) if graphs and self.profile.cuda_graphs else NO_GRAPHS
        self.graph_runs: dict[tuple[int, int, int], tuple[int, bool]] = {}
        #: Per drafting shape (by identity; the entry holds it): the shape, query tokens of each draft pass, of the
        #: verify pass, and the proposer's cost per draft pass.
        self._drafting: dict[int, tuple[DraftShape, tuple[int, ...], int, float]] = {}
        #: Per step batch shape: its passes at their padded sizes, and its totals per decode context
        #: (:meth:`step_totals`); with how many totals the plans keep in all.
        self._plans: dict[tuple, tuple] = {}
        self._priced_count = 0
        #: The method's chain per draft length (one shape per K: the memos above hold shapes by identity).
        self._shapes: dict[int, DraftShape] = {}
        #: One instance per drafting shape a caller brought (:meth:`interned`).
        self._interned: dict[DraftShape, DraftShape] = {}

    def for_deployment(self, deployment: Deployment) -> EngineStep:
        """This engine's step models (its target, draft and profile) for ``deployment``, a deployment of the same
        models that differs only in what sets the captured CUDA-graph sizes (K, the batch cap): the captured sizes
        are ``deployment``'s, and so is the padding kept per step size."""
        other = copy(self)
        other.deployment = deployment
        graphs = not deployment.enforce_eager and self.profile.cuda_graphs
        other.graphs = graph_plan(deployment) if graphs else NO_GRAPHS
        other.graph_runs = {}
        other._plans = {}
        other._priced_count = 0
        return other

    def graph_run(self, seqs: int, query_tokens: int, prefill_tokens: int = 0) -> tuple[int, bool]:
        """:meth:`GraphPlan.run` of this engine's captured sizes (kept per step size: a run repeats them)."""
        key = (seqs, query_tokens, prefill_tokens)
        run = self.graph_runs.get(key)
        if run is None:
            if len(self.graph_runs) >= MEMO_ENTRIES:
                self.graph_runs.clear()
            run = self.graph_runs[key] = self.graphs.run(
                seqs=seqs, query_tokens=query_tokens, prefill_tokens=prefill_tokens
            )
        return run

    def run_pass(
        self,
        model: StepModel,
        *,
        decode_seqs: int = 0,
        decode_query_tokens: int = 1,
        decode_context_tokens: float = 0.0,
        chunks: Chunks | None = None,
        logits_tokens: int | None = None,
    ) -> PassTime:
        """One pass of ``model`` as the engine runs it: padded to the next captured CUDA-graph size (padding tokens
        cost GEMM work only), or without graphs for a decode batch no graph covers (:mod:`planner.speed.cuda_graphs`).

        Without graphs the CPU launches every layer's kernels (the profile's eager per-layer cost instead of the
        graph's); the launches run ahead of the GPU, so only the part of that extra launch time the GPU's own work
        does not hide lengthens the pass.
        """
        mix, launches = self.pass_mix(model, decode_seqs, decode_query_tokens, chunks or NO_CHUNKS, logits_tokens)
        step = model.priced(mix, decode_context_tokens)  # StepModel.forward of that batch
        if launches is not None:  # a pass priced for this call alone
            step.overhead_s = unhidden_launches(step.overhead_s, launches, step.total_s)
        return step

    def pass_mix(
        self, model: StepModel, decode_seqs: int, decode_query_tokens: int, chunks: Chunks, logits_tokens: int | None
    ) -> tuple[tuple, float | None]:
        """The batch ``model`` runs for this pass (:data:`planner.speed.step_model.PassMix`: padded to the next
        captured CUDA-graph size), and the eager launch time it may not hide when no graph covers it (else None)."""
        pad, eager = self.graph_run(decode_seqs, decode_query_tokens, chunks.tokens)
        mix = (
            decode_seqs,
            decode_query_tokens,
            chunks.tokens + pad,
            chunks.seqs,
            chunks.positions,
            chunks.context_tokens,
            logits_tokens,
        )
        if not eager:
            return mix, None
        return mix, model.layers * (self.profile.eager_layer_overhead_s - self.profile.layer_overhead_s)

    @property
    def draft_model(self) -> StepModel:
        if self.draft is None:
            raise InputError("draft", None, "a draft model or head: this method has no draft pass")
        return self.draft

    def shape(self, k: int) -> DraftShape:
        """The deployment's drafting at draft length ``k``: its method, verifying a chain."""
        found = self._shapes.get(k)
        if found is None:
            method = self.deployment.speculative_method
            if method is None:
                raise InputError(
                    "draft", None, "a draft model, a head or a draft-free method: speculative decoding needs one"
                )
            found = self._shapes[k] = DraftShape(method=method, k=k)
        return found

    def interned(self, shape: DraftShape) -> DraftShape:
        """The instance of ``shape`` this engine already holds (an equal one), else ``shape``: the step plans are kept
        by the shape's identity, so every run that drafts the same way reuses them (one hash per run, not per step).

        >>> from planner.catalog.lookup import get_model, get_node
        >>> from planner.deployment import Deployment
        >>> engine = EngineStep(Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"),
        ...                                        draft=get_model("Llama-3.2-1B")))
        >>> first = engine.interned(DraftShape(method="draft_model", k=3))
        >>> engine.interned(DraftShape(method="draft_model", k=3)) is first
        True
        """
        return self._interned.setdefault(shape, shape)

    def first_pass_tokens(self, shape: DraftShape) -> int:
        """Query tokens per sequence of the first draft pass: the profile's for a draft model, K + 1 for a head
        (vLLM V1's EAGLE proposer runs the head over every token the target verified)."""
        if shape.method == "draft_model":
            return self.profile.draft_first_pass_query_tokens(shape.k)
        return shape.k + 1

    def plain(self, *, decode_seqs: int, decode_context_tokens: float, chunks: Chunks = NO_CHUNKS) -> EngineStepTime:
        """One target pass: every decoding sequence adds one token; ``chunks`` prefill alongside."""
        step = self.run_pass(
            self.target, decode_seqs=decode_seqs, decode_context_tokens=decode_context_tokens, chunks=chunks
        )
        total_s, flops, moved = self.step_totals(None, decode_seqs, decode_context_tokens, chunks)
        return EngineStepTime(total_s, flops, moved, (("target", step),))

    def with_host(self, gpu_s: float) -> float:
        """A step of ``gpu_s`` GPU seconds plus the host work the engine does not overlap with it."""
        return gpu_s * self._host_factor

    def speculative(
        self,
        k: int,
        *,
        decode_seqs: int,
        decode_context_tokens: float,
        chunks: Chunks = NO_CHUNKS,
        shape: DraftShape | None = None,
    ) -> EngineStepTime:
        """The draft passes of ``shape`` (default: the method's chain of ``k``) and one verify pass, plus ``chunks``:
        the step's seconds, FLOPs and bytes (:meth:`step_totals`) and each pass in detail."""
        shape = shape or self.shape(k)
        _, pass_tokens, verify_tokens, _ = self._drafting_of(shape)
        passes: list[tuple[str, PassTime]] = []
        if pass_tokens and (decode_seqs or chunks.tokens):
            draft = self.draft_model
            first_tokens = pass_tokens[0]
            passes.append(
                (
                    "draft first pass",
                    self.run_pass(
                        draft,
                        decode_seqs=decode_seqs,
                        decode_query_tokens=first_tokens,
                        decode_context_tokens=decode_context_tokens,
                        chunks=chunks,
                        logits_tokens=decode_seqs + chunks.seqs,
                    ),
                )
            )
        if pass_tokens and decode_seqs and len(pass_tokens) > 1:
            later = self.run_pass(
                self.draft_model,
                decode_seqs=decode_seqs,
                decode_query_tokens=pass_tokens[1],
                decode_context_tokens=decode_context_tokens + decode_seqs * pass_tokens[0],
            )
            passes += [("draft decode", later)] * (len(pass_tokens) - 1)
        verify = self.run_pass(
            self.target,
            decode_seqs=decode_seqs,
            decode_query_tokens=verify_tokens,
            decode_context_tokens=decode_context_tokens,
            chunks=chunks,
        )
        passes.append(("target verify", verify))
        total_s, flops, moved = self.step_totals(shape, decode_seqs, decode_context_tokens, chunks)
        return EngineStepTime(total_s, flops, moved, tuple(passes))

    def _drafting_of(self, shape: DraftShape) -> tuple[DraftShape, tuple[int, ...], int, float]:
        """(shape, :meth:`drafting` of it), kept per shape."""
        drafting = self._drafting.get(id(shape))  # by identity: hashing a shape costs more than a pass
        if drafting is None or drafting[0] is not shape:
            if len(self._drafting) >= MEMO_ENTRIES:
                self._drafting.clear()
            drafting = self._drafting[id(shape)] = (shape, *self.drafting(shape))
        return drafting

    def step_totals(
        self, shape: DraftShape | None, decode_seqs: int, decode_context_tokens: float, chunks: Chunks = NO_CHUNKS
    ) -> tuple[float, float, float]:
        """(seconds, FLOPs, bytes moved) of one engine step, plain (``shape`` None) or speculative: what
        :meth:`plain` and :meth:`speculative` report, without the per-pass detail (the serving simulator's and the
        search's hot path). The step's passes at their padded sizes are worked out once per batch shape: the same
        decode batch comes back step after step at a growing context. Its totals are kept at the last
        ``CONTEXTS_PER_PLAN`` decode contexts asked (a run asks some again exactly).

        The step lasts its passes one after another (the first draft pass, the ``K − 1`` later ones, the verify
        pass), plus the proposer's overheads: ``t_spec + t_spec_seq · B`` and ``t_draft`` per draft pass, all
        times ``1 + f_host`` (:meth:`with_host`)."""
        if chunks.tokens:
            key = (id(shape), decode_seqs, chunks.tokens, chunks.seqs, chunks.positions, chunks.context_tokens)
        else:  # a decode step (an empty mix of chunks is no chunk)
            key = (id(shape), decode_seqs)
        plan = self._plans.get(key)
        if plan is None or plan[0] is not shape:
            if len(self._plans) >= MEMO_ENTRIES:
                self._plans.clear()
            passes, overheads_s = self._step_plan(shape, decode_seqs, chunks)
            single = passes[0] if len(passes) == 1 and not overheads_s else None  # a plain step: one target pass
            plan = self._plans[key] = (shape, passes, overheads_s, {}, single)
        priced = plan[3]  # the step's totals per decode context already asked (runs repeat some exactly)
        found = priced.get(decode_context_tokens)
        if found is not None:
            return found
        single = plan[4]
        if single is not None:  # its sums are the pass's own
            pricer, context_offset, _, model, fixed, query_tokens, launches = single
            context = decode_context_tokens + context_offset
            if pricer is None:
                seconds, flops, moved = model.totals(fixed, decode_seqs, query_tokens, context, launches)
            else:
                seconds, flops, moved = pricer(context)
            found = (seconds * self._host_factor, flops, moved)
        else:
            found = self._summed(plan[1], plan[2], decode_seqs, decode_context_tokens)
        if len(priced) >= CONTEXTS_PER_PLAN:
            priced.clear()
        priced[decode_context_tokens] = found
        self._priced_count += 1
        if self._priced_count >= PRICED_ENTRIES:  # what all plans keep, bounded
            self._plans.clear()
            self._priced_count = 0
        return found

    def _summed(
        self, passes: list, overheads_s: tuple[float, ...], decode_seqs: int, decode_context_tokens: float
    ) -> tuple[float, float, float]:
        """:meth:`step_totals` of a speculative step's ``passes`` and ``overheads_s`` (:meth:`_step_plan`) at
        ``decode_context_tokens``."""
        total = flops = moved = 0.0
        for pricer, context_offset, count, model, fixed, query_tokens, launches in passes:
            if pricer is None:
                seconds, pass_flops, pass_bytes = model.totals(
                    fixed, decode_seqs, query_tokens, decode_context_tokens + context_offset, launches
                )
            else:
                seconds, pass_flops, pass_bytes = pricer(decode_context_tokens + context_offset)
            total += seconds
            flops += pass_flops
            moved += pass_bytes
            if count > 1:
                for _ in range(count - 1):  # the later draft passes, each added in turn
                    total += seconds
                    flops += pass_flops
                    moved += pass_bytes
        for extra_s in overheads_s:
            total += extra_s
        return total * self._host_factor, flops, moved

    def _step_plan(self, shape: DraftShape | None, decode_seqs: int, chunks: Chunks) -> tuple[list, tuple]:
        """The passes of one step, in order: (its totals at a decode context, :meth:`StepModel.pass_pricer`, for a
        step of decodes alone where it binds one, else None; the context added before it; how many in a row; the
        model, its kept terms, query tokens per sequence and eager launch time or None, for
        :meth:`StepModel.totals`); and the speculative step's own overheads (seconds). A step of decodes alone comes
        back at one context after another, where a step with prefill chunks is mostly priced once: only the first
        binds a pricer."""

        def one(model: StepModel, query_tokens: int, pass_chunks: Chunks, logits: int | None, offset, count):
            mix, launches = self.pass_mix(model, decode_seqs, query_tokens, pass_chunks, logits)
            fixed = model.mix_entry(mix)
            pricer = None if chunks.tokens else model.pass_pricer(fixed, decode_seqs, query_tokens, launches)
            return (pricer, offset, count, model, fixed, query_tokens, launches)

        if shape is None:
            return [one(self.target, 1, chunks, None, 0, 1)], ()
        _, pass_tokens, verify_tokens, per_pass = self._drafting_of(shape)
        passes = []
        if pass_tokens and (decode_seqs or chunks.tokens):
            passes.append(one(self.draft_model, pass_tokens[0], chunks, decode_seqs + chunks.seqs, 0, 1))
        if pass_tokens and decode_seqs and len(pass_tokens) > 1:
            offset = decode_seqs * pass_tokens[0]
            passes.append(one(self.draft_model, pass_tokens[1], NO_CHUNKS, None, offset, len(pass_tokens) - 1))
        passes.append(one(self.target, verify_tokens, chunks, None, 0, 1))
        overheads: tuple[float, ...] = ()
        if decode_seqs:
            profile = self.profile
            overheads = (
                profile.spec_step_overhead_s + profile.spec_seq_overhead_s * decode_seqs,
                len(pass_tokens) * per_pass,
            )
        return passes, overheads

    def drafting(self, shape: DraftShape) -> tuple[tuple[int, ...], int, float]:
        """(query tokens per sequence of each draft pass, of the verify pass, the proposer's cost per draft pass)."""
        per_pass = self.profile.draft_step_overhead_s
        if shape.method in HEAD_METHODS:  # a head's proposer costs more than its one-layer roofline
            per_pass += self.profile.head_pass_overhead_s
        return shape.draft_pass_tokens(first_pass_tokens=self.first_pass_tokens(shape)), shape.verify_tokens, per_pass

    def prefill(self, prompt_tokens: int, *, speculative: bool = False) -> float:
        """Seconds to prefill one prompt alone (TTFT at no load): target, plus the draft's own prefill."""
        chunks = Chunks()
        chunks.add(prompt_tokens, 0)
        seconds = self.run_pass(self.target, chunks=chunks).total_s
        if speculative and self.draft is not None:  # n-gram lookup has nothing to prefill
            seconds += self.run_pass(self.draft_model, chunks=chunks).total_s
        return self.with_host(seconds)
