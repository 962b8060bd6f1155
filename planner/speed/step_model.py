"""One forward pass of one model over a mixed batch, per operator class, each its own roofline.

A batch holds decode sequences (each adds ``q`` new tokens at its cached context) and prefill chunks
(``c`` new prompt tokens after ``p`` cached ones). Per GPU, after tensor-parallel sharding, with
``N`` new tokens in the pass (reference: the roofline model, Williams et al., CACM 2009; per-operator
accounting as in LLM-Viewer, Yuan et al. 2024, arXiv:2402.16363)::

    weight GEMMs      max(weights read / BW,        2·P·N + 2·P_head·L  / (peak · η_gemm(N)))
    attention (KV)    max(KV of the decodes / BW,    4·h·d·Σ q·S        / (peak_attn · η_attn))
    attention (new)   max(KV of the chunks + KV written / BW,  4·h·d·Σ c·(p + (c+1)/2) / (peak_attn · η_attn))
    all-reduce        2 · layers · (t_ar + 2(tp−1)/tp · N·H·a / link) + logits gather     (tp > 1)
    sampling          L · vocab · bytes_per_logit / BW                     (L tokens need logits)
    overhead          layers · t_layer + t_step + t_seq · sequences        (launches, scheduler, inputs)

    η_gemm(N) = η_flops · N / (N + N½)       (η_flops and η_attn measured per GPU and precision; N½ is fitted)

with ``peak`` the dense peak of the GEMMs' precision, ``peak_attn`` of attention's (:func:`roofline.attention_dtype`),
and the pass takes the sum. Each operator's time is at least its FLOPs over the dense peak and its
bytes over the listed bandwidth, so a pass never runs faster than the hardware (the physics the
serving simulator and fleet quotes inherit). Plain decode, the draft's passes, the verify pass and
prefill chunks are all calls of :meth:`StepModel.forward`.

>>> from planner.catalog.lookup import get_gpu, get_kv_dtype, get_model, get_weight_format
>>> from planner.speed.profiles import speed_profile
>>> from planner.speed.roofline import model_cost
>>> h100 = get_gpu("h100-sxm-80gb")
>>> cost = model_cost(get_model("Llama-3.1-70B"), get_weight_format("bf16"), get_kv_dtype("auto"), h100, tp=4)
>>> model = StepModel(cost, h100, speed_profile("vllm", "nvidia"))
>>> one = model.forward(decode_seqs=1, decode_context_tokens=1024)
>>> big = model.forward(decode_seqs=128, decode_query_tokens=4, decode_context_tokens=128 * 1024)
>>> one.bound, big.bound, big.total_s > 2 * one.total_s
('memory', 'compute', True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from planner.catalog.schemas import GpuSpec
from planner.errors import InputError
from planner.model.kv_bytes import layer_kv_bytes_per_token
from planner.speed.kernel_efficiency import attention_flops_frac, gemm_flops_frac
from planner.speed.kernels.measured_pass import MS, MeasuredPass, measured_pass, roofline_label
from planner.speed.pass_memos import PassMemos, pass_memos
from planner.speed.profiles import SpeedProfile
from planner.speed.roofline import (
    ModelCost,
    attention_flops_per_position,
    elementwise_bytes_per_token,
    experts_touched_frac,
    peak_flops,
)
from planner.units import GB

#: The source label when a caller asked for the roofline alone (fits, comparisons).
ROOFLINE_CHOSEN = "roofline estimate: measured kernels not used"

#: Operator classes, in the order a breakdown lists them.
OPERATORS = ("weight_gemm", "elementwise", "attention_kv", "attention_new", "allreduce", "sampling", "overhead")

#: A pass's batch but for the decode context: decode sequences, query tokens each, prefill tokens, prefill chunks,
#: Σ c·(p + (c+1)/2) and Σ p of the chunks, tokens needing logits (None: the default) (:meth:`StepModel.forward`).
PassMix = tuple[int, int, int, int, float, float, int | None]


def pass_seconds(
    gemm_s: float,
    elementwise_s: float,
    kv_s: float,
    new_s: float,
    allreduce_s: float,
    sampling_s: float,
    overhead_s: float,
) -> float:
    """A pass's seconds: its operator classes run one after another (the sum, in :data:`OPERATORS` order)."""
    return gemm_s + elementwise_s + kv_s + new_s + allreduce_s + sampling_s + overhead_s


