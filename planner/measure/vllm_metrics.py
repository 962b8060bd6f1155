"""vLLM's speculative-decoding metrics, parsed and converted to α, τ and per-position acceptance.

Three sources, each converted as docs/acceptance.md explains (ρ is not α):

* the V1 log line ``SpecDecoding metrics: Mean acceptance length: τ, ..., Accepted: A tokens,
  Drafted: D tokens, Per-position acceptance rate: r0, r1, ..., Avg Draft acceptance rate: ρ%``
  (https://github.com/vllm-project/vllm/blob/main/vllm/v1/spec_decode/metrics.py) — τ includes the
  bonus token, ρ = A / D;
* the V1 Prometheus counters ``vllm:spec_decode_num_drafts``, ``..._num_draft_tokens``,
  ``..._num_accepted_tokens``, ``..._num_accepted_tokens_per_pos{position=i}`` (with or without the
  ``_total`` suffix), or the same counters from ``LLM.get_metrics()``: τ = 1 + accepted / drafts;
* the V0 line ``Speculative metrics: Draft acceptance rate: ..., System efficiency: e, Number of
  speculative tokens: K, ...`` (https://github.com/vllm-project/vllm/issues/9539): V0's acceptance rate
  counts accepted tokens at any position, so only the efficiency converts, τ = e · (K+1).

α is then the root of τ(α, K) = τ (:func:`planner.acceptance_math.alpha_from_tau`); where per-position
rates exist, position 0 is also reported (the reference's direct estimate of α).

>>> line = ("SpecDecoding metrics: Mean acceptance length: 3.00, Accepted throughput: 9.00 tokens/s, "
...         "Drafted throughput: 9.00 tokens/s, Accepted: 90 tokens, Drafted: 90 tokens, "
...         "Per-position acceptance rate: 1.000, 1.000, Avg Draft acceptance rate: 100.0%")
>>> m = parse_spec_log(line); m.k, m.mean_accepted_len, m.alpha
(2, 3.0, 1.0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from planner.acceptance_math import alpha_from_tau, tau_from_system_efficiency
from planner.errors import InputError

_NUM = r"([0-9]+(?:\.[0-9]+)?)"
_V1 = re.compile(
    r"SpecDecoding metrics:\s*Mean acceptance length:\s*" + _NUM + r"(?P<rest>.*)",
    re.IGNORECASE,
)
_V1_ACCEPTED = re.compile(r"Accepted:\s*([0-9]+)\s*tokens", re.IGNORECASE)
_V1_DRAFTED = re.compile(r"Drafted:\s*([0-9]+)\s*tokens", re.IGNORECASE)
_V1_POSITIONS = re.compile(r"Per-position acceptance rate:\s*((?:[0-9.]+\s*,?\s*)+?)(?:,?\s*Avg|$)", re.IGNORECASE)
_V1_RHO = re.compile(r"Avg Draft acceptance rate:\s*" + _NUM + r"\s*%", re.IGNORECASE)
_V1_DEPTH = re.compile(r"Current speculative depth:\s*([0-9]+)", re.IGNORECASE)
_V0 = re.compile(
    r"Speculative metrics:\s*Draft acceptance rate:\s*"
    + _NUM
    + r",\s*System efficiency:\s*"
    + _NUM
    + r",\s*Number of speculative tokens:\s*([0-9]+)(?P<rest>.*)",
    re.IGNORECASE,
)
_V0_COUNT = {
    "accepted": re.compile(r"Number of accepted tokens:\s*([0-9]+)", re.IGNORECASE),
    "drafted": re.compile(r"Number of draft tokens:\s*([0-9]+)", re.IGNORECASE),
    "emitted": re.compile(r"Number of emitted tokens:\s*([0-9]+)", re.IGNORECASE),
}
_PROM = re.compile(r"^(vllm:spec_decode_[a-z_]+?)(?:_total)?(\{[^}]*\})?\s+([-+0-9.eE]+|NaN)\s*$")
_POSITION = re.compile(r'position="?([0-9]+)"?')


class SpecAcceptance(BaseModel):
    """Acceptance converted to the planner's symbols (α, τ, ρ), with where it came from."""

    source: str
    k: int
    mean_accepted_len: float
    alpha: float
    alpha_first_position: float | None = None
    draft_acceptance_rate: float | None = None
    acceptance_by_position: list[float] = []
    drafts: float | None = None
    drafted_tokens: float | None = None
    accepted_tokens: float | None = None
    #: A reported figure that is *not* the prefix acceptance (vLLM V0's draft acceptance rate).
    v0_any_position_rate: float | None = None
    lines: int = 1
    notes: list[str] = []


