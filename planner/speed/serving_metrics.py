"""What one simulated serving run reports: throughput, latency percentiles, occupancy, what bound it, the steady state.

Whole-run throughput is what a benchmark client prints (requests over the wall time from the first arrival to the
last completion, warm-up and drain included: ``vllm bench serve``'s "Output token throughput"). The **steady state**
leaves both out: it is the rate at which output tokens are emitted between the end of the warm-up (the first
completion, and every request admitted by then prefilled) and the last admission (after it, the batch only shrinks),
less the start of that window where its rate is still climbing (:func:`truncated_start`), so it does not move with
the number of requests simulated. Speedups at a fixed concurrency or offline and a replica's capacity use it.

>>> steady_rate([(1.0, 10.0), (2.0, 30.0), (3.0, 50.0)], 1.5, 2.5)
20.0
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_left, bisect_right

from pydantic import BaseModel, Field

#: Batch-occupancy samples kept per run (evenly thinned).
OCCUPANCY_POINTS = 200

#: The steady window must span at least this share of the run, and at least one mean request lifetime (identical
#: requests move in lockstep waves: a shorter window catches one phase of a wave, all prefill or all decode);
#: shorter, the run never left warm-up and drain and the whole-run rate stands in.
MIN_STEADY_FRAC = 0.2
#: Equal slices of the steady window whose rates the truncation rule compares (:func:`truncated_start`).
STEADY_SLICES = 20


class Percentiles(BaseModel):
    mean: float
    p50: float
    p99: float

    @classmethod
    def of(cls, values: list[float]) -> Percentiles:
        if not values:
            return cls(mean=0.0, p50=0.0, p99=0.0)
        ordered = sorted(values)
        return cls(mean=statistics.fmean(ordered), p50=percentile(ordered, 50), p99=percentile(ordered, 99))


def percentile(ordered: list[float], pct: float) -> float:
    """Linear-interpolated percentile of sorted values (numpy's default method)."""
    if not ordered:
        return 0.0
    rank = (len(ordered) - 1) * pct / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _tokens_at(trace: list[tuple[float, float]], when: float) -> float:
    """Cumulative tokens at ``when`` on a trace of (step end s, cumulative tokens), linear within a step."""
    i = bisect_left(trace, (when, -math.inf))
    if i >= len(trace):
        return trace[-1][1]
    t1, c1 = trace[i]
    t0, c0 = trace[i - 1] if i > 0 else (t1, c1)
    return c1 if t1 <= t0 else c0 + (c1 - c0) * (when - t0) / (t1 - t0)


def steady_rate(trace: list[tuple[float, float]], start: float, end: float) -> float:
    """Tokens per second between ``start`` and ``end`` on a cumulative trace (interpolated)."""
    return (_tokens_at(trace, end) - _tokens_at(trace, start)) / (end - start)


class ReplicaLimits(BaseModel):
    """What bounds a replica's scheduler, from its memory plan and engine profile."""

    max_num_seqs: int
    max_num_batched_tokens: int
    kv_cache_tokens: int
    lookahead_tokens_per_seq: int
    max_model_len: int
    mixed_prefill: bool
    #: Whether a prompt may be split across steps (else it waits until the step has room for all of it).
    chunked_prefill: bool = True
    reserves_output: bool
    request_cap_reason: str
    #: Batch sizes (in tokens) the engine captured CUDA graphs at; a step pads up to the next one (empty: eager).
    cudagraph_sizes: tuple[int, ...] = ()


class ServingMetrics(BaseModel):
    """One simulated run: throughput, latency percentiles, occupancy, what bound it, the work done."""

    speculative: bool
    k: int | None
    alpha: float | None
    #: chain or tree (a tree's level widths), and the tokens one speculative step emits on average.
    verification: str = "chain"
    tree_widths: tuple[int, ...] = ()
    tokens_per_step: float = 1.0
    requests: int
    duration_s: float
    requests_per_s: float
    output_tokens_per_s: float
    total_tokens_per_s: float
    #: Output tokens per second and requests per second in the steady window (warm-up and drain left out).
    steady_output_tokens_per_s: float
    steady_requests_per_s: float
    #: (start s, end s) of the steady window, whose arrivals give the steady latencies and whose settled part (its
    #: transient cut off) the steady rate; ``steady`` false when the run never reached one (whole run used).
    steady_window_s: tuple[float, float]
    steady: bool
    ttft_s: Percentiles
    tpot_s: Percentiles
    #: TTFT and TPOT of the requests that arrived in the steady window, before a closed loop's last round (warm-up
    #: and drain left out, as a benchmark that reports stable measurement windows counts them); the whole run's when
    #: it never reached one.
    steady_ttft_s: Percentiles | None = None
    steady_tpot_s: Percentiles | None = None
    e2e_latency_s: Percentiles
    queueing_delay_s: Percentiles
    mean_batch_size: float
    max_batch_size: int
    preemptions: int
    steps: int
    #: Steps whose batch ran padded to a captured CUDA-graph size, and the mean padding share of their tokens.
    padded_steps: int = 0
    mean_padding_frac: float = 0.0
    limited_by: str
    #: Time-weighted share of the run during which each constraint held waiting requests back.
    blocked_frac: dict[str, float]
    #: (time s, running requests) samples over the run.
    occupancy: list[tuple[float, int]]
    busy_frac: float
    #: Work of the busiest GPU per second of the run, and its peaks.
    delivered_flops_per_s: float
    delivered_bytes_per_s: float
    peak_flops_per_s: float
    peak_bytes_per_s: float
    limits: ReplicaLimits
    #: Every request's TTFT and TPOT, sorted (for any percentile; left out of JSON output).
    ttft_values_s: list[float] = Field(default=[], exclude=True, repr=False)
    tpot_values_s: list[float] = Field(default=[], exclude=True, repr=False)

    def ttft_at(self, pct: float) -> float:
        return percentile(self.ttft_values_s, pct)

    def held_back_by(self) -> str:
        """What held this run's waiting requests back longest, however briefly: what bounds a replica run past
        saturation (its capacity, :mod:`planner.speed.replica_capacity`), where :attr:`limited_by` may say it kept up
        with a queue held back for under a tenth of the run."""
        return limited_by("rate", self.blocked_frac, 1.0, self.limits.request_cap_reason, kept_up_frac=0.0)[0]

    def tpot_at(self, pct: float) -> float:
        return percentile(self.tpot_values_s, pct)


#: A run whose waiting requests were held back for less than this share of it kept up with its offered load.
KEPT_UP_FRAC = 0.1


def limited_by(
    mode: str, blocked: dict[str, float], duration: float, cap_reason: str, kept_up_frac: float = KEPT_UP_FRAC
) -> tuple[str, dict]:
    """What held waiting requests back longest (a share of the run), in words, and every share; below
    ``kept_up_frac`` of the run, the offered load itself (the replica kept up).

    >>> limited_by("rate", {"kv_cache": 9.6}, 100.0, "max_num_seqs")[0]
    'offered load (the replica keeps up)'
    >>> limited_by("rate", {"kv_cache": 9.6}, 100.0, "max_num_seqs", kept_up_frac=0.0)[0]
    'KV cache capacity'
    """
    fractions = {key: value / duration for key, value in blocked.items() if value > 0}
    binding = max(fractions.items(), key=lambda kv: kv[1]) if fractions else None
    if binding is None or binding[1] < kept_up_frac:
        limited = {"rate": "offered load (the replica keeps up)", "concurrency": "client concurrency"}.get(
            mode, "compute"
        )
    elif binding[0] == "max_num_seqs":
        limited = cap_reason
    elif binding[0] == "kv_cache":
        limited = "KV cache capacity"
    else:
        limited = "compute (token budget full)" if binding[0] == "token_budget" else "compute"
    if mode == "offline" and binding is not None and binding[0] in ("token_budget", "queue"):
        limited = "compute"
    return limited, fractions


def warm_up_end(admitted: list[float], first_token: list[float], finish: list[float]) -> float:
    """When a run's warm-up ends: its first completion, or later, once every request admitted by then has its first
    token. A run that starts with a full batch prefills it all before it decodes at its steady pace, and a short
    answer finishes inside that fill: a window opened at the first completion would count the fill's prefill-only
    steps (Llama-3.1-70B at TP 4 on ShareGPT-like requests: 1,024 prompts' prefill, about 8 s of the first 15,
    before their decodes run at the steady rate).

    >>> warm_up_end([0.0, 0.0, 5.0], [1.0, 3.0, 6.0], [2.0, 9.0, 8.0])
    3.0
    >>> warm_up_end([0.0, 4.0], [1.0, 5.0], [2.0, 9.0])
    2.0
    """
    first_done = min(finish)
    filled = [first for joined, first in zip(admitted, first_token, strict=True) if 0.0 <= joined <= first_done]
    return max([first_done, *filled])


def truncated_start(trace: list[tuple[float, float]], start: float, end: float, shortest_s: float) -> float:
    """Where the steady window begins once its warm-up transient is cut off: the marginal standard error rule
    (MSER; White, "An effective truncation heuristic for bias reduction in simulation output", Simulation 69(6),
    1997), over the rates of ``STEADY_SLICES`` equal slices of [``start``, ``end``]: the first ``d`` slices are
    dropped for the ``d`` that minimises the variance of the remaining slices' rates over their count squared, ``d``
    at most half the slices and leaving at least ``shortest_s``. A saturated replica of heavy-tailed requests
    reaches its steady batch (long answers holding more of it than they do of the requests) only after its first
    long answers finish: Llama-3.1-70B at TP 8 on ShareGPT-like requests emits 5% fewer tokens per second over the
    whole window of 4,096 requests at once than of 16,384, and within 1% once truncated. A window without a
    transient keeps its start.

    >>> trace = [(float(t), 10.0 * t if t < 5 else 50.0 + 20.0 * (t - 5)) for t in range(21)]
    >>> truncated_start(trace, 0.0, 20.0, 5.0)
    5.0
    >>> truncated_start([(float(t), 10.0 * t) for t in range(21)], 0.0, 20.0, 5.0)
    0.0
    """
    width = (end - start) / STEADY_SLICES
    rates = [steady_rate(trace, start + i * width, start + (i + 1) * width) for i in range(STEADY_SLICES)]
    most = min(STEADY_SLICES // 2, int((end - start - shortest_s) / width + 1e-9))
    best, best_d = math.inf, 0
    for d in range(max(0, most) + 1):
        kept = rates[d:]
        mean = sum(kept) / len(kept)
        score = sum((r - mean) ** 2 for r in kept) / len(kept) ** 2
        if score < best * (1 - 1e-9):  # a later start only where it is clearly better
            best, best_d = score, d
    return start + best_d * width


def _completions_within(completions: list[float], begin: float, end: float) -> tuple[int, int]:
    """The indices of the first and last of the sorted ``completions`` within [``begin``, ``end``]."""
    return bisect_left(completions, begin), bisect_right(completions, end) - 1


def whole_rounds(completions: list[float], begin: float, end: float, clients: int) -> tuple[float, float] | None:
    """The last whole rounds of a closed loop of ``clients`` clients within [``begin``, ``end``]: from the completion
    ``k · clients`` before the last one there to that last one, ``k`` as large as starts by ``begin``; None where not
    one round fits. ``completions`` is sorted.

    Each completion sends the next request, so identical requests complete in bursts of up to ``clients`` and their
    prompts are prefilled together before they decode: a window that opens as one burst's prompts are prefilled and
    closes just after another's were counts one more prefill than it spans rounds. Llama-3.3-70B FP8 at TP 2 on
    H100, 25 clients of 5,000 + 500 tokens, emitted 510, 571 and 600 tokens/s over its window at 4, 8 and 32
    requests per client, and 608 at each over whole rounds. ShareGPT-like lengths complete one by one and read the
    same either way, within 1.1% of a run of 32 requests per client at 4; the rounds are the last ones, nearest
    the steady state (aligned on the first rounds, a 64-client loop with a draft read 3.5% low at 4).

    >>> whole_rounds([1.0, 1.1, 2.0, 2.1, 3.0, 3.1, 4.0], 0.5, 3.5, 2)
    (1.1, 3.1)
    >>> whole_rounds([1.0, 2.0], 0.5, 3.0, 4) is None
    True
    """
    first, last = _completions_within(completions, begin, end)
    rounds = (last - first) // clients if last >= first else 0
    if rounds < 1:
        return None
    return completions[last - rounds * clients], completions[last]


def last_round_start(completions: list[float], begin: float, end: float, clients: int) -> float:
    """Where the last round of a closed loop of ``clients`` clients within [``begin``, ``end``] starts: the
    completion ``clients`` before the last one there (``end`` where the window holds less than a round). A request
    that arrives after it is one of the loop's last, served partly while the batch drains after the last
    admission; its latencies are not the steady state's. NIM's 25 to 250 clients of 5,000 + 500 tokens read a mean
    TPOT 1.5 to 3.3 points faster at 8 requests per client than at 32 with them, and the same at 8, 16 and 32
    without.

    >>> last_round_start([1.0, 1.1, 2.0, 2.1, 3.0, 3.1, 4.0], 0.5, 3.5, 2)
    2.1
    >>> last_round_start([1.0, 2.0], 0.5, 3.0, 4)
    3.0
    """
    first, last = _completions_within(completions, begin, end)
    return completions[last - clients] if last - clients >= first else end


def steady_state(
    trace: list[tuple[float, float]],
    warmed_s: float,
    last_admitted: float,
    start: float,
    end: float,
    lifetime_s: float = 0.0,
    rounds_of: tuple[list[float], int] | None = None,
) -> tuple[float, tuple[float, float], bool]:
    """Output tokens per second in the steady window (from ``warmed_s``, the end of the warm-up,
    :func:`warm_up_end`, to ``last_admitted``), the window, and whether the run reached one (a window of at least
    ``MIN_STEADY_FRAC`` of the run and ``lifetime_s``, a request's mean time from arrival to completion). The
    rate is the window's once its transient is cut off (:func:`truncated_start`), over whole rounds of a closed
    loop where ``rounds_of`` gives its sorted completions and clients (:func:`whole_rounds`); the requests that
    arrive in the whole window are the ones whose latencies count as steady."""
    duration = max(end - start, 1e-12)
    shortest = max(MIN_STEADY_FRAC * duration, lifetime_s)
    if trace and last_admitted - warmed_s >= shortest:
        begin, until = truncated_start(trace, warmed_s, last_admitted, shortest), last_admitted
        rounds = whole_rounds(rounds_of[0], begin, last_admitted, rounds_of[1]) if rounds_of else None
        if rounds is not None:
            begin, until = rounds
        return steady_rate(trace, begin, until), (warmed_s, last_admitted), True
    total = trace[-1][1] if trace else 0.0
    return total / duration, (start, end), False