def unhidden_launches(overhead_s: float, launches_s: float, total_s: float) -> float:
    """A pass's overhead when its kernels are launched one by one (no CUDA graph): the launches run ahead of the
    GPU, so only the part of ``launches_s`` the pass's own GPU time (``total_s`` less the overhead) does not hide
    is added."""
    return overhead_s + max(0.0, launches_s - (total_s - overhead_s))


@dataclass(slots=True)
class PassTime:
    """One forward pass: seconds per operator class, and what it moved and computed per GPU."""

    weight_gemm_s: float
    #: The memory-bound elementwise kernels (fused residual-add + RMSNorm, the gated activation).
    elementwise_s: float
    attention_kv_s: float
    attention_new_s: float
    allreduce_s: float
    sampling_s: float
    overhead_s: float
    flops: float
    bytes_moved: float
    link_bytes: float
    weight_read_bytes: float
    kv_read_bytes: float
    memory_s: float
    compute_s: float
    tokens: int
    #: Where the operator times came from, in words (measured kernel tables or the roofline).
    source: str = ""

    @property
    def total_s(self) -> float:
        return pass_seconds(
            self.weight_gemm_s, self.elementwise_s, self.attention_kv_s, self.attention_new_s, self.allreduce_s,
            self.sampling_s, self.overhead_s,
        )  # fmt: skip

    @property
    def bound(self) -> str:
        return "memory" if self.memory_s >= self.compute_s else "compute"

    def breakdown(self) -> dict[str, float]:
        """Seconds per operator class (:data:`OPERATORS`)."""
        return {name: getattr(self, f"{name}_s") for name in OPERATORS}


class ForwardTime(BaseModel):
    """A pass's per-operator seconds and what it read, for reports and the assumptions panel."""

    operators_s: dict[str, float]
    total_s: float
    flops: float
    bytes_moved: float
    weight_read_bytes: float
    kv_read_bytes: float
    memory_s: float
    compute_s: float
    bound: str
    source: str = ""

    @classmethod
    def of(cls, step: PassTime) -> ForwardTime:
        kept = ("flops", "bytes_moved", "weight_read_bytes", "kv_read_bytes", "memory_s", "compute_s", "source")
        return cls(
            operators_s=step.breakdown(), total_s=step.total_s, bound=step.bound, **{k: getattr(step, k) for k in kept}
        )


