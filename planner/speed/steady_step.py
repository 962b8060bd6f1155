"""The mean engine step of B requests served back to back: their decodes plus each request's share of prefill.

B clients each keep one request in flight (a closed loop, the load a "batch size" benchmark runs). A request is
prefilled in one step, which emits its first token, then decodes its other O − 1 tokens at τ per step (τ = 1
without a draft). When it finishes, its client's next request arrives as that step ends and misses the step the
engine starts at that instant (a batch of one has no such miss: an idle engine takes a request at once; nor has a
batch of more clients than the engine runs at once: the rest queue, and a freed slot takes the next at once). Per
decode step, n requests finish and n prompts are prefilled:

* where the engine mixes prompts and decodes in one step (its speed profile's ``mixed_prefill``: vLLM V1,
  TensorRT-LLM's in-flight batching), a slot spends one step missed, one prefilling and (O − 1)/τ decoding:
  ``n = τ·B / (O − 1 + τ·(1 + miss))``, ``d = B − n·(1 + miss)`` sequences decode on average;
* where prompts run in steps of their own (vLLM V0, SGLang), the prefill steps come between decode steps:
  ``n = τ·B / (O − 1 + τ·miss)``, ``d = B − n·miss``.

The mean step (per decode step, its prefill steps included) averages the full price of the steps over J, the
prompts a step meets: where steps mix, ``E[T] = E[T(f − J decodes + J prompts)]`` with ``f = B − n·miss`` the slots
not idle; where prompts run apart, ``E[T] = T(d decodes) + E[T(J prompts)]``. Each slot hands its request over in a
given step independently, so J is binomial with mean n (:func:`prompt_counts`; a few prompts at once share one
pass's weight reads, and a step of prompts alone pays those reads in full). Prompt counts are priced at a few
counts (:func:`prompt_anchors`), linear between them, and a fractional decode count between the whole counts
around it. Where prompt lengths vary (a dataset's), a step of J prompts is priced over the equally likely totals of
their lengths (:func:`summed_points`) rather than at J times the mean: a step's time is not linear in its prompt
tokens. Throughput is ``n·O / E[T]``.
A request's TPOT counts the steps after its first token: its own prompt is not among them, the other slots' are
(:meth:`SteadyState.tpot_s`). As O grows both tend to Leviathan et al.'s decode-only ``B·τ / T(B)`` and ``T(B) / τ``
(https://arxiv.org/abs/2211.17192). The serving simulator (:mod:`planner.speed.replica_run`) runs the same closed
loop request by request and agrees with this mean at steady state (tests/core/speed/test_scheduler.py).

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> from planner.speed.engine_step import EngineStep
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"))
>>> long = SteadyState(EngineStep(dep), 64, RequestLengths(32, 4096)).served(None, 1.0)
>>> short = SteadyState(EngineStep(dep), 64, RequestLengths(1024, 128)).served(None, 1.0)
>>> round(long.prompts_per_step, 4), round(long.throughput_tok_s / short.throughput_tok_s, 2)
(0.0156, 1.54)
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_left
from dataclasses import dataclass

from planner.speed.drafting import DraftShape
from planner.speed.engine_step import Chunks, EngineStep


def mean_context_tokens(prompt_tokens: int, output_tokens: int) -> int:
    """Mean cached context of a request over its decode: the prompt plus half the output.

    >>> mean_context_tokens(1024, 128)
    1088
    """
    return prompt_tokens + output_tokens // 2


#: Probability mass of the prompt counts a mean step leaves out (the binomial's far tail).
TAIL_MASS = 1e-6
#: Above this mean count of prompts per step the binomial's spread (under a sixth of the mean either way, in
#: the bulk) stays within prompt counts whose cost is close to linear, and the mean count is priced alone.
EXACT_COUNTS_BELOW = 64


def prompt_counts(batch: int, mean_prompts: float) -> list[tuple[int, float]]:
    """(count, probability) of the prompts one step prefills: each of the ``batch`` slots hands its request over in
    a given step independently, a binomial with mean ``mean_prompts`` (whole counts only; the tail beyond
    ``1 − TAIL_MASS`` left out).

    >>> [(j, round(p, 3)) for j, p in prompt_counts(4, 1.0)]
    [(0, 0.316), (1, 0.422), (2, 0.211), (3, 0.047), (4, 0.004)]
    >>> prompt_counts(8, 8.0), prompt_counts(0, 0.0)
    ([(8, 1.0)], [(0, 1.0)])
    """
    if batch <= 0:
        return [(0, 1.0)]
    share = min(1.0, mean_prompts / batch)
    if share >= 1.0:
        return [(batch, 1.0)]
    odds = share / (1.0 - share)
    probability = (1.0 - share) ** batch
    counts, total = [], 0.0
    for count in range(batch + 1):
        counts.append((count, probability))
        total += probability
        if total >= 1.0 - TAIL_MASS:
            break
        probability *= (batch - count) / (count + 1) * odds
    return counts


def prompt_anchors(batch: int) -> list[int]:
    """Prompt counts a step's prefill cost is priced at: 0, 1, then doubling, and ``batch`` (the cost is close to
    linear in the count beyond the first prompt, which alone may ride along a decode step's weight reads).

    >>> prompt_anchors(40)
    [0, 1, 2, 4, 8, 16, 32, 40]
    """
    anchors = [0, 1] if batch >= 1 else [0]
    while anchors[-1] < batch:
        anchors.append(min(batch, 2 * anchors[-1]))
    return anchors


@functools.lru_cache(maxsize=256)
def summed_points(points: tuple[float, ...], count: int) -> tuple[float, ...]:
    """Total tokens of ``count`` prompts whose lengths are drawn independently from ``points`` (equally likely), as
    as many equally likely totals: summed by doubling, each sum of two ``q``-point distributions (``q²`` equally
    likely totals) cut back to ``q`` equal-probability slices, each its mean (the mean is kept exactly; the spread
    narrows as ``√count``).

    >>> summed_points((10.0, 30.0), 1), summed_points((10.0, 30.0), 2)
    ((10.0, 30.0), (30.0, 50.0))
    """
    if count <= 1:
        return points
    half = summed_points(points, count // 2)
    total = _summed(half, half)
    return _summed(total, points) if count % 2 else total


def _summed(first: tuple[float, ...], second: tuple[float, ...]) -> tuple[float, ...]:
    totals = sorted(a + b for a in first for b in second)
    size = len(second)
    return tuple(sum(totals[i : i + size]) / size for i in range(0, len(totals), size))


@dataclass(frozen=True, slots=True)
class ServedStep:
    """The mean step of one arm (plain or speculative) at steady state, and what it serves."""

    #: E[T]: seconds per decode step, its share of prefill included.
    step_s: float
    #: τ: tokens a decoding sequence emits per step.
    tokens_per_step: float
    #: n: requests finished (and prompts prefilled) per decode step; d: sequences decoding in it, on average.
    prompts_per_step: float
    decode_seqs: float
    #: O: output tokens per request.
    output_tokens: int

    @property
    def throughput_tok_s(self) -> float:
        """Output tokens per second: n·O / E[T]."""
        return self.prompts_per_step * self.output_tokens / self.step_s


@dataclass(frozen=True, slots=True)
class RequestLengths:
    """A request's mean prompt and output tokens and, where prompts vary, their equally likely lengths (whose mean is
    ``prompt_tokens``; None: every prompt is ``prompt_tokens`` long)."""

    prompt_tokens: int
    output_tokens: int
    prompt_points: tuple[float, ...] | None = None


class SteadyState:
    """Mean steps of one batch size and request length, plain or speculative, with step prices kept per shape."""

    def __init__(self, engine: EngineStep, batch: int, lengths: RequestLengths, clients: int | None = None) -> None:
        self.engine = engine
        self.batch, self.prompt_tokens, self.output_tokens = batch, lengths.prompt_tokens, lengths.output_tokens
        #: Clients in the closed loop (``batch`` unless more than the engine runs at once: the rest queue).
        self.clients = max(batch, clients or batch)
        self.prompt_points = lengths.prompt_points
        #: Mean cached context of a decoding request: the prompt plus half the output.
        self.context_tokens = mean_context_tokens(self.prompt_tokens, self.output_tokens)
        self.mixed = engine.profile.mixed_prefill
        #: Steps a slot waits for its next request: one where the request comes from a client as a step ends; none
        #: where requests queue for a slot (the engine takes the next at once), or with one client on an idle engine.
        self.miss = 1 if 1 < batch == self.clients else 0
        #: (id of the shape, decodes, prompts) -> (shape, seconds): a shape is kept by identity, as the engine does.
        self._prices: dict[tuple[int, int, int], tuple[DraftShape | None, float]] = {}
        #: The prompt counts priced (:func:`prompt_anchors`).
        self._anchors = prompt_anchors(batch)

    def _price(self, shape: DraftShape | None, decodes: int, prompts: int) -> float:
        """Seconds of one step of ``decodes`` sequences and ``prompts`` whole prompts (0 for an empty step)."""
        key = (id(shape), decodes, prompts)
        kept = self._prices.get(key)
        if kept is not None and kept[0] is shape:
            return kept[1]
        if not (decodes or prompts):
            seconds = 0.0
        else:  # averaged over the lengths the step's prompts may have together (one, where every prompt is alike)
            totals = (
                (prompts * self.prompt_tokens,)
                if not prompts or self.prompt_points is None
                else summed_points(self.prompt_points, prompts)
            )
            seconds = sum(self._priced(shape, decodes, prompts, total) for total in totals) / len(totals)
        self._prices[key] = (shape, seconds)
        return seconds

    def _priced(self, shape: DraftShape | None, decodes: int, prompts: int, prompt_tokens: float) -> float:
        chunks = Chunks()
        if prompts:
            chunks.add_prompts(prompts, prompt_tokens)
        return self.engine.step_totals(shape, decodes, decodes * self.context_tokens, chunks)[0]

    def _step_s(self, shape: DraftShape | None, decodes: float, prompts: int) -> float:
        """One step of ``prompts`` whole prompts and ``decodes`` decoding sequences, a fractional count
        interpolated between the whole ones around it."""
        low = math.floor(decodes)
        at_low = self._price(shape, low, prompts)
        return at_low + (decodes - low) * (self._price(shape, low + 1, prompts) - at_low) if decodes > low else at_low

    def _with_prompts_s(self, shape: DraftShape | None, prompts: int, free: float) -> float:
        """The step that prefills ``prompts`` whole prompts where ``free`` slots are not idle: mixed, the others of
        them decode in it (``T(free − j decodes + j prompts)``); apart, the prompts' own step (``T(j prompts)``).
        Priced at :func:`prompt_anchors`, linear between them."""
        place = bisect_left(self._anchors, prompts)
        high = self._anchors[place]
        at_high = self._anchor_s(shape, high, free)
        if high == prompts:
            return at_high
        low = self._anchors[place - 1]
        at_low = self._anchor_s(shape, low, free)
        return at_low + (prompts - low) / (high - low) * (at_high - at_low)

    def _anchor_s(self, shape: DraftShape | None, prompts: int, free: float) -> float:
        if not self.mixed:
            return self._price(shape, 0, prompts)
        return self._step_s(shape, max(0.0, free - prompts), prompts)

    def _mean_step_s(self, shape: DraftShape | None, slots: int, prompts: float, free: float) -> float:
        """Mean over the binomial count J of prompts ``slots`` slots hand over per step (mean ``prompts``) of the
        step with J prompts (:meth:`_with_prompts_s`), where ``free`` slots are not idle."""
        if prompts > EXACT_COUNTS_BELOW:  # many prompts per step: close to linear over the binomial's spread
            low = min(math.floor(prompts), slots)
            at_low = self._with_prompts_s(shape, low, free)
            if low == slots:
                return at_low
            return at_low + (prompts - low) * (self._with_prompts_s(shape, low + 1, free) - at_low)
        return sum(share * self._with_prompts_s(shape, count, free) for count, share in prompt_counts(slots, prompts))

    def served(self, shape: DraftShape | None, tokens_per_step: float) -> ServedStep:
        """The mean step of ``shape`` (None: plain decoding) emitting ``tokens_per_step`` per decoding sequence."""
        tau, batch, out = tokens_per_step, self.batch, self.output_tokens
        slots_per_prompt = self.miss + (1 if self.mixed else 0)
        steps_per_request = out - 1 + tau * slots_per_prompt  # in units of 1/τ steps
        # one output token and a lone client on an engine that prefills apart: every step is a prompt's; and never
        # more prompts than slots (a request's last step is whole, however few of its τ tokens it needs)
        prompts = min(float(batch), tau * batch / steps_per_request) if steps_per_request > 0 else float(batch)
        decodes = max(0.0, batch - prompts * slots_per_prompt) if steps_per_request > 0 else 0.0
        step_s = self._mean_step_s(shape, batch, prompts, batch - prompts * self.miss)
        if not self.mixed:  # the decode step, then the prompts' own steps
            step_s += self._step_s(shape, decodes, 0)
        return ServedStep(step_s, tau, prompts, decodes, out)

    def ttft_s(self, served: ServedStep, shape: DraftShape | None, prefill_room: int | None = None) -> float:
        """Seconds from a request's arrival to its first token (``served``'s arm, ``shape``) with ``clients`` in the
        closed loop, of whom the engine runs ``batch``:

        * ``clients − batch`` wait in the engine's queue (the running cap): ``(clients − batch)·E[T] / n`` by
          Little's law, then the request's prompt runs in the next step;
        * else it arrives as a step ends and misses the step the engine starts (``miss`` of them: a typical step
          where prompts mix into decodes, the decode step where they run apart);
        * its prefill step holds its prompt and J′ of the other slots' (binomial, mean ``n·(B − 1)/B``), with the
          other slots' decodes where steps mix: ``E[T(f − 1 − J′ decodes + 1 + J′ prompts)]``; a prompt longer
          than the step's room (``prefill_room``: the token budget of an engine that splits prompts, less the
          decodes' tokens) runs over ``⌈P / room⌉`` steps, each extra one re-running the decodes.

        At batch 1 this is the prompt's prefill alone, what a single-stream measurement reports."""
        batch = self.batch
        others = (batch - 1) / batch if batch > 1 else 0.0
        mates = prompt_counts(batch - 1, served.prompts_per_step * others)
        if self.mixed:
            free = batch - served.prompts_per_step * self.miss
            own = sum(share * self._with_prompts_s(shape, 1 + count, free) for count, share in mates)
            missed = served.step_s
            decodes = max(0.0, free - 1 - served.prompts_per_step * others)
        else:
            own = sum(share * self._price(shape, 0, 1 + count) for count, share in mates)
            missed = self._missed_apart_s(served, shape)
            decodes = 0.0
        if prefill_room is not None and self.mixed:
            per_decode = 1 if shape is None else shape.verify_tokens
            room = prefill_room - decodes * per_decode
            chunks = math.ceil(self.prompt_tokens / room) if room >= 1 else 1
            own += (chunks - 1) * self._step_s(shape, decodes, 0)
        if self.clients > batch:
            return (self.clients - batch) * served.step_s / served.prompts_per_step + own
        return self.miss * missed + own

    def _missed_apart_s(self, served: ServedStep, shape: DraftShape | None) -> float:
        """The step a new request misses where prompts run in steps of their own: the step the engine starts as the
        decode step that freed its slot ends. That is the prefill step of the prompts still waiting, where the
        decode step before handed some over (they missed it in turn), else the next decode step. After a decode
        step with no prompts waiting, the next has them with probability ``q = P(J > 0)``; after one with prompts
        waiting, the next has none (they and the newer ones are prefilled before it). So a share
        ``q / (1 + q)`` of decode steps end with prompts waiting, and as large a share of requests miss a prefill
        step of the ``J > 0`` waiting prompts."""
        counts = prompt_counts(self.batch, served.prompts_per_step)
        some = sum(share for count, share in counts if count > 0)
        decode_s = self._step_s(shape, served.decode_seqs, 0)
        if some <= 0:
            return decode_s
        prefill_s = sum(share * self._price(shape, 0, count) for count, share in counts if count > 0) / some
        waiting = some / (1 + some)
        return (1 - waiting) * decode_s + waiting * prefill_s

    def tpot_s(self, served: ServedStep, shape: DraftShape | None) -> float:
        """Seconds per output token after a request's first (``served``'s arm, ``shape``): the steps it decodes in
        hold it and, on average, the other B − 1 slots' share of the decodes and prompts (its own prompt came
        before its first token), ``E[T(1 + (B − 1)·d/B decodes, J′ prompts)] / τ``, J′ from the other slots."""
        batch = self.batch
        others = (batch - 1) / batch
        prompts = others * served.prompts_per_step
        if self.mixed:
            step_s = self._mean_step_s(shape, batch - 1, prompts, 1 + others * (served.decode_seqs + prompts))
        else:
            step_s = self._step_s(shape, 1 + others * served.decode_seqs, 0)
            step_s += self._mean_step_s(shape, batch - 1, prompts, 0.0) if batch > 1 else 0.0
        return step_s / served.tokens_per_step
