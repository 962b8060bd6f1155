"""Multi-step scheduling: decode steps an engine runs per scheduler call, with the batch frozen between calls.

Used by the serving simulator (:mod:`planner.speed.simulate`) where a speed profile's ``scheduler_steps`` is above 1.
"""

from __future__ import annotations


class MultiStep:
    """Multi-step scheduling (vLLM V0's ``--num-scheduler-steps``, the profile's ``scheduler_steps``).

    One scheduler call runs ``steps`` decode steps of a frozen batch. Arrivals wait for the chunk to end and are then
    prefilled in a single step (prefills get no lookahead slots, ``Scheduler._get_num_lookahead_slots``, v0.6.0); a
    sequence that finishes inside the chunk keeps its slot and is computed to the chunk's end. Its client learns of
    the finish a step after its last token (:meth:`reported_after`): the output of each step is processed while the
    next one runs (the asynchronous output processor, ``MultiStepModelRunner._async_process_outputs``), and a
    request that finished gets its response then, mid-chunk (``LLMEngine._process_model_outputs``, "finished_now";
    unfinished ones hear of their tokens only at the chunk's end, which changes neither their TTFT nor their TPOT).
    Each step still costs a full step: the driver skips the scheduler and input preparation, but broadcasts the
    step's inputs to the TP workers every step (``MultiStepWorker._get_driver_input_and_broadcast``,
    ``vllm/worker/multi_step_worker.py``), and V0's profile prices no separate scheduler time. (All of v0.6.0,
    https://github.com/vllm-project/vllm/tree/v0.6.0.)

    >>> MultiStep(10).chunk_steps(room_tokens=1e6, growth_per_step=64)
    10
    >>> MultiStep(10).chunk_steps(room_tokens=300, growth_per_step=64)
    4
    """

    __slots__ = ("steps",)

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def reported_after(self, last_step: int, chunk_steps: int) -> int:
        """The step of a chunk of ``chunk_steps`` at whose end a request whose last token came at step ``last_step``
        is told it finished: the next step's (its output is processed while that step runs), the chunk's last at
        the latest (the chunk's end processes what is left).

        >>> MultiStep(10).reported_after(3, 10), MultiStep(10).reported_after(10, 10)
        (4, 10)
        """
        return min(chunk_steps, last_step + 1)

    def chunk_steps(self, room_tokens: float, growth_per_step: float) -> int:
        """Steps of the next chunk: all of them, fewer only where the KV cache cannot hold their growth."""
        return max(1, min(self.steps, int(room_tokens / growth_per_step))) if room_tokens > 0 else 1