class StepModel:
    """Per-GPU step times of one deployed model (target or draft) on one GPU type under one profile."""

    def __init__(
        self,
        cost: ModelCost,
        gpu: GpuSpec,
        profile: SpeedProfile,
        *,
        cuda_graphs: bool = True,
        measured_kernels: bool = True,
    ) -> None:
        arch = cost.arch
        self.cost = cost
        self.gpu = gpu
        self.profile = profile
        self.peak_flops = peak_flops(gpu, cost.compute_dtype)
        self.bandwidth = gpu.memory_bandwidth_gb_s * GB
        self.bw = self.bandwidth * profile.bandwidth_frac
        #: Of the dense peaks, what the roofline's large GEMMs and attention reach (:mod:`~.kernel_efficiency`).
        self.gemm_frac, self.gemm_frac_source = gemm_flops_frac(gpu, cost.compute_dtype, profile)
        self.attn_frac, self.attn_frac_source = attention_flops_frac(gpu, cost.attention_dtype, profile)
        self.gemm_peak = self.peak_flops * self.gemm_frac
        self.attn_peak_flops = peak_flops(gpu, cost.attention_dtype)
        self.attn_peak = self.attn_peak_flops * self.attn_frac
        self.streamed_bytes = float(sum(cost.stage_weight_bytes) - sum(cost.stage_lookup_bytes))
        self.expert_bytes = float(sum(cost.stage_expert_bytes))
        self.moe = arch.moe
        per_layer_kv = layer_kv_bytes_per_token(arch, cost.kv_element_bytes, cost.tp)
        sliding = [t == "sliding_attention" for t in arch.layer_types] if arch.sliding_window else []
        n_sliding = sum(sliding)
        self.window = arch.sliding_window
        self.kv_full_per_token = per_layer_kv * (arch.num_layers - n_sliding)
        self.kv_sliding_per_token = per_layer_kv * n_sliding
        self.kv_write_per_token = per_layer_kv * arch.num_layers
        all_layers = tuple(range(arch.num_layers))
        self.attn_per_position = attention_flops_per_position(arch, cost.tp, all_layers, sliding=False)
        self.attn_per_position_sliding = attention_flops_per_position(arch, cost.tp, all_layers, sliding=True)
        #: No sliding-window layer: decode attention's bytes and FLOPs are linear in the context (:meth:`decode_terms`).
        self._full_attention = not self.kv_sliding_per_token and (
            self.attn_per_position_sliding == 0.0 or not self.window
        )
        self.matmul_flops_per_token = 2 * cost.matmul_params_per_gpu
        self.head_flops_per_logit = 2 * cost.lm_head_params_per_gpu
        self.hidden_bytes_per_token = arch.hidden_size * cost.activation_bytes
        self.elementwise_bytes_per_token = elementwise_bytes_per_token(arch, cost.tp, cost.activation_bytes)
        self.vocab = arch.vocab_size
        self.layers = arch.num_layers
        per_layer = (
            profile.layer_overhead_s if (cuda_graphs and profile.cuda_graphs) else profile.eager_layer_overhead_s
        )
        self.fixed_overhead_s = self.layers * per_layer + profile.step_overhead_s
        if cost.tp > 1:
            self.fixed_overhead_s += profile.tp_step_overhead_s
        self.tp = cost.tp
        self.pp = cost.pp
        link = gpu.scale_up_bandwidth_gb_s * GB / 2 * profile.link_frac
        if (cost.tp > 1 or cost.pp > 1) and link <= 0:
            raise InputError("gpu", gpu.id, "a GPU with a scale-up link for tensor or pipeline parallelism > 1")
        self.link = link
        self.ring = 2 * (cost.tp - 1) / cost.tp if cost.tp > 1 else 0.0
        engine, graphs = profile.engine, cuda_graphs and profile.cuda_graphs
        self.measured: MeasuredPass | None = None
        if measured_kernels:
            self.measured = measured_pass(cost, gpu.id, engine, cuda_graphs=graphs, hbm_bytes_per_s=self.bandwidth)
        self._source: tuple[int, str] = (0, "")
        if self.measured is not None:
            self._roofline_label = ""  # not shown: the measured tables' label is
        else:
            self._roofline_label = roofline_label(gpu.id, engine) if measured_kernels else ROOFLINE_CHOSEN
        if self.measured is not None:
            self.fixed_overhead_s = self.layers * profile.measured_layer_overhead_s + profile.step_overhead_s
            if cost.tp > 1:
                self.fixed_overhead_s += profile.tp_step_overhead_s
        # every step model of this configuration prices a mix the same way: they share what they priced
        configuration = (cost.model_dump_json(), gpu.model_dump_json(), profile.model_dump_json(), graphs)
        self._memos = pass_memos((*configuration, measured_kernels, self.measured.tables if self.measured else None))
        self._mixes = self._memos.mixes

    @property
    def source(self) -> str:
        """Where this model's step times come from, in words users understand."""
        measured = self.measured
        if measured is None:
            return self._roofline_label
        fallbacks = measured.fallbacks
        if not fallbacks:
            return measured.label
        if self._source[0] != len(fallbacks):  # operators are only ever added to the fallbacks
            self._source = (len(fallbacks), f"{measured.label}; roofline for " + ", ".join(sorted(fallbacks)))
        return self._source[1]

    def _kv_bytes(self, seqs: float, context_sum: float) -> float:
        if not self.kv_sliding_per_token:
            return self.kv_full_per_token * context_sum
        mean = context_sum / seqs if seqs else 0.0
        kept = min(mean, self.window) if self.window else mean
        return self.kv_full_per_token * context_sum + self.kv_sliding_per_token * seqs * kept

    def _attn_flops(self, positions: float, seqs: float, context_sum: float) -> float:
        """Attention FLOPs over ``positions`` query-key pairs per layer-set, sliding layers capped."""
        if self.attn_per_position_sliding == 0.0 or not self.window:
            return self.attn_per_position * positions
        mean = context_sum / seqs if seqs else 0.0
        capped = positions * min(1.0, self.window / mean) if mean > 0 else positions
        return self.attn_per_position * positions + self.attn_per_position_sliding * capped

    def forward(
        self,
        *,
        decode_seqs: int = 0,
        decode_query_tokens: int = 1,
        decode_context_tokens: float = 0.0,
        prefill_tokens: int = 0,
        prefill_seqs: int = 0,
        prefill_positions: float = 0.0,
        prefill_context_tokens: float = 0.0,
        logits_tokens: int | None = None,
    ) -> PassTime:
        """Seconds of one pass over ``decode_seqs`` × ``decode_query_tokens`` plus ``prefill_tokens``.

        ``decode_context_tokens`` is the summed cached context of the decode sequences;
        ``prefill_positions`` Σ c·(p + (c+1)/2) over the prefill chunks (causal attention within a chunk)
        and ``prefill_context_tokens`` Σ p; ``logits_tokens`` (default: every decode token plus one per
        prefill chunk) how many tokens need logits.

        The pass is priced in three parts, each by its own formula: what depends only on the pass's token and
        logit counts (weight GEMMs, KV writes, all-reduces, sampling: :meth:`token_terms`, kept per count since
        an engine runs the same counts step after step), the decode sequences' attention over their context
        (:meth:`decode_terms`) and the prefill chunks' attention (:meth:`prefill_terms`, kept per chunk mix).
        """
        mix = (
            decode_seqs,
            decode_query_tokens,
            prefill_tokens,
            prefill_seqs,
            prefill_positions,
            prefill_context_tokens,
            logits_tokens,
        )
        return self.priced(mix, decode_context_tokens)

    def priced(self, mix: PassMix, decode_context_tokens: float) -> PassTime:
        """:meth:`forward` of the pass ``mix`` (its arguments but the decode context, in their order) at
        ``decode_context_tokens``: the terms that do not depend on the context are kept per mix."""
        fixed = self.mix_entry(mix)
        (tokens, weights, gemm_flops, gemm_mem, gemm_cmp, gemm_s, written, comm, comm_bytes, sample_bytes, sampling,
         elementwise_bytes, elementwise_s, prefix_read, new_flops, new_mem, new_cmp, new_s,
         overhead) = fixed  # fmt: skip
        kv_read, kv_flops, kv_mem, kv_cmp, kv_s = self.decode_terms(mix[0], mix[1], decode_context_tokens)
        return PassTime(
            gemm_s,
            elementwise_s,
            kv_s,
            new_s,
            comm,
            sampling,
            overhead,
            gemm_flops + kv_flops + new_flops,
            weights + kv_read + prefix_read + written + sample_bytes + elementwise_bytes,
            comm_bytes,
            weights,
            kv_read,
            gemm_mem + elementwise_s + kv_mem + new_mem + sampling,
            gemm_cmp + kv_cmp + new_cmp,
            tokens,
            self.source,
        )

    def mix_entry(self, mix: PassMix) -> tuple:
        """The kept terms of ``mix`` that do not depend on the decode context (priced the first time), with the
        operators their pricing left to the roofline recorded on this model."""
        entry = self._mixes.get(mix)
        if entry is None:
            priced: set[str] = set()
            entry = PassMemos.kept(self._mixes, mix, self.mix_terms(mix, priced), priced)
        fixed, notes = entry
        if notes:
            self.measured.fallbacks.update(notes)
        return fixed

    def totals(
        self, fixed: tuple, seqs: int, query_tokens: int, decode_context_tokens: float, launches_s: float | None
    ) -> tuple[float, float, float]:
        """(seconds, FLOPs, bytes moved) of :meth:`priced`'s pass from its kept terms ``fixed``
        (:meth:`mix_entry`) at ``decode_context_tokens``, without the per-operator detail: what a serving run
        sums step after step. ``launches_s``: the eager launch time a pass run without CUDA graphs may not hide
        (:meth:`planner.speed.engine_step.EngineStep.run_pass`), None under a graph."""
        (_, weights, gemm_flops, _, _, gemm_s, written, comm, _, sample_bytes, sampling,
         elementwise_bytes, elementwise_s, prefix_read, new_flops, _, _, new_s, overhead) = fixed  # fmt: skip
        kv_read, kv_flops, _, _, kv_s = self.decode_terms(seqs, query_tokens, decode_context_tokens)
        if launches_s is not None:
            overhead = unhidden_launches(
                overhead, launches_s, pass_seconds(gemm_s, elementwise_s, kv_s, new_s, comm, sampling, overhead)
            )
        return (
            pass_seconds(gemm_s, elementwise_s, kv_s, new_s, comm, sampling, overhead),
            gemm_flops + kv_flops + new_flops,
            weights + kv_read + prefix_read + written + sample_bytes + elementwise_bytes,
        )

    def pass_pricer(
        self, fixed: tuple, seqs: int, query_tokens: int, launches_s: float | None
    ) -> Callable[[float], tuple[float, float, float]] | None:
        """:meth:`totals` of one pass (its kept terms ``fixed``, ``seqs`` decodes of ``query_tokens`` each) as a
        function of the decode context alone, for a step plan that prices its passes at one context after another:
        the same sums in the same order, what does not move with the context bound once, with the lookup along the
        measured decode kernel's line at that batch (:meth:`MeasuredPass.decode_along_context`) done here; at a
        context past that line, :meth:`totals` itself. None where there is no such line to bind (no decodes, a
        sliding-window model, a pass without CUDA graphs, decode attention left to the roofline): the caller asks
        :meth:`totals`.

        >>> from planner.catalog.lookup import get_model, get_node
        >>> from planner.deployment import Deployment
        >>> from planner.speed.engine_step import EngineStep
        >>> model = EngineStep(Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"))).target
        >>> fixed = model.mix_entry((32, 1, 0, 0, 0.0, 0.0, None))  # 32 decodes of one token, no prefill
        >>> model.pass_pricer(fixed, 32, 1, None)(32 * 700.0) == model.totals(fixed, 32, 1, 32 * 700.0, None)
        True
        """

        measured = self.measured
        if not seqs or launches_s is not None or not self._full_attention or measured is None:
            return None
        along = measured.decode_along_context(seqs) if measured.attention_covered else None
        if along is None:
            return None
        (_, weights, gemm_flops, _, _, gemm_s, written, comm, _, sample_bytes, sampling,
         elementwise_bytes, elementwise_s, prefix_read, new_flops, _, _, new_s, overhead) = fixed  # fmt: skip
        q = query_tokens
        new_positions = seqs * q * (q + 1) / 2  # :meth:`decode_terms`' positions of the new query tokens
        kv_per_token, attn_per_position = self.kv_full_per_token, self.attn_per_position
        attn_peak, bandwidth, layers = self.attn_peak, self.bandwidth, self.layers
        gemm_and_elementwise_s = gemm_s + elementwise_s  # pass_seconds' first sum

        def priced(context: float) -> tuple[float, float, float]:
            mean = context / seqs
            ms = along(mean if mean > 1.0 else 1.0)  # max(1, mean), as decode_attention_s
            if ms is None:  # past the measured line: the roofline, and the fallback recorded
                return self.totals(fixed, seqs, query_tokens, context, launches_s)
            kv_read = kv_per_token * context
            kv_flops = attn_per_position * (context * q + new_positions)
            # never faster than the data-sheet peaks: decode_terms' max, in its order (comparisons cost less)
            kv_s = ms * layers * MS
            kv_cmp = kv_flops / attn_peak
            kv_s = kv_cmp if kv_cmp > kv_s else kv_s
            floor = kv_read / bandwidth
            kv_s = floor if floor > kv_s else kv_s
            return (
                gemm_and_elementwise_s + kv_s + new_s + comm + sampling + overhead,
                gemm_flops + kv_flops + new_flops,
                weights + kv_read + prefix_read + written + sample_bytes + elementwise_bytes,
            )

        return priced

    def mix_terms(self, mix: PassMix, notes: set[str]) -> tuple:
        """Everything of a pass of ``mix`` but its decode attention: the token terms (:meth:`token_terms`), the
        prefill chunks' attention with the pass's KV writes, and the launch and scheduling overhead (operators
        left to the roofline are added to ``notes``)."""
        decode_seqs, decode_query_tokens, prefill_tokens, prefill_seqs, positions, context_sum, logits_tokens = mix
        decode_tokens = decode_seqs * decode_query_tokens
        tokens = decode_tokens + prefill_tokens
        if tokens <= 0:
            raise InputError("batch_size", tokens, "at least one sequence with at least one token in a forward pass")
        logits = decode_tokens + prefill_seqs if logits_tokens is None else logits_tokens
        memos = self._memos
        entry = memos.tokens.get((tokens, logits))
        if entry is None:
            priced: set[str] = set()
            entry = memos.kept(memos.tokens, (tokens, logits), self.token_terms(tokens, logits, priced), priced)
        terms, token_notes = entry
        written = terms[5]
        chunk_key = (prefill_seqs, prefill_tokens, positions, context_sum)
        entry = memos.chunks.get(chunk_key)
        if entry is None:
            priced = set()
            entry = memos.kept(memos.chunks, chunk_key, self.prefill_terms(*chunk_key, priced), priced)
        chunk_terms, chunk_notes = entry
        if token_notes or chunk_notes:
            notes |= token_notes | chunk_notes
        prefix_read, new_flops, new_cmp, measured_new, edge_new = chunk_terms
        # attention of the prefill chunks (over their cached prefix and themselves) and every KV write
        new_mem = (prefix_read + written) / self.bw
        new_s = max(new_mem, new_cmp)
        if measured_new is not None:  # measured kernels where covered, never faster than the data-sheet peaks
            floor = max(new_flops / self.attn_peak_flops, (prefix_read + written) / self.bandwidth)
            new_s = max(measured_new + written / self.bw, floor)
        elif self.measured is not None and self.measured.attention_covered:  # past the grid: its kernel's own rate,
            rate = self.measured.prefill_positions_per_s()  # never below the kernel measured at the grid's edge
            kernel = new_flops / (rate * self.attn_per_position / self.layers) if rate else new_cmp
            edge = edge_new + written / self.bw if edge_new else 0.0
            new_s = max(new_mem, kernel, new_flops / self.attn_peak_flops, edge)
        overhead = self.fixed_overhead_s + self.profile.seq_overhead_s * (decode_seqs + prefill_seqs)
        return (tokens, *terms, prefix_read, new_flops, new_mem, new_cmp, new_s, overhead)

    def token_terms(self, tokens: int, logits: int, notes: set[str] | None = None) -> tuple[float, ...]:
        """What a pass over ``tokens`` new tokens, ``logits`` of them needing logits, costs whatever its attention:
        (weights read, GEMM FLOPs, GEMM memory s, GEMM compute s, GEMM s, KV bytes written, all-reduce s,
        link bytes, sampled bytes, sampling s, elementwise bytes, elementwise s). Kept per (tokens, logits) for the
        next pass of the same size, from the parts kept per token count (:meth:`count_terms`) and per logits count
        (:meth:`logit_terms`): a pass's weight GEMMs, with the LM head's, are never faster than the data-sheet
        peaks; its all-reduces are the measured kernels' where covered."""
        memos = self._memos
        entry = memos.counts.get(tokens)
        if entry is None:
            priced: set[str] = set()
            entry = memos.kept(memos.counts, tokens, self.count_terms(tokens, priced), priced)
        (weights, token_flops, efficiency, gemm_mem, written, message, message_comm, stage_comm, elementwise_bytes,
         elementwise_s, weights_ms, allreduce_s), count_notes = entry  # fmt: skip
        entry = memos.logits.get(logits)
        if entry is None:
            priced = set()
            entry = memos.kept(memos.logits, logits, self.logit_terms(logits, priced), priced)
        (head_flops, gather, gather_comm, sample_bytes, sampling, head_ms), head_notes = entry
        gemm_flops = token_flops + head_flops
        gemm_cmp = gemm_flops / (self.gemm_peak * efficiency)
        gemm_s = max(gemm_mem, gemm_cmp)
        # tensor-parallel all-reduces (2 per layer), the logits gather, pipeline hand-offs
        comm = 0.0
        comm_bytes = 0.0
        if self.tp > 1:
            comm = message_comm
            comm += gather_comm
            comm_bytes = self.ring * (2 * self.layers * message + gather)
        if self.pp > 1:
            comm += stage_comm
        if self.measured is not None:  # measured kernels where covered, never faster than the data-sheet peaks
            found = self.measured.fallbacks if notes is None else notes
            found |= count_notes
            if weights_ms is not None and logits:
                found |= head_notes  # the LM head is looked up only when the other GEMMs were measured
            t = self.measured.summed_gemms_s(weights_ms, head_ms, logits)
            if t is not None:
                gemm_s = max(t, gemm_flops / self.peak_flops, weights / self.bandwidth)
            if allreduce_s is not None:
                comm += allreduce_s - message_comm
        return (
            weights, gemm_flops, gemm_mem, gemm_cmp, gemm_s, written, comm, comm_bytes, sample_bytes, sampling,
            elementwise_bytes, elementwise_s,
        )  # fmt: skip

    def count_terms(self, tokens: int, notes: set[str]) -> tuple:
        """The parts of :meth:`token_terms` that depend on the token count alone: (weights read, GEMM FLOPs but the
        LM head's, GEMM efficiency, GEMM memory s, KV bytes written, all-reduce message bytes, the all-reduces' s,
        pipeline hand-off s, elementwise bytes, elementwise s, measured weight GEMMs but the LM head in ms or None,
        measured all-reduces s or None)."""
        bw, profile = self.bw, self.profile
        # weight GEMMs (routed experts only in the share the batch touches)
        weights = self.streamed_bytes
        if self.moe is not None and self.expert_bytes:
            touched = experts_touched_frac(tokens, self.moe.num_experts, self.moe.experts_per_token)
            weights -= self.expert_bytes * (1 - touched)
        token_flops = self.matmul_flops_per_token * tokens
        efficiency = tokens / (tokens + profile.gemm_half_tokens)
        gemm_mem = weights / bw
        written = self.kv_write_per_token * tokens
        message = tokens * self.hidden_bytes_per_token
        message_comm = 0.0
        if self.tp > 1:
            message_comm = 2 * self.layers * (profile.allreduce_latency_s + self.ring * message / self.link)
        stage_comm = 0.0
        if self.pp > 1:
            stage_comm = (self.pp - 1) * (profile.allreduce_latency_s + message / self.link)
        # the memory-bound elementwise kernels: norms and the gated activation over every new token
        elementwise_bytes = self.elementwise_bytes_per_token * tokens
        elementwise_s = elementwise_bytes / bw
        measured = self.measured
        weights_ms = allreduce_s = None
        if measured is not None:
            weights_ms = measured.weight_gemms_ms(tokens, notes)
            allreduce_s = measured.allreduce_s(tokens, notes) if self.tp > 1 else None
        return (
            weights, token_flops, efficiency, gemm_mem, written, message, message_comm, stage_comm,
            elementwise_bytes, elementwise_s, weights_ms, allreduce_s,
        )  # fmt: skip

    def logit_terms(self, logits: int, notes: set[str]) -> tuple:
        """The parts of :meth:`token_terms` that depend on the logits count alone: (LM head FLOPs, gathered logits
        bytes, the gather's s, sampled bytes, sampling s, measured LM head ms or None)."""
        profile = self.profile
        head_flops = self.head_flops_per_logit * logits
        gather = gather_comm = 0.0
        if self.tp > 1:
            gather = logits * self.vocab * self.cost.activation_bytes / 2
            gather_comm = profile.allreduce_latency_s + self.ring * gather / self.link
        # sampling (softmax, penalties, top-p; rejection sampling reads the same logits)
        sample_bytes = logits * self.vocab * profile.sampling_bytes_per_logit
        sampling = sample_bytes / self.bw
        head_ms = self.measured.lm_head_ms(logits, notes) if self.measured is not None and logits else None
        return head_flops, gather, gather_comm, sample_bytes, sampling, head_ms

    def decode_terms(
        self, seqs: int, query_tokens: int, context_sum: float
    ) -> tuple[float, float, float, float, float]:
        """Attention of ``seqs`` decode sequences of ``query_tokens`` each over ``context_sum`` cached tokens in all:
        (KV bytes read, FLOPs, memory s, compute s, seconds)."""
        if not seqs:
            return 0.0, 0.0, 0.0, 0.0, 0.0
        q = query_tokens
        kv_positions = context_sum * q + seqs * q * (q + 1) / 2
        if self._full_attention:  # what _kv_bytes and _attn_flops give without sliding layers, without their calls
            kv_read = self.kv_full_per_token * context_sum
            kv_flops = self.attn_per_position * kv_positions
        else:
            kv_read = self._kv_bytes(seqs, context_sum)
            kv_flops = self._attn_flops(kv_positions, seqs, context_sum)
        kv_mem = kv_read / self.bw
        kv_cmp = kv_flops / self.attn_peak
        measured = self.measured
        t = measured.decode_attention_s(seqs, context_sum) if measured is not None else None
        if t is not None:  # K+1 query tokens share one read of the context; their extra FLOPs by roofline
            return kv_read, kv_flops, kv_mem, kv_cmp, max(t, kv_cmp, kv_read / self.bandwidth)
        past = measured.decode_past_grid_s(seqs, context_sum, kv_read) if measured is not None else None
        memory = kv_mem if past is None else max(past, kv_read / self.bandwidth)
        return kv_read, kv_flops, kv_mem, kv_cmp, max(memory, kv_cmp)

    def prefill_terms(
        self, seqs: int, tokens: int, positions: float, context_sum: float, notes: set[str] | None = None
    ) -> tuple[float, float, float, float | None, float | None]:
        """Attention of ``seqs`` prefill chunks (``tokens`` new tokens in all, Σ c·(p + (c+1)/2) ``positions`` after
        Σ p ``context_sum`` cached ones), before the pass's KV writes: (prefix KV bytes read, FLOPs, compute s,
        measured kernel s or None, and where that is None past the measured grid, the kernel measured at its edge
        (:meth:`planner.speed.kernels.measured_pass.MeasuredPass.prefill_floor_s`) or None). Kept per chunk mix
        (prompts of one length split the same way)."""
        prefix_read = self._kv_bytes(seqs, context_sum) if seqs else 0.0
        new_flops = self._attn_flops(positions, seqs, context_sum) if seqs else 0.0
        new_cmp = new_flops / self.attn_peak
        measured = self.measured
        t = measured.prefill_attention_s(seqs, tokens, context_sum, notes) if measured is not None else None
        edge = measured.prefill_floor_s(seqs, tokens, context_sum) if measured is not None and t is None else None
        return prefix_read, new_flops, new_cmp, t, edge

    def decode(self, batch: int, query_tokens: int, context_tokens: float, logits_tokens: int | None = None):
        """``batch`` sequences each adding ``query_tokens`` at ``context_tokens`` cached (mean)."""
        return self.forward(
            decode_seqs=batch,
            decode_query_tokens=query_tokens,
            decode_context_tokens=batch * context_tokens,
            logits_tokens=logits_tokens,
        )

    def prefill(self, prompt_tokens: int, context_tokens: int = 0, seqs: int = 1) -> PassTime:
        """``seqs`` prefill chunks of ``prompt_tokens`` each after ``context_tokens`` cached ones."""
        return self.forward(
            prefill_tokens=seqs * prompt_tokens,
            prefill_seqs=seqs,
            prefill_positions=seqs * prompt_tokens * (context_tokens + (prompt_tokens + 1) / 2),
            prefill_context_tokens=seqs * context_tokens,
        )
