"""Which batch sizes an engine captured CUDA graphs at, and what a step of a given size runs at.

A captured graph replays a fixed shape, so an engine pads a batch up to the next captured size (a decode batch of 33
sequences runs as 40 on vLLM) and runs a batch above the largest one, or one it did not capture, without graphs:

* **vLLM V1** captures token counts ``[1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16)``, ``max`` from
  ``max_num_seqs`` (× 2, and × (1 + K) with a draft from 0.13; capped at 512, 1,024 on data-centre Blackwell from
  0.28, and at ``max_num_batched_tokens``), with what each release adds (the token budget from 0.21, a draft's
  uniform decode sizes from 0.29) and, from 0.11.1 to 0.33, a draft's sizes rounded up to multiples of 1 + K
  (``vllm/config/vllm.py`` ``VllmConfig._set_cudagraph_sizes``; ``vllm_v1_releases`` in ``data/cuda_graphs.json``).
  Uniform decode steps replay full graphs and mixed prefill/decode steps piecewise ones, both padded in tokens
  (``vllm/v1/worker/gpu_model_runner.py``, ``CUDAGraphMode.FULL_AND_PIECEWISE``, the default since v0.11);
* **vLLM V0** captures decode batches ``[1, 2, 4]`` and multiples of 8 up to ``max_num_seqs`` rounded up to 8
  (``vllm/worker/model_runner.py`` ``_BATCH_SIZES_TO_CAPTURE``, ``_get_max_graph_batch_size``), decode only,
  padded: up to 256 at most before v0.6.0, up to 8,192 from v0.6.0 (a server at ``--max-num-seqs 512`` replays
  graphs up to 512);
* **SGLang** captures decode batch sizes (requests; an EAGLE verify graph holds ``bs × num_draft_tokens`` tokens):
  ``[1, 2, 4, 8, 12] + range(16, 257, 8) + range(272, 512, 16) + range(512, max + 1, 32)``, or with speculation
  ``range(1, 9) + range(10, 33, 2) + range(40, 65, 4) + range(72, 257, 8) + range(272, max + 1, 16)``, up to
  ``cuda_graph_max_bs`` (by GPU memory and TP, ``data/engines.json``) (``python/sglang/srt/server_args.py``
  ``ServerArgs._generate_cuda_graph_batch_sizes``) and up to its request pool, whose size is added
  (``cuda_graph_runner.py`` ``get_batch_sizes_to_capture``); prefill (extend) batches run without graphs;
* **TensorRT-LLM** (PyTorch backend) captures generation-only batches ``range(1, 32) + [32, 64, 128]`` up to
  ``CudaGraphConfig.max_batch_size`` (128 by default) and, with ``enable_padding`` false by default, runs any other
  size without graphs (``tensorrt_llm/llmapi/llm_args.py`` ``CudaGraphConfig._generate_cuda_graph_batch_sizes``);
* transformers ``generate`` and ``--enforce-eager`` capture nothing.

Each engine's rule, with its source, is a row of ``data/cuda_graphs.json`` (:mod:`planner.engines.capture_sizes`
holds the sizes, which the memory plan counts too).

Padding tokens go through the weight GEMMs only (no attention context, no logits); a decode-only step that no graph
covers pays the eager per-layer launch cost. Steps with prefill chunks keep the graphs' cost whatever their size: their
GPU work hides the launches.

>>> from planner.engines.capture_sizes import sglang_capture_sizes, vllm_capture_sizes
>>> plan = GraphPlan(sizes=vllm_capture_sizes(512), unit="tokens", pads=True, mixed=True, engine="vllm")
>>> plan.run(seqs=33, query_tokens=1), plan.run(seqs=33, query_tokens=4), plan.run(seqs=600, query_tokens=1)
((7, False), (4, False), (0, True))
>>> sglang = GraphPlan(sizes=sglang_capture_sizes(48, speculative=True), unit="seqs", pads=True, engine="sglang")
>>> sglang.run(seqs=33, query_tokens=8)
(56, False)
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from planner.deployment import Deployment
from planner.engines.capture_sizes import captured_sizes, engine_graphs
from planner.engines.profiles import engine_profile, resolve_limits


@dataclass(frozen=True, slots=True)
class GraphPlan:
    """Captured sizes (ascending), their unit, whether a batch pads up to one, whether mixed steps replay one."""

    sizes: tuple[int, ...]
    unit: str  # "tokens" or "seqs"
    pads: bool
    mixed: bool = False
    engine: str = ""

    @property
    def largest(self) -> int:
        return self.sizes[-1] if self.sizes else 0

    def run(self, *, seqs: int, query_tokens: int, prefill_tokens: int = 0) -> tuple[int, bool]:
        """(padding tokens the step runs with, whether it runs without graphs) for a step of ``seqs`` decoding
        sequences of ``query_tokens`` each and ``prefill_tokens`` of prefill chunks."""
        if not self.sizes or (prefill_tokens and not self.mixed):
            return 0, False
        size = seqs * query_tokens + prefill_tokens if self.unit == "tokens" else seqs
        if size <= 0:
            return 0, False
        i = bisect_left(self.sizes, size)
        decode_only = prefill_tokens == 0
        if i == len(self.sizes) or (not self.pads and self.sizes[i] != size):
            return 0, decode_only
        pad = self.sizes[i] - size
        return (pad if self.unit == "tokens" else pad * query_tokens), False


NO_GRAPHS = GraphPlan(sizes=(), unit="tokens", pads=False)


def graph_plan(dep: Deployment) -> GraphPlan:
    """The capture sizes ``dep``'s engine uses by default (none with ``enforce_eager`` or a rule of ``none``)."""
    profile = engine_profile(dep.engine, dep.engine_version)
    limits = resolve_limits(dep, profile)
    sizes = captured_sizes(dep, profile, limits.max_num_seqs, limits.max_num_batched_tokens)
    if not sizes:
        return NO_GRAPHS
    rule = engine_graphs()[dep.engine]
    return GraphPlan(sizes=sizes, unit=rule.unit, pads=rule.pads, mixed=rule.mixed_steps, engine=dep.engine)
