"""A real speculative-decoding loop over transformers models, counting what the target accepts per step.

One step (Leviathan et al. 2023, Algorithm 1; Chen et al. 2023 for sampling):

1. the draft proposes ``K`` tokens autoregressively from its own KV cache;
2. the target scores ``[last] + drafts`` (K+1 tokens) in one forward over its KV cache;
3. greedy: drafts are accepted while they equal the target's argmax; sampled: draft token ``d`` at
   position i is accepted with probability ``min(1, p_i(d) / q_i(d))``, a rejection resamples from
   ``norm(max(0, p_i − q_i))``; after ``n`` accepted drafts the target adds one token of its own
   (the correction, or the bonus token when all K are accepted);
4. both caches roll back the rejected positions (``DynamicCache.crop(-r)``).

The accepted count ``n`` of every step is kept, so α, τ and the per-position acceptance are exact
(:mod:`planner.measure.acceptance_counts`). The same prompts run without the draft for the baseline.
Every step drafts the full K (an exact-copy draft gives τ = K+1 exactly); tokens past
``max_new_tokens`` are cut from the output but counted in the timing. EOS is ignored, as in serving
benchmarks (``ignore_eos``), so every prompt produces exactly ``max_new_tokens``.
Logits are restricted to the ids both vocabularies share (Qwen2.5 7B has 152,064 rows, 0.5B 151,936;
the extra rows are padding), in the baseline as well, so greedy outputs stay comparable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import torch
from pydantic import BaseModel

from planner.measure.model_loading import LoadedModel
from planner.measure.torch_memory import cache_bytes, sync

Mode = Literal["greedy", "sampled"]


class DecodeSettings(BaseModel):
    k: int
    max_new_tokens: int
    mode: Mode = "greedy"
    temperature: float = 1.0
    seed: int = 0
    #: Ids the two models share: logits beyond it are never chosen.
    vocab_size: int


class Trace(BaseModel):
    """One generation of one prompt (speculative or baseline)."""

    tokens: list[int]
    emitted_tokens: int
    accepted_per_step: list[int] = []
    ttft_s: float
    decode_s: float
    wall_s: float
    draft_s: float = 0.0
    verify_s: float = 0.0
    target_kv_bytes: int = 0
    draft_kv_bytes: int = 0

    @property
    def decode_tokens(self) -> int:
        """Tokens produced after the first (the first comes from the prefill)."""
        return max(0, self.emitted_tokens - 1)


class PromptResult(BaseModel):
    index: int
    task: str
    prompt_tokens: int
    speculative: Trace
    baseline: Trace
    #: Greedy only: the speculative output equals the baseline output token for token.
    outputs_match: bool | None = None


def _new_cache(model: LoadedModel) -> Any:
    from transformers.cache_utils import DynamicCache

    return DynamicCache(config=model.model.config)


class _Chooser:
    """Greedy argmax, or seeded sampling at ``temperature`` over the shared vocabulary."""

    def __init__(self, settings: DecodeSettings, device: str, seed: int) -> None:
        self.greedy = settings.mode == "greedy"
        self.temperature = settings.temperature
        self.vocab = settings.vocab_size
        self.generator = torch.Generator(device=device).manual_seed(seed)

    def probs(self, logits: torch.Tensor) -> torch.Tensor:
        return torch.softmax(logits[..., : self.vocab].float() / self.temperature, dim=-1)

    def pick(self, logits: torch.Tensor) -> tuple[int, torch.Tensor | None]:
        """The chosen id and (sampled mode) the distribution it was drawn from."""
        if self.greedy:
            return int(torch.argmax(logits[..., : self.vocab], dim=-1)), None
        probs = self.probs(logits)
        return int(torch.multinomial(probs, 1, generator=self.generator)), probs

    def sample(self, probs: torch.Tensor) -> int:
        return int(torch.multinomial(probs, 1, generator=self.generator))

    def uniform(self, device: torch.device) -> float:
        return float(torch.rand((), generator=self.generator, device=device))


def _forward(model: LoadedModel, ids: list[int], cache: Any, device: str, keep: int) -> torch.Tensor:
    """Logits of the last ``keep`` positions (0 = all) for ``ids`` appended to ``cache``."""
    tensor = torch.tensor([ids], dtype=torch.long, device=device)
    out = model.model(input_ids=tensor, use_cache=True, logits_to_keep=keep, **{model.cache_kwarg: cache})
    return out.logits[0]


def _rollback(cache: Any, tokens: int) -> None:
    """Drop the last ``tokens`` positions (rejected drafts); ``crop(0)`` trims sliding-window layers."""
    cache.crop(-tokens if tokens > 0 else 0)


def _enable_rollback(cache: Any) -> None:
    """After the prefill (as transformers' assisted generation does): sliding layers keep what a rollback needs."""
    if hasattr(cache, "activate_past_recording"):
        cache.activate_past_recording()


@torch.inference_mode()
def plain_decode(target: LoadedModel, prompt: list[int], settings: DecodeSettings, device: str, seed: int) -> Trace:
    """The baseline: target alone, one token per step, over the same DynamicCache."""
    chooser = _Chooser(settings, device, seed)
    cache = _new_cache(target)
    sync(device)
    start = time.perf_counter()
    token, _ = chooser.pick(_forward(target, prompt, cache, device, keep=1)[-1])
    sync(device)
    ttft = time.perf_counter() - start
    tokens = [token]
    while len(tokens) < settings.max_new_tokens:
        token, _ = chooser.pick(_forward(target, [token], cache, device, keep=1)[-1])
        tokens.append(token)
    sync(device)
    wall = time.perf_counter() - start
    return Trace(
        tokens=tokens,
        emitted_tokens=len(tokens),
        ttft_s=ttft,
        decode_s=wall - ttft,
        wall_s=wall,
        target_kv_bytes=cache_bytes(cache),
    )


def _verify_greedy(chooser: _Chooser, logits: torch.Tensor, drafted: list[int]) -> tuple[int, int]:
    best = torch.argmax(logits[:, : chooser.vocab], dim=-1).tolist()
    n = 0
    while n < len(drafted) and drafted[n] == best[n]:
        n += 1
    return n, int(best[n])


def _verify_sampled(
    chooser: _Chooser, logits: torch.Tensor, drafted: list[int], draft_probs: list[torch.Tensor]
) -> tuple[int, int]:
    p = chooser.probs(logits)
    for i, token in enumerate(drafted):
        q = draft_probs[i]
        ratio = float(p[i, token] / q[token]) if float(q[token]) > 0 else 0.0
        if chooser.uniform(p.device) < min(1.0, ratio):
            continue
        residual = torch.clamp(p[i] - q, min=0.0)
        total = float(residual.sum())
        return i, chooser.sample(residual / total if total > 0 else p[i])
    return len(drafted), chooser.sample(p[len(drafted)])


@torch.inference_mode()
def speculative_decode(
    target: LoadedModel, draft: LoadedModel, prompt: list[int], settings: DecodeSettings, device: str, seed: int
) -> Trace:
    """Draft K, verify K+1, accept a prefix, roll back; the accepted count of each step is recorded."""
    chooser = _Chooser(settings, device, seed)
    k = settings.k
    target_cache, draft_cache = _new_cache(target), _new_cache(draft)
    sync(device)
    start = time.perf_counter()
    _forward(draft, prompt, draft_cache, device, keep=1)  # the draft's own prefill
    token, _ = chooser.pick(_forward(target, prompt, target_cache, device, keep=1)[-1])
    _enable_rollback(target_cache)
    _enable_rollback(draft_cache)
    sync(device)
    ttft = time.perf_counter() - start
    seq = [*prompt, token]
    accepted: list[int] = []
    draft_s = verify_s = 0.0
    peak_target = peak_draft = 0
    while len(seq) - len(prompt) < settings.max_new_tokens:
        t0 = time.perf_counter()
        feed = seq[draft_cache.get_seq_length() :]  # 1 token, or 2 after a step that accepted all K
        drafted: list[int] = []
        draft_probs: list[torch.Tensor] = []
        for _ in range(k):
            pick, probs = chooser.pick(_forward(draft, feed, draft_cache, device, keep=1)[-1])
            drafted.append(pick)
            if probs is not None:
                draft_probs.append(probs)
            feed = [pick]
        sync(device)
        t1 = time.perf_counter()
        logits = _forward(target, [seq[-1], *drafted], target_cache, device, keep=0)
        if chooser.greedy:
            n, correction = _verify_greedy(chooser, logits, drafted)
        else:
            n, correction = _verify_sampled(chooser, logits, drafted, draft_probs)
        sync(device)
        verify_s += time.perf_counter() - t1
        draft_s += t1 - t0
        peak_target = max(peak_target, cache_bytes(target_cache))
        peak_draft = max(peak_draft, cache_bytes(draft_cache))
        _rollback(target_cache, k - n)  # keeps [last, d1..dn]
        _rollback(draft_cache, max(0, (k - 1) - n))  # it holds [.., last, d1..d(K-1)]
        accepted.append(n)
        seq.extend([*drafted[:n], correction])
    sync(device)
    wall = time.perf_counter() - start
    generated = seq[len(prompt) :]
    return Trace(
        tokens=generated[: settings.max_new_tokens],
        emitted_tokens=len(generated),
        accepted_per_step=accepted,
        ttft_s=ttft,
        decode_s=wall - ttft,
        wall_s=wall,
        draft_s=draft_s,
        verify_s=verify_s,
        target_kv_bytes=max(peak_target, cache_bytes(target_cache)),
        draft_kv_bytes=max(peak_draft, cache_bytes(draft_cache)),
    )


def run_prompts(
    target: LoadedModel,
    draft: LoadedModel,
    prompts: list[tuple[str, list[int]]],
    settings: DecodeSettings,
    device: str,
    *,
    warmup: bool = True,
    progress: Callable[[str], None] | None = None,
) -> list[PromptResult]:
    """Baseline then speculative for every ``(task, token ids)`` prompt; a short unrecorded warm-up first."""
    if warmup and prompts:
        short = settings.model_copy(update={"max_new_tokens": min(settings.max_new_tokens, 2 * settings.k + 2)})
        plain_decode(target, prompts[0][1], short, device, seed=settings.seed)
        speculative_decode(target, draft, prompts[0][1], short, device, seed=settings.seed)
    results = []
    for index, (task, ids) in enumerate(prompts):
        seed = settings.seed + index
        base = plain_decode(target, ids, settings, device, seed=seed)
        spec = speculative_decode(target, draft, ids, settings, device, seed=seed)
        results.append(
            PromptResult(
                index=index,
                task=task,
                prompt_tokens=len(ids),
                speculative=spec,
                baseline=base,
                outputs_match=(spec.tokens == base.tokens) if settings.mode == "greedy" else None,
            )
        )
        if progress is not None:
            progress(f"prompt {index + 1}/{len(prompts)} ({task}): accepted {spec.accepted_per_step[:8]}...")
    return results
