"""Defaults the planner assumes when the user gives none, each written once here with its public rationale.

Workload defaults (batch, prompt and output lengths) live with their source in ``data/speculation_rules.json``;
UI values derived from these (τ and ρ at the default α and K) are computed with :mod:`planner.acceptance_math`,
never stored.

>>> NUM_SPECULATIVE_TOKENS, ACCEPTANCE_ALPHA, SELECTION_BATCH_SIZE
(5, 0.8, 1)
"""

from __future__ import annotations

#: Draft length K: the value vLLM's speculative-decoding examples use (``num_speculative_tokens: 5``,
#: https://docs.vllm.ai/en/latest/features/spec_decode.html). The default for every speculator kind, an MTP module
#: included (vLLM runs an MTP module's layers again for any K that is a multiple of their count, and DeepSeek-V3 ships
#: one: vllm/config.py SpeculativeConfig, n_predict), on every page, command and export alike.
NUM_SPECULATIVE_TOKENS = 5

#: Batch size Draft Selection and ``python -m planner matrix`` rank drafts at: the speed rules' default workload
#: batch (``data/speculation_rules.json``: batch 1 is the latency setting speculative-decoding papers report first,
#: Leviathan et al. 2023, https://arxiv.org/abs/2211.17192), so a draft's ranked speedup is the Performance page's.
SELECTION_BATCH_SIZE = 1

#: Per-token acceptance α assumed for a well-matched draft when nothing is measured: Leviathan et al. (2023)
#: report α of about 0.6-0.9 for same-family drafts (Table 3, https://arxiv.org/abs/2211.17192).
ACCEPTANCE_ALPHA = 0.8

#: Latency objectives as MLPerf Inference enforces them for Llama-2-70B (loadgen mlperf.conf, p99): Server TTFT
#: 2,000 ms and TPOT 200 ms; Interactive TTFT 450 ms and TPOT 40 ms
#: (https://github.com/mlcommons/inference/blob/master/loadgen/mlperf.conf). A quote, a search and the Fleet and
#: Explore pages hold their traffic to the Server preset unless told otherwise.
SLO_PRESETS: dict[str, tuple[float, float]] = {"server": (2.0, 0.2), "interactive": (0.45, 0.04)}
DEFAULT_SLO_PRESET = "server"
#: The percentile latency objectives hold at: MLPerf's (p99, loadgen mlperf.conf, as above).
OBJECTIVE_PERCENTILE = 99.0

#: The request a quote, a search, a serving simulation and the Fleet and Explore pages size for when given no
#: lengths: a 1,024-token prompt, the prompt of vLLM's serving benchmark's random dataset (``--random-input-len 1024``,
#: https://github.com/vllm-project/vllm/blob/v0.8.5/benchmarks/benchmark_serving.py), and a 256-token answer, an
#: assumption of a short chat answer (that benchmark's 128 is the latency setting of the Performance page's
#: default workload). Every quote prints the lengths it sized for; give your traffic's own.
SERVING_PROMPT_TOKENS = 1024
SERVING_OUTPUT_TOKENS = 256


def serving_lengths(
    dataset: str, prompt_tokens: int | None, output_tokens: int | None
) -> tuple[int | None, int | None]:
    """The lengths a workload of ``dataset`` runs: those given, else a fleet's default request where every request
    has the same lengths (``fixed``); a dataset draws its own.

    >>> serving_lengths("fixed", None, 128), serving_lengths("sharegpt", None, None)
    ((1024, 128), (None, None))
    """
    if dataset != "fixed":
        return prompt_tokens, output_tokens
    return (
        SERVING_PROMPT_TOKENS if prompt_tokens is None else prompt_tokens,
        SERVING_OUTPUT_TOKENS if output_tokens is None else output_tokens,
    )


#: The largest GPU cluster publicly reported: xAI's Colossus, 200,000 GPUs (https://x.ai/colossus, 2025). A quote
#: that needs more GPUs than this is flagged as beyond any real purchase (most likely a mistyped request rate).
LARGEST_REPORTED_CLUSTER_GPUS = 200_000

#: The planner's release, printed on every exported document (``planner.__version__``).
PLANNER_VERSION = "0.1.0"

#: Draws of the traffic a quoted replica count is checked on when asked (the quote's own and two more), and the
#: most one check runs: each draw sizes the option again on another seed of its Poisson arrivals
#: (:mod:`planner.decisions.traffic_draws`). Three is the fewest that shows a spread and a count for every draw.
TRAFFIC_DRAWS = 3
MAX_TRAFFIC_DRAWS = 10

#: The most processes a design-space search uses, however many CPUs the machine has (by default one per usable CPU
#: for a space of 2,000 points or more, where the process may fork: :mod:`planner.decisions.search.workers`). Each
#: is a fork of the searching process and prices its own layouts' passes afresh, and the default space has 36 layouts
#: to share out; the gain was measured on two CPUs only.
MAX_SEARCH_PROCESSES = 8
