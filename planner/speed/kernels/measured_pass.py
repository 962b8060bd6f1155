"""A forward pass's operators priced from measured kernel tables, per GPU, per layer × layers.

For a dense decoder layer sharded ``tp`` ways (Megatron-style column / row parallel; heads ``H``, KV heads
``G``, head size ``d``, hidden ``h``, MLP width ``I``) a pass over ``m`` new tokens runs, per layer::

    GEMMs       qkv (m × h → (H+2G)·d/tp), out (m × H·d/tp → h), gate+up (m × h → 2I/tp), down (m × I/tp → h)
    attention   decode: the measured decode kernel at (sequences, mean context); prefill: the measured
                context kernel at (chunks, prefix + chunk) scaled by ((p+c)² − p²)/(p+c)², aiconfigurator's
                prefix correction (only the chunk's rows of the causal square are new)
    all-reduce  2 per layer of m·h bf16 values over tp GPUs (the engine's custom all-reduce)

plus the LM head (logits × h → vocab/tp) once. Parameters the four shapes do not hold (an EAGLE head's
fc over fused hidden states, biases) are one more GEMM of that size into ``h``. A GEMM wider or taller
than the table's largest measured ``n`` or ``m`` is priced as equal slices (column / row split of the same
product), one narrower than the narrowest measured as padded to it, never extrapolated. MoE layers: attention,
router and shared-expert GEMMs as above, the routed experts from the measured MoE table at the model's exact
expert shape (hidden, expert width, top-k, experts) and TP, tokens routed evenly. Anything not covered (a
dtype the GPU has no table for, MLA, MoE experts of a shape not measured, sliding-window or chunked attention,
a shape outside the grid) answers ``None`` and is named in :attr:`MeasuredPass.fallbacks`; the step model then
uses its roofline for that operator.

>>> from planner.catalog.lookup import get_gpu, get_kv_dtype, get_model, get_weight_format
>>> from planner.speed.roofline import model_cost
>>> h100 = get_gpu("h100-sxm-80gb")
>>> cost = model_cost(get_model("Llama-3.1-70B"), get_weight_format("bf16"), get_kv_dtype("auto"), h100, tp=4)
>>> measured = measured_pass(cost, "h100-sxm-80gb", "vllm")
>>> measured is None or 0.005 < measured.gemm_s(1, 1) < 0.05
True
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from math import ceil, nan

import numpy as np

from planner.facts import data_cache
from planner.speed.kernels.aiconfigurator_tables import KV_DTYPES, KernelTables, coverage_reason, kernel_tables
from planner.speed.kernels.grid import Grid, sliced
from planner.speed.roofline import ModelCost

MS = 1e-3


def gemm_dtype(weight_format: str, compute_dtype: str) -> str | None:
    """The table dtype whose kernels run ``weight_format`` weights, or None (no measured kernel reads them).

    >>> gemm_dtype("fp8", "fp8"), gemm_dtype("fp8", "bf16"), gemm_dtype("int4-awq", "fp16")
    ('fp8', None, 'int4')
    """
    if weight_format in ("bf16", "fp16"):
        return "bf16"
    if weight_format == "fp8" and compute_dtype == "fp8":
        return "fp8"
    if weight_format == "nvfp4" and compute_dtype == "fp4":
        return "nvfp4"
    if weight_format in ("int4-awq", "int4-gptq"):
        return "int4"
    return None


def moe_dtype(weight_format: str) -> str | None:
    """The MoE table dtype of ``weight_format`` experts, or None.

    >>> moe_dtype("mxfp4"), moe_dtype("bf16"), moe_dtype("int8")
    ('w4a16_mxfp4', 'bfloat16', None)
    """
    return {
        "bf16": "bfloat16",
        "fp16": "bfloat16",
        "fp8": "fp8",
        "nvfp4": "nvfp4",
        "mxfp4": "w4a16_mxfp4",
        "int4-awq": "int4_wo",
        "int4-gptq": "int4_wo",
    }.get(weight_format)


class MeasuredPass:
    """Seconds of one model's operators on one GPU from the measured tables (None where not covered)."""

    def __init__(
        self, cost: ModelCost, tables: KernelTables, *, cuda_graphs: bool = True, hbm_bytes_per_s: float | None = None
    ) -> None:
        arch = cost.arch
        tp = cost.tp
        self.tables = tables
        #: The GPU's listed memory bandwidth: no measured rate above it is taken to come from HBM.
        self.hbm_bytes_per_s = hbm_bytes_per_s
        self.label = tables.label
        self.cuda_graphs = cuda_graphs
        self.tp = tp
        self.layers = arch.num_layers
        self.hidden = arch.hidden_size
        self.dtype = gemm_dtype(cost.weight_format, cost.compute_dtype)
        self.heads = arch.num_attention_heads // tp if arch.num_attention_heads % tp == 0 else None
        self.kv_heads = max(1, arch.num_kv_heads // tp)
        self.head_dim = arch.head_dim
        self.kv_dtype = KV_DTYPES.get(cost.kv_element_bytes, "")
        #: KV-cache bytes one cached token adds per layer on one GPU (K and V of its KV heads).
        self.kv_bytes_per_token_layer = 2 * self.kv_heads * self.head_dim * cost.kv_element_bytes
        self.fallbacks: set[str] = set()
        self._layer: Grid | bool | None = None
        self._decode_lines: dict[int, Grid | None] = {}
        #: Per logits count: the LM head GEMM's milliseconds (None: not measured).
        self._heads: dict[int, float | None] = {}
        #: Per batch: its decode line's lookup along the context (``Grid.at_x``), or None.
        self._decode_at: dict[int, Callable[[float], float | None] | None] = {}
        #: Per attention table and batch: the measured lines that bound it below past the grid (:meth:`edge_ms`).
        self._edge_lines: dict[tuple[str, int], tuple[Grid, ...]] = {}
        h, d = arch.hidden_size, arch.head_dim
        q_out = arch.num_attention_heads * d // tp
        kv_out = 2 * arch.num_kv_heads * d // tp if arch.num_kv_heads >= tp else 2 * d
        inter = arch.intermediate_size // tp
        moe = arch.moe
        moe_layers = len(moe.moe_layers) if moe else 0
        dense_layers = self.layers - moe_layers
        #: (n, k, layers that run it) of every weight GEMM outside the LM head and the routed experts.
        self.shapes: list[tuple[int, int, int]] = [(q_out + kv_out, h, self.layers), (h, q_out, self.layers)]
        if inter and dense_layers:
            self.shapes += [(2 * inter, h, dense_layers), (h, inter, dense_layers)]
        self.scale = 1.0
        self.moe = None
        if moe is not None:  # router and shared experts as GEMMs; the routed experts from the MoE table
            shared = moe.shared_intermediate_size // tp
            self.shapes.append((moe.num_experts, h, moe_layers))
            if shared:
                self.shapes += [(2 * shared, h, moe_layers), (h, shared, moe_layers)]
            self.moe = (moe_dtype(cost.weight_format), h, moe.expert_intermediate_size, moe.experts_per_token)
            self.moe += (moe.num_experts, tp, moe_layers)
            if self.dtype is None and cost.weight_format == "mxfp4":  # MXFP4 quantizes the experts only
                self.dtype = "bf16"
        else:
            shaped = sum(n * k * count for n, k, count in self.shapes)
            leftover = cost.matmul_params_per_gpu - shaped
            if leftover > 0.01 * shaped:  # a head's fc over fused hidden states, biases: one more GEMM into h
                self.shapes.append((h, round(leftover / self.layers / h), self.layers))
            elif leftover < 0:  # an ungated MLP holds fewer weights than the gated shapes
                self.scale = cost.matmul_params_per_gpu / shaped
        self.lm_head_n = round(cost.lm_head_params_per_gpu / h)
        self.gemm_covered = arch.mla is None and self.dtype is not None
        if not self.gemm_covered:
            self.fallbacks.add(f"weight GEMMs ({cost.weight_format} weights or MLA layers have no table)")
        self.attention_covered = (
            arch.mla is None
            and arch.sliding_window is None
            and arch.attention_chunk_size is None
            and self.heads is not None
            and bool(self.kv_dtype)
        )
        if not self.attention_covered:
            self.fallbacks.add("attention (MLA, sliding or chunked windows, or an uneven head split)")

    def _gemm_ms(self, m: float, n: int, k: int) -> float | None:
        """One GEMM, sliced along n or m where it is larger than the table's largest measured size."""
        grid = self.tables.gemm_grid(self.dtype)
        if grid is None:
            return None
        max_m, max_n, max_k = grid.axes[0][-1], grid.axes[1][-1], grid.axes[2][-1]
        if k > max_k:
            return None
        n_parts, m_parts = ceil(n / max_n), ceil(m / max_m)
        # narrower than the narrowest measured shape (a router's few experts): priced padded to it, an upper bound
        n_one, k_one = max(n / n_parts, grid.axes[1][0]), max(k, grid.axes[2][0])
        one = grid.at((m / m_parts, n_one, k_one))
        return None if one is None else one * n_parts * m_parts

    def _layer_line(self) -> Grid | None:
        """Every layer's GEMMs at every measured ``m`` (exactly the trilinear value: it is linear in m), up to the
        first ``m`` at which a shape was not measured (the largest ``m`` of a wide GEMM often was not): a pass past
        that is priced as equal row slices, as for a GEMM past the table's largest ``m``."""
        if self._layer is None:
            key = ("layer GEMMs", self.dtype, tuple(self.shapes))
            self._layer = self.tables.derived(key, self._build_layer_line)
        return self._layer or None

    def _head_line(self) -> Grid | None:
        """The LM head GEMM at every measured ``m`` (:meth:`_gemm_ms`; NaN where a shape around it was not measured):
        linear in m between them, as the trilinear value is, so a logits count is one lookup along it."""
        key = ("LM head line", self.dtype, self.lm_head_n, self.hidden)
        return self.tables.derived(key, self._build_head_line)

    def _build_head_line(self) -> Grid | None:
        grid = self.tables.gemm_grid(self.dtype)
        if grid is None:
            return None
        times = [self._gemm_ms(m, self.lm_head_n, self.hidden) for m in grid.axes[0]]
        return Grid((grid.axes[0],), np.array([nan if t is None else t for t in times]))

    def _build_layer_line(self) -> Grid | bool:
        grid = self.tables.gemm_grid(self.dtype)
        points = []
        for m in grid.axes[0] if grid is not None else ():
            times = [self._gemm_ms(m, n, k) for n, k, _ in self.shapes]
            if any(t is None for t in times):
                break
            points.append((m, sum(t * count for t, (_, _, count) in zip(times, self.shapes, strict=True))))
        return Grid.build(points) if len(points) > 1 else False

    def gemm_s(self, tokens: int, logits: int, notes: set[str] | None = None) -> float | None:
        """Weight GEMMs of a pass over ``tokens`` new tokens, ``logits`` of them through the LM head (an operator
        left to the roofline is named in ``notes``, by default :attr:`fallbacks`; likewise below): its
        :meth:`weight_gemms_ms` and, where it has logits, its :meth:`lm_head_ms`."""
        notes = self.fallbacks if notes is None else notes
        weights_ms = self.weight_gemms_ms(tokens, notes)
        head_ms = self.lm_head_ms(logits, notes) if weights_ms is not None and logits else None
        return self.summed_gemms_s(weights_ms, head_ms, logits)

    @staticmethod
    def summed_gemms_s(weights_ms: float | None, head_ms: float | None, logits: int) -> float | None:
        """A pass's weight GEMMs in seconds from :meth:`weight_gemms_ms` and, with ``logits``, :meth:`lm_head_ms`
        (None where either was not measured).

        >>> MeasuredPass.summed_gemms_s(2.0, 0.5, 8), MeasuredPass.summed_gemms_s(2.0, None, 0)
        (0.0025, 0.002)
        """
        if weights_ms is None:
            return None
        if not logits:
            return weights_ms * MS
        return None if head_ms is None else (weights_ms + head_ms) * MS

    def weight_gemms_ms(self, tokens: int, notes: set[str]) -> float | None:
        """Milliseconds of every weight GEMM but the LM head (routed experts included) of a pass over ``tokens``."""
        if not self.gemm_covered:
            return None
        line = self._layer_line()
        if line is None:
            notes.add(f"weight GEMMs ({self.dtype} has no table here, or a shape past it)")
            return None
        total = sliced(line, tokens) * self.scale
        if self.moe is not None:
            dtype, h, inter, topk, experts, tp, moe_layers = self.moe
            grid = self.tables.moe_grid(dtype, h, inter, topk, experts, tp) if dtype else None
            routed = sliced(grid, tokens) if grid is not None else None
            if routed is None:
                notes.add("MoE experts (no measured table for this expert shape, precision or TP)")
                return None
            total += routed * moe_layers
        return total

    def lm_head_ms(self, logits: int, notes: set[str]) -> float | None:
        """Milliseconds of the LM head GEMM over ``logits`` tokens (kept per model; the tables keep it across
        models)."""
        head = self._heads.get(logits, -1.0)
        if head == -1.0:  # not priced yet
            line = self._head_line()
            head = self._heads[logits] = sliced(line, logits) if line is not None else None
        if head is None:
            notes.add("LM head GEMM")
        return head

    def decode_attention_s(self, seqs: int, context_sum: float) -> float | None:
        """Reading the cached context of ``seqs`` decoding sequences once (all layers)."""
        if not self.attention_covered or seqs <= 0:
            return None if seqs > 0 else 0.0
        along_context = self.decode_along_context(seqs)
        ms = along_context(max(1.0, context_sum / seqs)) if along_context is not None else None
        if ms is None:
            self.fallbacks.add("decode attention (a batch or context past the measured grid, no less than its edge)")
            return None
        return ms * self.layers * MS

    def decode_floor_s(self, seqs: int, context_sum: float) -> float | None:
        """A lower bound on reading the cached context of ``seqs`` sequences where the measured grid does not reach
        (:meth:`decode_attention_s` None): :meth:`edge_ms` of the decode kernel at their mean context, all layers.
        None where the grid holds no such shape (or no grid)."""
        if not self.attention_covered or seqs <= 0:
            return None
        ms = self.edge_ms("generation_attention", seqs, max(1.0, context_sum / seqs))
        return None if ms is None else ms * self.layers * MS

    def decode_past_grid_s(self, seqs: int, context_sum: float, kv_read_bytes: float) -> float | None:
        """Decode attention where the measured grid does not reach: ``kv_read_bytes`` (all layers, one GPU) read at
        :meth:`decode_bandwidth`, never below :meth:`decode_floor_s`; None without a measured grid."""
        bandwidth = self.decode_bandwidth()
        floor = self.decode_floor_s(seqs, context_sum)
        read = kv_read_bytes / bandwidth if bandwidth else None
        if read is None or floor is None:
            return read if floor is None else floor
        return read if read > floor else floor

    def decode_bandwidth(self) -> float | None:
        """The most KV-cache bytes per second the measured decode kernel reads anywhere on its grid (this head split
        and KV dtype), or None (no grid): past the grid the kernel is priced at it, not at the vendor's streaming
        fraction of the data-sheet bandwidth. A decode kernel with one KV head per GPU (Llama-3.1-405B at TP 8)
        reaches 65-75% of an H100's or H200's bandwidth on its grid, one with eight (Llama-3.1-8B at TP 1) 88-90%.
        Shapes read faster than the listed bandwidth (``hbm_bytes_per_s``) are left out: a cache small enough to sit
        in L2 (L40S's shapes under its 96 MB), or a measurement HBM cannot have made (A100's TensorRT-LLM table reads
        2.1 GB at 1.65 times its bandwidth), says nothing of a cache past the grid, which is larger.
        """
        if not self.attention_covered:
            return None
        key = ("decode bandwidth", self.heads, self.kv_heads, self.head_dim, self.kv_dtype, self.hbm_bytes_per_s)
        return self.tables.derived(key, self._decode_bandwidth)

    def _decode_bandwidth(self) -> float | None:
        grid = self.tables.attention_grid(
            "generation_attention", self.heads, self.kv_heads, self.head_dim, self.kv_dtype
        )
        if grid is None:
            return None
        tokens = np.outer(grid.axes[0], grid.axes[1])  # sequences × cached tokens of every measured shape
        with np.errstate(invalid="ignore"):
            rates = tokens * self.kv_bytes_per_token_layer / (grid.values * MS)
        if self.hbm_bytes_per_s:
            rates[rates > self.hbm_bytes_per_s] = np.nan
        best = np.nanmax(rates) if np.isfinite(rates).any() else None
        return float(best) if best is not None else None

    def prefill_positions_per_s(self) -> float | None:
        """The most causal (query, key) pairs per second, one layer, the measured prefill kernel computes anywhere on
        its grid (this head split and KV dtype), or None (no grid): past the grid the kernel is priced at it, not at
        the vendor's fraction of the data-sheet peak of the model's compute precision (which a 4-bit model's
        attention, run at 8 or 16 bits, never reaches: its kernel reaches 0.16 of a B200's FP4 peak)."""
        if not self.attention_covered:
            return None
        key = ("prefill positions per second", self.heads, self.kv_heads, self.head_dim, self.kv_dtype)
        return self.tables.derived(key, self._prefill_positions_per_s)

    def _prefill_positions_per_s(self) -> float | None:
        grid = self.tables.attention_grid("context_attention", self.heads, self.kv_heads, self.head_dim, self.kv_dtype)
        if grid is None:
            return None
        tokens = np.array(grid.axes[1])
        positions = np.outer(grid.axes[0], tokens * (tokens + 1) / 2)  # sequences × their causal pairs
        with np.errstate(invalid="ignore"):
            rates = positions / (grid.values * MS)
        return float(np.nanmax(rates)) if np.isfinite(rates).any() else None

    def prefill_floor_s(self, seqs: int, tokens: int, context_sum: float) -> float | None:
        """A lower bound on :meth:`prefill_attention_s` where the measured grid does not reach: :meth:`edge_ms` of
        the prefill kernel at the chunks' full length, with the same prefix correction, all layers (None as
        :meth:`decode_floor_s`)."""
        if not self.attention_covered or seqs <= 0:
            return None
        prefix = context_sum / seqs
        full = tokens / seqs + prefix
        ms = self.edge_ms("context_attention", seqs, full)
        return None if ms is None else ms * (full * full - prefix * prefix) / (full * full) * self.layers * MS

    def edge_ms(self, table: str, seqs: int, length: float) -> float | None:
        """One layer's attention kernel of ``table`` at the measured shapes that do no more work than ``seqs``
        sequences of ``length`` tokens, the most of them: the same batch (interpolated between measured batches) and
        every measured batch at or below it, each at this length or at its longest measured one below. The tables
        measure fewer lengths at larger batches, a staircase: past its edge the roofline prices the kernel, and this
        bound keeps a longer context or a larger batch from costing less than a shorter or smaller one measured.
        None where the grid holds no such shape."""
        key = (table, seqs)
        try:
            lines = self._edge_lines[key]
        except KeyError:
            lines = self._edge_lines[key] = self._edge_pair(table, seqs)
        best = None
        for line in lines:
            value = line.at_or_below(length)
            if value is not None and (best is None or value > best):
                best = value
        return best

    def _edge_pair(self, table: str, seqs: int) -> tuple[Grid, ...]:
        """The lines of :meth:`edge_ms` at ``seqs``: its own (interpolated between measured batches) and the envelope
        of every smaller measured batch's (:meth:`_envelopes`)."""
        grid = self.tables.attention_grid(table, self.heads, self.kv_heads, self.head_dim, self.kv_dtype)
        if grid is None:
            return ()
        below = bisect_left(grid.axes[0], seqs)  # the measured batches smaller than seqs
        lines = (grid.fix_first(seqs), self._envelopes(table, grid)[below - 1] if below else None)
        return tuple(line for line in lines if line is not None)

    def _envelopes(self, table: str, grid: Grid) -> list[Grid | None]:
        """Per measured batch of ``table``'s grid (made once per table and head split, shared by every model priced
        from these tables): at each measured length the most of that batch's line and every smaller batch's, each
        there or at its longest measured length below (linear in between)."""
        key = ("edge envelopes", table, self.heads, self.kv_heads, self.head_dim, self.kv_dtype)
        return self.tables.derived(key, lambda: _envelopes(grid))

    def decode_along_context(self, seqs: int) -> Callable[[float], float | None] | None:
        """One layer's decode kernel in ms at ``seqs`` sequences as a function of the mean context (None where the
        tables hold no line for that batch): what :meth:`decode_attention_s` looks up, for a caller that prices the
        same batch at many contexts (``max(1, context)`` first, then ``× layers × 1e-3`` for the pass, as it does).
        Only where :attr:`attention_covered`."""
        try:  # the batch fixed: one lookup along the context per step
            return self._decode_at[seqs]
        except KeyError:
            line = self._decode_line(seqs)
            along_context = self._decode_at[seqs] = line.at_x if line is not None else None
            return along_context

    def _decode_line(self, seqs: int) -> Grid | None:
        """The decode kernel's latency along the context at a batch of ``seqs`` (interpolated between batches)."""
        try:
            return self._decode_lines[seqs]
        except KeyError:
            key = ("decode line", self.heads, self.kv_heads, self.head_dim, self.kv_dtype, seqs)
            line = self._decode_lines[seqs] = self.tables.derived(key, lambda: self._build_decode_line(seqs))
            return line

    def _build_decode_line(self, seqs: int) -> Grid | None:
        grid = self.tables.attention_grid(
            "generation_attention", self.heads, self.kv_heads, self.head_dim, self.kv_dtype
        )
        return grid.fix_first(seqs) if grid is not None else None

    def prefill_attention_s(
        self, seqs: int, tokens: int, context_sum: float, notes: set[str] | None = None
    ) -> float | None:
        """Causal attention of ``seqs`` prefill chunks of ``tokens`` new tokens in all after Σ p cached ones."""
        if not self.attention_covered or seqs <= 0:
            return None if seqs > 0 else 0.0
        chunk = tokens / seqs
        prefix = context_sum / seqs
        full = chunk + prefix
        ms = self.tables.context_attention_ms(seqs, full, self.heads, self.kv_heads, self.head_dim, self.kv_dtype)
        if ms is None:
            (self.fallbacks if notes is None else notes).add(
                "prefill attention (a chunk or batch past the measured grid, no less than its edge)"
            )
            return None
        return ms * (full * full - prefix * prefix) / (full * full) * self.layers * MS

    def allreduce_s(self, tokens: int, notes: set[str] | None = None) -> float | None:
        """The two all-reduces per layer of a pass over ``tokens`` tokens."""
        if self.tp <= 1:
            return 0.0
        ms = self.tables.allreduce_ms(tokens * self.hidden, self.tp, self.cuda_graphs)
        if ms is None:
            (self.fallbacks if notes is None else notes).add(
                f"all-reduce (no table for {self.tp} GPUs, or a message outside it)"
            )
            return None
        return 2 * self.layers * ms * MS


def _envelopes(grid: Grid) -> list[Grid | None]:
    """:meth:`MeasuredPass._envelopes` of a (batch, length) grid."""
    envelopes: list[Grid | None] = []
    most: dict[float, float] = {}
    for batch in grid.axes[0]:
        line = grid.fix_first(batch)
        for length in grid.axes[1]:
            value = line.at_or_below(length) if line is not None else None
            if value is not None and value > most.get(length, -1.0):
                most[length] = value
        envelopes.append(Grid.build(sorted(most.items())) if most else None)
    return envelopes


def measured_pass(
    cost: ModelCost, gpu_id: str, engine: str, *, cuda_graphs: bool = True, hbm_bytes_per_s: float | None = None
) -> MeasuredPass | None:
    """The measured pricing of ``cost`` on ``gpu_id`` (of listed bandwidth ``hbm_bytes_per_s``) under ``engine``, or
    None (the roofline prices it all)."""
    tables = kernel_tables(gpu_id, engine)
    if tables is None:
        return None
    return MeasuredPass(cost, tables, cuda_graphs=cuda_graphs, hbm_bytes_per_s=hbm_bytes_per_s)


@data_cache  # looking the package up costs milliseconds; clear_caches() looks again
def roofline_label(gpu_id: str, engine: str) -> str:
    """The source label of a pass priced by the roofline alone."""
    return f"roofline estimate: {coverage_reason(gpu_id, engine)}"
