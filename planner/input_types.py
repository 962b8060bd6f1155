"""The scalar inputs every entry point accepts, as pydantic types: one validation layer.

CLI options, page widgets, query parameters and uploads all reduce to these few kinds of number:
each is finite (NaN and infinities are refused), within bounds that keep the work bounded, and
parsed the same way everywhere. :func:`parse_input` turns a text (a CLI argument, a query
parameter) into a value or an ``InputError`` naming the field.

>>> parse_input(Count, "8", "tp")
8
>>> parse_input(PositiveReal, "nan", "gpu_memory_gib")
Traceback (most recent call last):
...
planner.errors.InputError: gpu_memory_gib = 'nan' is not allowed: expected a finite number > 0 and <= 1e+09
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from planner.errors import InputError

#: The largest count anything in the planner needs (GPUs, tokens, sequences): 2^31 - 1.
MAX_COUNT = 2**31 - 1
#: The largest positive real accepted (GiB of memory, requests/s, USD per GPU-hour, milliseconds).
MAX_REAL = 1e9
#: The smallest positive real accepted: below it, rates and prices round to nothing.
MIN_REAL = 1e-9
#: Random seeds: what numpy and torch accept (unsigned 32-bit for numpy's legacy seeding).
MAX_SEED = 2**32 - 1

#: The work budget of one simulated serving run (``simulate``, the Performance page's sweep, a search):
#: at most this many requests, this predicted work (request-steps: every request's decode steps, output / τ,
#: plus its prefill chunks, prompt / token budget; the sum over steps of the batch) and this many scheduling
#: steps per arm (a run of identical decode steps is one). A run inside the budget takes seconds; one outside
#: is refused with the limit named before it starts, or stopped when it reaches the step limit.
MAX_SIMULATED_REQUESTS = 100_000
MAX_SIMULATION_WORK = 5_000_000
MAX_SIMULATION_STEPS = 100_000
#: Poisson arrival rates a simulation accepts, requests per second (below 1e-6 the run spans weeks of
#: simulated time and rates underflow; above 1e6 no replica keeps up).
MIN_REQUEST_RATE = 1e-6
MAX_REQUEST_RATE = 1e6

Count = Annotated[int, Field(ge=1, le=MAX_COUNT, strict=False)]
PositiveReal = Annotated[float, Field(ge=MIN_REAL, le=MAX_REAL, allow_inf_nan=False)]
Fraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
NonNegativeReal = Annotated[float, Field(ge=0, le=MAX_REAL, allow_inf_nan=False)]
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
RequestRate = Annotated[float, Field(ge=MIN_REQUEST_RATE, le=MAX_REQUEST_RATE, allow_inf_nan=False)]
#: Requests in flight (closed loop) or requests in a run.
RequestCount = Annotated[int, Field(ge=1, le=MAX_SIMULATED_REQUESTS, strict=False)]

#: Every number a person sets, as (lowest, highest) inclusive: the one table that the page widgets
#: (their min/max), the link parser and saved scenarios (planner.scenario.Scenario's fields) and the CLI
#: options (:func:`bounded_input`) all read, so a value one of them accepts is one the others accept.
INPUT_BOUNDS: dict[str, tuple[float, float]] = {
    "tp": (1, 64),
    "pp": (1, 16),
    "k": (1, 64),
    #: vLLM gpu_memory_utilization, SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction.
    "memory_fraction": (0.05, 1.0),
    "max_model_len": (16, MAX_COUNT),
    "max_num_batched_tokens": (16, MAX_COUNT),
    "max_num_seqs": (1, MAX_COUNT),
    "gpu_memory_gib": (0.001, 1e6),
    #: α and ρ lie in [0, 1], τ in [1, K + 1] with K at most 64.
    "acceptance": (0.0, 65.0),
    "batch_size": (1, MAX_COUNT),
    "prompt_tokens": (1, MAX_COUNT),
    "output_tokens": (1, MAX_COUNT),
    "fleet_requests_per_s": (MIN_REAL, MAX_REAL),
    "fleet_prompt_tokens": (1, MAX_COUNT),
    "fleet_output_tokens": (1, MAX_COUNT),
    "fleet_tpot_slo_ms": (0.0, MAX_REAL),
    "fleet_ttft_slo_ms": (0.0, MAX_REAL),
    "fleet_percentile": (1.0, 100.0),
    "fleet_alpha": (0.0, 1.0),
    "fleet_usd_per_gpu_hour": (0.0, 1e6),
    #: Draft Selection ranks pairs at one batch size.
    "selection_batch_size": (1, 1024),
    "selection_alpha": (0.0, 1.0),
}


def bounds_of(name: str) -> dict[str, float]:
    """``INPUT_BOUNDS[name]`` as pydantic ``Field`` keywords.

    >>> bounds_of("tp")
    {'ge': 1, 'le': 64}
    """
    low, high = INPUT_BOUNDS[name]
    return {"ge": low, "le": high}


def within_bounds(name: str, value: object) -> bool:
    """True when ``value`` is a finite number inside ``INPUT_BOUNDS[name]`` (what the widget accepts).

    >>> within_bounds("memory_fraction", 0.2), within_bounds("memory_fraction", 0.01), within_bounds("tp", "8")
    (True, False, False)
    """
    low, high = INPUT_BOUNDS[name]
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high


def bounded_input(name: str, text: str, field: str | None = None) -> float | int:
    """A CLI or query text for the input ``name``, within its bounds (an int when both bounds are ints).

    >>> bounded_input("tp", "4"), bounded_input("memory_fraction", "0.9")
    (4, 0.9)
    >>> bounded_input("memory_fraction", "0.01", "gpu-memory-utilization")
    Traceback (most recent call last):
    ...
    planner.errors.InputError: gpu-memory-utilization = 0.01 is not allowed: expected a value from 0.05 to 1
    """
    low, high = INPUT_BOUNDS[name]
    if isinstance(low, int) and isinstance(high, int):
        return parse_input(Count, text, field or name, low=low, high=high)
    kind = Probability if low == 0 and high <= 1 else PositiveReal if low > 0 else NonNegativeReal
    return parse_input(kind, text, field or name, low=low, high=high)


_EXPECTED = {
    id(Count): f"an integer from 1 to {MAX_COUNT:,}",
    id(PositiveReal): f"a finite number > 0 and <= {MAX_REAL:g}",
    id(Fraction): "a finite number in (0, 1]",
    id(Probability): "a finite number in [0, 1]",
    id(NonNegativeReal): f"a finite number >= 0 and <= {MAX_REAL:g}",
    id(Seed): f"an integer from 0 to {MAX_SEED:,}",
    id(RequestRate): f"a rate from {MIN_REQUEST_RATE:g} to {MAX_REQUEST_RATE:g} requests per second",
    id(RequestCount): f"an integer from 1 to {MAX_SIMULATED_REQUESTS:,} requests (the simulation's work budget)",
}
_ADAPTERS: dict[int, TypeAdapter] = {}


def _bound(value: float | None) -> str:
    """A bound as the message states it: an integer exactly, with thousands separators; else compactly.

    >>> _bound(2_147_483_647), _bound(0.05), _bound(1e6), _bound(None)
    ('2,147,483,647', '0.05', '1e+06', 'any')
    """
    if value is None:
        return "any"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def parse_input(kind: Any, text: str | int | float, field: str, *, low: float | None = None, high: float | None = None):
    """``text`` as a value of ``kind`` (one of the types above), optionally within [low, high] (then a text that is
    not a value at all names those bounds too).

    >>> parse_input(Count, "three", "draws", low=1, high=10)
    Traceback (most recent call last):
    ...
    planner.errors.InputError: draws = 'three' is not allowed: expected a value from 1 to 10
    """
    adapter = _ADAPTERS.setdefault(id(kind), TypeAdapter(kind))
    bounded = f"a value from {_bound(low)} to {_bound(high)}" if low is not None and high is not None else None
    expected = bounded or _EXPECTED.get(id(kind), "a valid value")
    raw = text.strip() if isinstance(text, str) else text
    if (
        isinstance(raw, str) and kind in (Count, Seed, RequestCount) and len(raw) > 30
    ):  # int("9" * 5000) is slow, not a count
        raise InputError(field, raw[:30] + "…", expected)
    try:
        integral = kind in (Count, Seed, RequestCount)
        value = adapter.validate_python(raw if not isinstance(raw, str) or integral else float(raw))
    except (ValidationError, ValueError, OverflowError):
        raise InputError(field, text if not isinstance(text, str) else text[:40], expected) from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise InputError(field, value, bounded or f"a value from {_bound(low)} to {_bound(high)}")
    return value


def check_work(what: str, predicted: float, limit: float, fix: str) -> None:
    """Refuse, before it starts, a run whose predicted work exceeds its budget (naming the limit and the fix).

    >>> try:
    ...     check_work("simulation", 3e7, MAX_SIMULATION_WORK, "fewer prompts")
    ... except InputError as exc:
    ...     print(exc.allowed)
    at most 5,000,000 request-steps (the work budget of one run); use fewer prompts
    """
    if predicted > limit:
        raise InputError(
            what,
            f"{predicted:,.0f} request-steps",
            f"at most {limit:,.0f} request-steps (the work budget of one run); use {fix}",
        )


def checked_name(name: object, field: str, max_chars: int) -> str:
    """A name a person gives (a saved scenario, quote or model): trimmed and NFC-normalised; refused when empty,
    longer than ``max_chars`` or holding control characters.

    >>> checked_name("  Q3 renewal ", "name", 120)
    'Q3 renewal'
    >>> checked_name("a\\x00b", "name", 120)
    Traceback (most recent call last):
    ...
    planner.errors.InputError: name = 'a\\x00b' is not allowed: expected 1 to 120 printable characters
    """
    if not isinstance(name, str):
        raise InputError(field, name, "a text name")
    text = unicodedata.normalize("NFC", name).strip()
    if not text or len(text) > max_chars or any(unicodedata.category(c).startswith("C") for c in text):
        raise InputError(field, name[:40], f"1 to {max_chars} printable characters")
    return text