def _convert(source: str, k: int, tau: float, **fields: Any) -> SpecAcceptance:
    tau = min(float(k + 1), max(1.0, tau))  # logs round to 2 decimals
    positions = fields.get("acceptance_by_position") or []
    return SpecAcceptance(
        source=source,
        k=k,
        mean_accepted_len=tau,
        alpha=alpha_from_tau(tau, k),
        alpha_first_position=positions[0] if positions else None,
        **fields,
    )


def _v1_lines(text: str) -> list[dict[str, Any]]:
    found = []
    for match in _V1.finditer(text):
        rest = match.group("rest")
        positions_match = _V1_POSITIONS.search(rest)
        positions = (
            [float(x) for x in re.findall(r"[0-9]+(?:\.[0-9]+)?", positions_match.group(1))] if positions_match else []
        )
        accepted = _V1_ACCEPTED.search(rest)
        drafted = _V1_DRAFTED.search(rest)
        rho = _V1_RHO.search(rest)
        depth = _V1_DEPTH.search(rest)
        found.append(
            {
                "tau": float(match.group(1)),
                "accepted": int(accepted.group(1)) if accepted else None,
                "drafted": int(drafted.group(1)) if drafted else None,
                "positions": positions,
                "rho": float(rho.group(1)) / 100 if rho else None,
                "k": int(depth.group(1)) if depth else (len(positions) or None),
            }
        )
    return found


def _from_v1(lines: list[dict[str, Any]], k: int | None) -> SpecAcceptance:
    k = k or next((line["k"] for line in lines if line["k"]), None)
    if not k:
        raise InputError("k", None, "the draft length K (the log line has no per-position rates to count)")
    counted = [line for line in lines if line["accepted"] is not None and line["drafted"]]
    notes = []
    if counted:
        accepted = sum(line["accepted"] for line in counted)
        drafted = sum(line["drafted"] for line in counted)
        drafts = drafted / k
        tau = 1 + accepted / drafts
        positions: list[float] = []
        weighted = [line for line in counted if len(line["positions"]) == k]
        if weighted:
            total = sum(line["drafted"] for line in weighted)
            positions = [sum(line["positions"][i] * line["drafted"] for line in weighted) / total for i in range(k)]
        if len(lines) > 1:
            notes.append(f"{len(counted)} metric lines summed (each covers one logging interval)")
        return _convert(
            "vLLM V1 SpecDecoding log",
            k,
            tau,
            draft_acceptance_rate=accepted / drafted,
            acceptance_by_position=positions,
            drafts=drafts,
            drafted_tokens=drafted,
            accepted_tokens=accepted,
            lines=len(lines),
            notes=notes,
        )
    last = lines[-1]  # only the rounded mean: use the latest interval
    return _convert(
        "vLLM V1 SpecDecoding log (mean acceptance length only)",
        k,
        last["tau"],
        draft_acceptance_rate=last["rho"],
        acceptance_by_position=last["positions"] if len(last["positions"]) == k else [],
        lines=len(lines),
    )


def _from_v0(text: str, k: int | None) -> SpecAcceptance | None:
    matches = list(_V0.finditer(text))
    if not matches:
        return None
    last = matches[-1]  # V0 counters are cumulative: the last line covers the whole run
    rate, efficiency, logged_k = float(last.group(1)), float(last.group(2)), int(last.group(3))
    k = k or logged_k
    counts = {name: pattern.search(last.group("rest")) for name, pattern in _V0_COUNT.items()}
    values = {name: int(m.group(1)) for name, m in counts.items() if m}
    tau = tau_from_system_efficiency(max(efficiency, 1 / (k + 1)), k)
    if values.get("drafted") and values.get("emitted"):
        tau = values["emitted"] / (values["drafted"] / k)  # the unrounded efficiency x (K+1)
    return _convert(
        "vLLM V0 Speculative metrics log",
        k,
        tau,
        drafts=values["drafted"] / k if values.get("drafted") else None,
        drafted_tokens=values.get("drafted"),
        accepted_tokens=values.get("accepted"),
        v0_any_position_rate=rate,
        lines=len(matches),
        notes=[
            "V0's 'draft acceptance rate' counts accepted tokens at any position (not the prefix): "
            "only the system efficiency converts, τ = efficiency × (K+1)"
        ],
    )


