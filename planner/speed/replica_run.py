"""The event loop of one replica run: the engine's scheduler, step by step.

Each engine step (vLLM V1 scheduler; SGLang and TensorRT-LLM differ only in the profile's flags):

1. decoding requests take ``1`` token each of the ``max_num_batched_tokens`` budget (``K + 1`` with a
   draft: speculative tokens count against the budget);
2. prefills in progress, then waiting requests (first come, first served) fill the rest in chunks,
   when ``mixed_prefill``; otherwise a step is either a prefill batch or a decode batch (prefill first);
   without ``chunked_prefill`` a prompt is never split: it runs whole, and waits (with the queue behind it)
   while the step has less budget left than its length (TensorRT-LLM without chunked context, vLLM V0);
3. a waiting request is admitted only while the running requests stay under ``max_num_seqs`` (and the
   engine's cap with a draft, SGLang's 48) and the KV cache of the memory plan
   (``planner.memory.plan_memory``: ``kv_cache_tokens``, ``K`` lookahead slots per sequence with a
   draft) holds its prompt; when growing sequences exhaust the cache, the newest is preempted and
   recomputed later (vLLM's recompute preemption). A request joins the first step that starts after it
   arrives: one arriving as a step ends (a closed-loop client's next request) misses the step begun at that
   instant, unless the engine is idle;
4. the step's time is :class:`planner.speed.engine_step.EngineStep` over exactly that batch; a
   speculative step advances every decoding request by τ(α, K) tokens (the expected value).

Between events (an arrival that can be admitted, a completion, the cache filling) the batch does not
change, so runs of identical decode steps are advanced together, their time taken at the middle
context (step time is linear in context within a regime). A run up to an arrival takes as many steps as that
middle-context time fits in the gap, so it ends within a step of the arrival however long the gap (counted at the
first step's time, the run would end later by the steps' growth over the whole gap: 0.2 s late after 10 s of a long
answer). The GPU work is summed per step, so delivered
FLOP/s and bytes/s never exceed the peak. :func:`planner.speed.simulate.simulate_one` builds a run and
checks its inputs first.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from collections import deque

from planner.errors import PlannerError
from planner.input_types import MAX_SIMULATION_STEPS
from planner.speed.drafting import DraftShape
from planner.speed.engine_step import NO_CHUNKS, Chunks, EngineStep
from planner.speed.multi_step import MultiStep
from planner.speed.objective_watch import MissCounts, ObjectiveWatch
from planner.speed.serving_metrics import (
    OCCUPANCY_POINTS,
    Percentiles,
    ReplicaLimits,
    ServingMetrics,
    last_round_start,
    limited_by,
    steady_state,
    warm_up_end,
)
from planner.speed.serving_workload import ServingWorkload

#: Share of the KV cache admission keeps free (vLLM's block-manager watermark, 1% by default:
#: ``--watermark``-style guard so that a readmitted request does not evict another at once).
WATERMARK_FRAC = 0.01


class ReplicaRun:
    """The event loop of one run (state in plain attributes and lists: this is the hot path)."""

    def __init__(
        self,
        engine: EngineStep,
        limits: ReplicaLimits,
        workload: ServingWorkload,
        prompts: list[int],
        outputs: list[int],
        shape: DraftShape | None,
        alpha: float | None,
    ) -> None:
        self.engine = engine
        self.limits = limits
        self.workload = workload
        self.prompts, self.outputs = prompts, outputs
        self.shape = engine.interned(shape) if shape is not None else None  # the engine's step plans of it
        self.k = shape.k if shape is not None else None
        self.alpha = alpha
        self.progress = shape.tokens_per_step(alpha) if shape is not None and alpha is not None else 1.0
        # query tokens a decoding request takes of the step's token budget: 1, K + 1, or a tree's verify budget
        self.tokens_per_decode = shape.verify_tokens if shape is not None else 1
        self.multi_step = MultiStep(engine.profile.scheduler_steps)

    def run(self, watch: ObjectiveWatch | None = None) -> ServingMetrics:
        """The run's metrics; with ``watch``, :class:`planner.speed.objective_watch.CertainMiss` as soon as the
        run is certain to miss one of its objectives (each request's TTFT and TPOT counted as the metrics compute
        them)."""
        lim, wl = self.limits, self.workload
        n = len(self.prompts)
        prompts, outputs = self.prompts, self.outputs
        arrival = [0.0] * n
        first_token = [0.0] * n
        admitted = [-1.0] * n
        finish = [0.0] * n
        done_tokens = [0] * n  # prompt (+ recomputed) tokens already prefilled
        need = list(prompts)  # tokens to prefill (prompt, plus generated ones after a preemption)
        generated0 = [0.0] * n  # tokens generated when the request (re)joined the decode set
        joined_at = [0.0] * n  # global progress G when it (re)joined
        alive = [0] * n  # generation counter for lazy heap deletion
        if wl.mode == "concurrency":
            pending = deque(range(n))
            upcoming: deque[int] = deque()
        else:
            times = wl.arrivals()
            for i, t in enumerate(times):
                arrival[i] = t
            upcoming = deque(range(n))
            pending = deque()
        waiting: deque[int] = deque()
        prefilling: deque[int] = deque()
        heap: list[tuple[float, int, int]] = []
        decoding_order: list[int] = []  # admission order, for preemption (newest last)
        in_decode = [False] * n
        n_dec = 0
        acc = 0.0  # Σ (prompt + generated0 − joined_at) over decoding requests
        g = 0.0
        kv_prefill = 0  # KV tokens held by requests still prefilling
        t = 0.0
        completed = 0
        preemptions = 0
        steps = 0
        flops = moved = busy = 0.0
        occupancy: list[tuple[float, int]] = []
        weighted_batch = 0.0
        max_batch = 0
        emitted = 0.0  # output tokens emitted so far (expected), for the steady window
        trace: list[tuple[float, float]] = []
        padded_steps = 0
        padding = 0.0
        graph_run = self.engine.graph_run
        graph_runs = self.engine.graph_runs  # graph_run's kept answers, read first: one per step
        step_totals, shape = self.engine.step_totals, self.shape
        blocked = {"queue": 0.0}
        prog = self.progress
        per_dec = self.tokens_per_decode
        look = lim.lookahead_tokens_per_seq
        capacity = lim.kv_cache_tokens
        watermark = WATERMARK_FRAC * capacity
        if wl.mode == "concurrency":
            for _ in range(min(wl.concurrency or 0, n)):
                i = pending.popleft()
                arrival[i] = 0.0
                upcoming.append(i)

        reserve = lim.reserves_output
        reserved = [0.0] * n  # KV held for the whole request when the engine reserves outputs
        kv_fixed = 0.0

        def kv_used() -> float:
            return kv_fixed if reserve else kv_prefill + acc + n_dec * (g + look)

        misses = MissCounts(watch, n, sum(1 for out in outputs if out > 1)) if watch is not None else None

        def complete(i: int, reported: float | None = None) -> None:
            """Request ``i`` finished at ``t`` (its client told at ``reported``, by default then): its reserved KV
            is freed; a closed-loop client sends its next one."""
            nonlocal completed, kv_fixed
            done = finish[i] = t if reported is None else reported
            if misses is not None and outputs[i] > 1:
                misses.tpot((done - first_token[i]) / (outputs[i] - 1))
            completed += 1
            kv_fixed -= reserved[i]
            if pending:
                j = pending.popleft()
                arrival[j] = done
                upcoming.append(j)

        step_limit = 20 * (sum(prompts) + sum(outputs)) + 10_000
        token_budget, max_seqs = lim.max_num_batched_tokens, lim.max_num_seqs
        chunked, mixed = lim.chunked_prefill, lim.mixed_prefill
        multi_step = self.multi_step.steps > 1
        closed_loop = wl.mode == "concurrency"
        iterations = 0
        while completed < n:
            if steps > step_limit:
                raise PlannerError(
                    "the simulation made no progress (KV cache too small for this workload)", field="workload"
                )
            iterations += 1  # scheduling rounds (runs of identical decode steps count once): the run's cost
            if iterations > MAX_SIMULATION_STEPS:
                raise PlannerError(
                    f"the simulation reached its limit of {MAX_SIMULATION_STEPS:,} scheduling steps (the work budget "
                    "of one run): simulate fewer prompts, or a larger max_num_batched_tokens",
                    field="workload",
                )
            # a request that arrives as a step ends (a closed-loop client's next one, sent when its last finished)
            # misses the step the engine starts at that instant: the response reaches the client and the new
            # request the engine only after it has begun; an idle engine takes it at once
            idle = not waiting and not prefilling and n_dec == 0
            while upcoming and (arrival[upcoming[0]] < t or (idle and arrival[upcoming[0]] <= t)):
                waiting.append(upcoming.popleft())
            if not waiting and not prefilling and n_dec == 0:
                if not upcoming:
                    break
                t = arrival[upcoming[0]]
                continue
            # preempt the newest decoding requests while this step's growth does not fit; a step that preempts
            # admits no waiting request (vllm/v1/core/sched/scheduler.py: waiting requests are scheduled only
            # "if not preempted_reqs")
            preempted_now = False
            while n_dec > 1:
                used = kv_fixed if reserve else kv_prefill + acc + n_dec * (g + look)  # kv_used(), inlined: hot
                if used + n_dec * prog <= capacity:
                    break
                preempted_now = True
                while not in_decode[decoding_order[-1]]:
                    decoding_order.pop()
                i = decoding_order.pop()
                in_decode[i] = False
                alive[i] += 1
                gen = generated0[i] + g - joined_at[i]
                acc -= prompts[i] + generated0[i] - joined_at[i]
                n_dec -= 1
                need[i] = prompts[i] + int(gen)
                done_tokens[i] = 0
                generated0[i] = gen
                waiting.appendleft(i)
                preemptions += 1
            # schedule: decodes first, then prefill chunks under the token budget
            budget = token_budget
            running = n_dec + len(prefilling)
            # room a new prompt must leave: this step's growth and the block manager's watermark
            headroom = (0.0 if reserve else n_dec * prog) + watermark
            prefill_work = bool(prefilling) or (
                bool(waiting)
                and not preempted_now
                and running < max_seqs
                and (kv_fixed if reserve else kv_prefill + acc + n_dec * (g + look)) + need[waiting[0]] + headroom
                <= capacity
            )
            decode_now = n_dec > 0 and (mixed or not prefill_work)
            if decode_now:
                budget -= n_dec * per_dec
            # this step's prefill chunks, summed as Chunks.add sums them; a step with none shares the empty mix
            chunk_tokens = chunk_seqs = 0
            chunk_positions = chunk_context = 0.0
            finishing_prefill: list[int] = []
            reason = ""
            if mixed or not decode_now:
                for i in prefilling:
                    if budget <= 0:
                        break
                    take = min(need[i] - done_tokens[i], budget)
                    chunk_tokens += take
                    chunk_seqs += 1
                    chunk_positions += take * (done_tokens[i] + (take + 1) / 2)
                    chunk_context += done_tokens[i]
                    done_tokens[i] += take
                    budget -= take
                    if done_tokens[i] >= need[i]:
                        finishing_prefill.append(i)
                while waiting and not preempted_now:
                    i = waiting[0]
                    if running >= max_seqs:
                        reason = "max_num_seqs"
                        break
                    extra = outputs[i] - generated0[i] + look if reserve else 0.0
                    used = kv_fixed if reserve else kv_prefill + acc + n_dec * (g + look)  # kv_used(), inlined: hot
                    if used + need[i] + extra + headroom > capacity:
                        reason = "kv_cache"
                        break
                    if budget <= 0 or (
                        not chunked
                        and need[i] > budget
                        and (chunk_tokens > 0 or (decode_now and need[i] <= token_budget))
                    ):
                        reason = "token_budget"
                        break
                    waiting.popleft()
                    if admitted[i] < 0:
                        admitted[i] = t
                    prefilling.append(i)
                    kv_prefill += need[i]
                    reserved[i] = need[i] + extra
                    kv_fixed += reserved[i]
                    running += 1
                    take = min(need[i], budget) if chunked else need[i]
                    chunk_tokens += take  # a new prompt's chunk: nothing cached before it
                    chunk_seqs += 1
                    chunk_positions += take * ((take + 1) / 2)
                    done_tokens[i] = take
                    budget -= take
                    if take >= need[i]:
                        finishing_prefill.append(i)
            elif waiting:
                reason = "token_budget"
            if preempted_now and waiting and not reason:
                reason = "kv_cache"
            dec = n_dec if decode_now else 0
            chunks = Chunks(chunk_tokens, chunk_seqs, chunk_positions, chunk_context) if chunk_tokens else NO_CHUNKS
            if dec == 0 and chunk_tokens == 0:
                # nothing can run (cache full with a single long request): wait for an arrival
                if upcoming:
                    t = max(t, arrival[upcoming[0]])
                    continue
                raise PlannerError("a request does not fit the KV cache even alone", field="max_model_len")
            context = acc + n_dec * g
            # how many identical decode steps can run before something changes
            m = 1
            bounded = None  # (m, the run's totals) where it was priced to bound m by the next arrival
            if dec and chunks.tokens == 0 and not finishing_prefill:
                while heap and alive[heap[0][2]] != heap[0][1]:
                    heapq.heappop(heap)
                # (comparisons, not min and max: this runs once per scheduling round)
                if heap:  # steps to the next completion
                    m = math.ceil((heap[0][0] - g) / prog - 1e-9)
                room = capacity - (kv_fixed if reserve else kv_prefill + acc + n_dec * (g + look))  # kv_used()
                if room > 0:  # and that the cache holds the growth of, at least one
                    fit = int(room / (n_dec * prog))
                    m = fit if fit < m else m
                    m = m if m > 1 else 1
                else:
                    m = 1
                if m > 1 and (upcoming or (closed_loop and pending)):
                    can_admit = not waiting and running < max_seqs
                    if upcoming and can_admit:  # and until the next arrival: as many steps as their price at the
                        # run's mean context fits in the gap (dearer than the first step's as the context grows: the
                        # run ends within a step of the arrival, where over a long gap the difference adds up)
                        gap = arrival[upcoming[0]] - t
                        most = m
                        bounded = (m, step_totals(shape, dec, context + n_dec * prog * (m - 1) / 2, chunks))
                        until = math.ceil(gap / bounded[1][0])
                        if until < m:
                            m = until if until > 1 else 1
                            if m > 1:  # a shorter run is cheaper per step: priced again at its own mean context
                                bounded = (m, step_totals(shape, dec, context + n_dec * prog * (m - 1) / 2, chunks))
                                until = math.ceil(gap / bounded[1][0])
                                m = until if until < most else most
            frozen = multi_step and dec and chunks.tokens == 0
            if frozen:  # multi-step scheduling: the whole frozen chunk, whatever arrives or finishes in it
                m = self.multi_step.chunk_steps(capacity - kv_used(), n_dec * prog)
            if bounded is not None and bounded[0] == m:
                step_s, step_flops, step_bytes = bounded[1]
            elif m > 1:
                step_s, step_flops, step_bytes = step_totals(shape, dec, context + n_dec * prog * (m - 1) / 2, chunks)
            else:
                step_s, step_flops, step_bytes = step_totals(shape, dec, context, chunks)
            dt = step_s * m
            pad, _ = graph_runs.get((dec, per_dec, chunks.tokens)) or graph_run(dec, per_dec, chunks.tokens)
            if pad:
                padded_steps += m
                padding += m * pad / (pad + dec * per_dec + chunks.tokens)
            steps += m
            flops += step_flops * m
            moved += step_bytes * m
            busy += dt
            batch_now = dec + chunks.seqs
            weighted_batch += batch_now * dt
            max_batch = batch_now if batch_now > max_batch else max_batch
            if waiting:
                key = reason or "queue"
                blocked[key] = blocked.get(key, 0.0) + dt
            occupancy.append((t, n_dec + len(prefilling)))
            t += dt
            if dec:
                g += prog * m
                emitted += dec * prog * m
            # prefills that completed emit their first token and join the decode set
            firsts = 0
            for i in finishing_prefill:
                prefilling.remove(i)
                kv_prefill -= need[i]
                if first_token[i] == 0.0:
                    firsts += 1
                    first_token[i] = t
                    if misses is not None:
                        misses.ttft(t - arrival[i])
                gen = generated0[i] + (1.0 if need[i] == prompts[i] else 0.0)
                if gen >= outputs[i]:
                    complete(i)
                    continue
                generated0[i] = gen
                joined_at[i] = g
                acc += prompts[i] + gen - g
                n_dec += 1
                in_decode[i] = True
                decoding_order.append(i)
                heapq.heappush(heap, (g + outputs[i] - gen, alive[i], i))
            if firsts:
                emitted += firsts
            trace.append((t, emitted))
            # completions
            while heap and heap[0][0] <= g + 1e-9:
                done_at, gen_id, i = heapq.heappop(heap)
                if alive[i] != gen_id or not in_decode[i]:
                    continue
                reported = None
                if frozen:  # a frozen chunk computed it past its last token: those tokens were never emitted
                    emitted -= g - done_at
                    trace[-1] = (t, emitted)
                    last = math.ceil((done_at - (g - prog * m)) / prog - 1e-9)  # the chunk's step of its last token
                    reported = t - dt + self.multi_step.reported_after(last, m) * step_s
                in_decode[i] = False
                acc -= prompts[i] + generated0[i] - joined_at[i]
                n_dec -= 1
                complete(i, reported)
        self.padding = (padded_steps, padding / padded_steps if padded_steps else 0.0)
        return self._metrics(
            arrival, admitted, first_token, finish, t, steps, flops, moved, busy, weighted_batch, max_batch,
            blocked, occupancy, preemptions, trace,
        )  # fmt: skip

    def _metrics(
        self, arrival, admitted, first_token, finish, end, steps, flops, moved, busy, weighted, max_batch, blocked,
        occupancy, preemptions, trace,
    ) -> ServingMetrics:  # fmt: skip
        n = len(arrival)
        start = min(arrival)
        duration = max(end - start, 1e-12)
        e2e = [done - arrived for done, arrived in zip(finish, arrival, strict=True)]
        lifetime = sum(e2e) / n
        clients = min(n, self.workload.concurrency) if self.workload.mode == "concurrency" else None
        completions = sorted(finish) if clients else []
        steady_tok_s, window, steady = steady_state(
            trace, warm_up_end(admitted, first_token, finish), max(admitted), start, end, lifetime,
            (completions, clients) if clients else None,
        )  # fmt: skip
        ttft = [first - arrived for first, arrived in zip(first_token, arrival, strict=True)]
        # time per output token after the first, per request (a one-token request has none)
        per_token = [
            (done - first) / (out - 1) if out > 1 else None
            for done, first, out in zip(finish, first_token, self.outputs, strict=True)
        ]
        tpot = sorted([v for v in per_token if v is not None])
        ttft_sorted = sorted(ttft)  # sorted once: the percentiles below re-sort a sorted list in one pass
        # the requests that arrived in the steady window: a closed loop's first round (every client at once) and
        # the drain are left out, and its last round (served partly while the batch drains)
        low, high = window
        if clients:  # a closed loop's arrivals come as requests complete, in any order
            high = last_round_start(completions, low, high, clients)
            inside = [i for i, arrived in enumerate(arrival) if low <= arrived <= high] if steady else []
            if not inside:
                inside = list(range(n))
            steady_ttft = [ttft[i] for i in inside]
            steady_tpot = [per_token[i] for i in inside if per_token[i] is not None]
        else:  # arrivals in order: the window's are a slice
            first, last = (bisect_left(arrival, low), bisect_right(arrival, high)) if steady else (0, 0)
            if first >= last:
                first, last = 0, n
            steady_ttft = ttft[first:last]
            steady_tpot = [v for v in per_token[first:last] if v is not None]
        queue = [
            joined - arrived if joined > arrived else 0.0 for joined, arrived in zip(admitted, arrival, strict=True)
        ]
        out_tokens = sum(self.outputs)
        total_tokens = out_tokens + sum(self.prompts)
        limited, fractions = limited_by(self.workload.mode, blocked, duration, self.limits.request_cap_reason)
        stride = max(1, len(occupancy) // OCCUPANCY_POINTS)
        target = self.engine.target
        return ServingMetrics(
            speculative=self.k is not None,
            k=self.k,
            alpha=self.alpha,
            verification=self.shape.verification if self.shape is not None else "chain",
            tree_widths=self.shape.widths if self.shape is not None and self.shape.verification == "tree" else (),
            tokens_per_step=self.progress,
            requests=n,
            duration_s=duration,
            requests_per_s=n / duration,
            output_tokens_per_s=out_tokens / duration,
            total_tokens_per_s=total_tokens / duration,
            steady_output_tokens_per_s=steady_tok_s,
            steady_requests_per_s=steady_tok_s / (out_tokens / n),
            steady_window_s=window,
            steady=steady,
            ttft_s=Percentiles.of(ttft_sorted),
            tpot_s=Percentiles.of(tpot),
            steady_ttft_s=Percentiles.of(steady_ttft),
            steady_tpot_s=Percentiles.of(steady_tpot),
            e2e_latency_s=Percentiles.of(e2e),
            queueing_delay_s=Percentiles.of(queue),
            mean_batch_size=weighted / busy if busy else 0.0,
            max_batch_size=max_batch,
            preemptions=preemptions,
            steps=steps,
            padded_steps=self.padding[0],
            mean_padding_frac=self.padding[1],
            limited_by=limited,
            blocked_frac=fractions,
            occupancy=occupancy[::stride],
            busy_frac=min(1.0, busy / duration),
            delivered_flops_per_s=flops / duration,
            delivered_bytes_per_s=moved / duration,
            peak_flops_per_s=target.peak_flops,
            peak_bytes_per_s=target.bandwidth,
            limits=self.limits,
            ttft_values_s=ttft_sorted,
            tpot_values_s=tpot,
        )