def parse_spec_log(text: str, k: int | None = None) -> SpecAcceptance | None:
    """Acceptance from vLLM log text (V1 lines preferred, else V0), or None when there is none."""
    lines = _v1_lines(text)
    if lines:
        return _from_v1(lines, k)
    return _from_v0(text, k)


class SpecCounters(BaseModel):
    num_drafts: float = 0.0
    num_draft_tokens: float = 0.0
    num_accepted_tokens: float = 0.0
    accepted_per_pos: list[float] = []


def parse_prometheus(text: str) -> SpecCounters:
    """The four spec-decode counters from Prometheus text, summed over engines/models (not positions)."""
    counters = SpecCounters()
    per_pos: dict[int, float] = {}
    for line in text.splitlines():
        match = _PROM.match(line.strip())
        if not match:
            continue
        name, labels, value = match.group(1).removeprefix("vllm:spec_decode_"), match.group(2) or "", match.group(3)
        number = float(value) if value != "NaN" else 0.0
        if name == "num_accepted_tokens_per_pos":
            position = _POSITION.search(labels)
            if position:
                index = int(position.group(1))
                per_pos[index] = per_pos.get(index, 0.0) + number
        elif name in ("num_drafts", "num_draft_tokens", "num_accepted_tokens"):
            setattr(counters, name, getattr(counters, name) + number)
    counters.accepted_per_pos = [per_pos.get(i, 0.0) for i in range(max(per_pos) + 1)] if per_pos else []
    return counters


def counters_from_metrics(metrics: Iterable[Any]) -> SpecCounters:
    """The same counters from ``vllm.LLM.get_metrics()`` objects (``.name``, ``.value`` / ``.values``)."""
    counters = SpecCounters()
    per_pos: list[float] = []
    for metric in metrics:
        name = str(getattr(metric, "name", "")).removeprefix("vllm:spec_decode_").removesuffix("_total")
        if name == "num_accepted_tokens_per_pos":
            values = list(getattr(metric, "values", []) or [])
            per_pos += [0.0] * (len(values) - len(per_pos))
            for i, v in enumerate(values):
                per_pos[i] += float(v)
        elif name in ("num_drafts", "num_draft_tokens", "num_accepted_tokens"):
            setattr(counters, name, getattr(counters, name) + float(getattr(metric, "value", 0.0)))
    counters.accepted_per_pos = per_pos
    return counters


def acceptance_from_counters(counters: SpecCounters, k: int | None = None, source: str = "vLLM V1 counters"):
    """τ = 1 + accepted / drafts, ρ = accepted / drafted, per position = accepted at i / drafts."""
    if counters.num_drafts <= 0:
        return None
    k = k or len(counters.accepted_per_pos) or round(counters.num_draft_tokens / counters.num_drafts)
    if k < 1:
        return None
    positions = [v / counters.num_drafts for v in counters.accepted_per_pos[:k]]
    return _convert(
        source,
        k,
        1 + counters.num_accepted_tokens / counters.num_drafts,
        draft_acceptance_rate=(
            counters.num_accepted_tokens / counters.num_draft_tokens if counters.num_draft_tokens else None
        ),
        acceptance_by_position=positions if len(positions) == k else [],
        drafts=counters.num_drafts,
        drafted_tokens=counters.num_draft_tokens,
        accepted_tokens=counters.num_accepted_tokens,
    )


def counter_delta(after: SpecCounters, before: SpecCounters) -> SpecCounters:
    """Counters accumulated between two readings (one job on a server that ran others before)."""
    n = max(len(after.accepted_per_pos), len(before.accepted_per_pos))
    pad = lambda v: v + [0.0] * (n - len(v))  # noqa: E731
    return SpecCounters(
        num_drafts=after.num_drafts - before.num_drafts,
        num_draft_tokens=after.num_draft_tokens - before.num_draft_tokens,
        num_accepted_tokens=after.num_accepted_tokens - before.num_accepted_tokens,
        accepted_per_pos=[
            a - b for a, b in zip(pad(after.accepted_per_pos), pad(before.accepted_per_pos), strict=True)
        ],
    )
