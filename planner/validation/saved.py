"""Saved scenarios: named, with notes, in the store (:mod:`planner.store`), owned and shared (:mod:`.owned`).

A saved scenario is the typed :class:`~planner.scenario.Scenario` serialised by its own model, under a
name that is unique per owner regardless of case (a second save under a taken name is refused unless it
says ``replace=True``; only the owner replaces, and ``expected_version`` refuses a lost update). Every
function acts as ``actor`` (this machine by default: single-user behaviour). Every write and its audit row
are one transaction: a refused or failed save leaves the store as it was, and two processes saving at once
both land. Deletion is soft (:func:`planner.validation.owned.list_recently_deleted`). A row that no longer
reads as a scenario (a field a later release dropped, damaged JSON)
is skipped by :func:`list_scenarios` and reported, never fatal.

:func:`compare_scenarios` puts two saved scenarios side by side: every input, and the results the
planner computes for each (:func:`planner.memory.plan_memory`, :func:`planner.speed.estimate_speed`).

>>> import tempfile, pathlib
>>> from planner.scenario import Scenario
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite3"
>>> _ = save_scenario("70B on H100", Scenario(), notes="baseline", path=path)
>>> _ = save_scenario("70B on H200", Scenario(node="8x-h200-sxm-141gb"), path=path)
>>> [s.name for s in list_scenarios(path=path).scenarios]
['70B on H100', '70B on H200']
>>> load_scenario("70b on h200", path=path).scenario.node
'8x-h200-sxm-141gb'
>>> duplicate_scenario("70B on H100", path=path).name
'70B on H100 (copy)'
>>> [row.label for row in compare_scenarios("70B on H100", "70B on H200", path=path).inputs if row.differs]
['node type']
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from planner.errors import InputError, PlannerError
from planner.input_types import checked_name
from planner.memory import plan_memory
from planner.scenario import Scenario, field_label
from planner.speed import SpeedWorkload, estimate_speed, gate_verdict, runnable, workload_for
from planner.units import bytes_to_gib
from planner.validation.actor import LOCAL_ACTOR, Actor, Visibility
from planner.validation.owned import (
    Owned,
    checked_actor,
    checked_visibility,
    soft_delete,
)
from planner.validation.owned import now as _now
from planner.validation.owned_rows import list_visible, load_visible, save_owned
from planner.validation.store import StoreError

__all__ = [
    "MAX_NAME_CHARS",
    "MAX_NOTES_CHARS",
    "ComparisonInput",
    "ComparisonResult",
    "SavedScenario",
    "SavedScenarioList",
    "ScenarioComparison",
    "compare_saved",
    "compare_scenarios",
    "delete_scenario",
    "duplicate_scenario",
    "list_scenarios",
    "load_scenario",
    "save_scenario",
]

MAX_NAME_CHARS = 120
MAX_NOTES_CHARS = 4000
#: How many "(copy n)" names a duplicate tries before giving up.
_MAX_COPIES = 1000


class SavedScenario(Owned):
    name: str
    notes: str
    #: When it was first saved, ISO 8601 UTC.
    created_at: str
    scenario: Scenario


class SavedScenarioList(BaseModel):
    """Every readable saved scenario (by name) and one line per row that was skipped."""

    scenarios: list[SavedScenario]
    problems: list[str]


class ComparisonInput(BaseModel):
    field: str
    label: str
    a: str
    b: str
    differs: bool


class ComparisonResult(BaseModel):
    label: str
    a: str
    b: str


class ScenarioComparison(BaseModel):
    """Two saved scenarios side by side: inputs (every field) and results; ``problems_a/b`` say what failed."""

    a: SavedScenario
    b: SavedScenario
    inputs: list[ComparisonInput]
    results: list[ComparisonResult]
    problems_a: list[str]
    problems_b: list[str]


def _checked_name(name: object, field: str = "name") -> str:
    return checked_name(name, field, MAX_NAME_CHARS)


def _checked_notes(notes: object) -> str:
    if not isinstance(notes, str) or len(notes) > MAX_NOTES_CHARS:
        raise InputError("notes", str(notes)[:40], f"text of at most {MAX_NOTES_CHARS} characters")
    return notes.strip()


_COLUMNS = "name, notes, created_at, json"


def _row(name: object, notes: object, created_at: object, text: object) -> SavedScenario:
    """A row as a saved scenario; ValueError (or ValidationError) says why it is not one."""
    if not isinstance(text, str):
        raise ValueError("the row holds no JSON text")
    return SavedScenario(
        name=str(name), notes=str(notes), created_at=str(created_at), scenario=Scenario.model_validate_json(text)
    )


def save_scenario(
    name: str,
    scenario: Scenario,
    notes: str = "",
    *,
    replace: bool = False,
    path: str | Path | None = None,
    actor: Actor = LOCAL_ACTOR,
    visibility: Visibility | None = None,
    expected_version: int | None = None,
) -> SavedScenario:
    """Save ``scenario`` as ``name`` in one transaction; a taken name (any case) is refused unless ``replace``.

    ``visibility`` None keeps a replaced item's (a new one: team for this machine, private for a signed-in
    person); ``expected_version`` (the version the edit was opened at) refuses a replace of a newer version."""
    name, notes = _checked_name(name), _checked_notes(notes)
    actor, visibility = checked_actor(actor), checked_visibility(visibility)
    if not isinstance(scenario, Scenario):
        raise InputError("scenario", type(scenario).__name__, "a Scenario")
    text = scenario.model_dump_json()
    Scenario.model_validate_json(text)  # never store what will not load back
    created_at = _now()
    found = save_owned(
        "scenario", name, {"notes": notes, "created_at": created_at, "json": text}, path=path, actor=actor,
        visibility=visibility, replace=replace, expected_version=expected_version,
    )  # fmt: skip
    return SavedScenario(name=name, notes=notes, created_at=created_at, scenario=scenario, **found.ownership())


def list_scenarios(*, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR) -> SavedScenarioList:
    """Every saved scenario the actor may see (theirs and the team's) by name (case-insensitive order, then owner);
    unreadable rows are skipped and reported."""
    scenarios, problems = list_visible("scenario", _COLUMNS, _row, path=path, actor=actor)
    return SavedScenarioList(scenarios=scenarios, problems=problems)


def load_scenario(
    name: str, *, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR, owner_id: str | None = None
) -> SavedScenario:
    """The saved scenario ``name`` the actor may see: their own, else the team's (``owner_id`` picks an owner's)."""
    name, actor = _checked_name(name), checked_actor(actor)
    return load_visible(
        "scenario", name, _COLUMNS, _row, path=path, actor=actor, owner_id=owner_id, reads_as=" as a scenario"
    )


def duplicate_scenario(
    name: str,
    new_name: str | None = None,
    *,
    path: str | Path | None = None,
    actor: Actor = LOCAL_ACTOR,
    owner_id: str | None = None,
) -> SavedScenario:
    """A copy of ``name`` (the actor's or the team's), owned by the actor, as ``new_name`` (refused when taken), or
    as the first free "<name> (copy n)"."""
    original = load_scenario(name, path=path, actor=actor, owner_id=owner_id)
    if new_name is not None:
        return save_scenario(new_name, original.scenario, original.notes, path=path, actor=actor)
    base = original.name[: MAX_NAME_CHARS - len(" (copy 1000)")]
    for n in range(1, _MAX_COPIES + 1):
        candidate = f"{base} (copy)" if n == 1 else f"{base} (copy {n})"
        try:
            return save_scenario(candidate, original.scenario, original.notes, path=path, actor=actor)
        except StoreError as exc:
            if exc.field != "name":
                raise
    raise StoreError(f"{original.name!r} already has {_MAX_COPIES} copies: name the copy yourself", field="name")


def delete_scenario(
    name: str,
    *,
    path: str | Path | None = None,
    actor: Actor = LOCAL_ACTOR,
    owner_id: str | None = None,
    expected_version: int | None = None,
) -> None:
    """Delete ``name`` (any case; the owner only) in one transaction, restorable for 30 days; an unknown name is
    refused."""
    soft_delete(
        "scenario",
        _checked_name(name),
        actor=actor,
        path=path,
        owner_id=owner_id,
        expected_version=expected_version,
    )


def _shown(value: object) -> str:
    if value is None:
        return "default"
    if isinstance(value, tuple):
        return ", ".join(value)
    return json.dumps(value) if isinstance(value, bool) else str(value)


def _workload(scenario: Scenario, dep) -> SpeedWorkload:
    """The Performance page's workload of ``scenario`` (acceptance left unset: the speculator's own α), at the
    scenario's K, built by the one core entry point every page and command uses."""
    acceptance = {} if scenario.acceptance is None else {scenario.acceptance_mode: scenario.acceptance}
    workload, _, _ = workload_for(
        dep,
        k=dep.num_speculative_tokens,
        batch_size=scenario.batch_size,
        prompt_tokens=scenario.prompt_tokens,
        output_tokens=scenario.output_tokens,
        **acceptance,
    )
    return workload


#: The results compared, in order: label -> how it reads from (memory plan, speed estimate or None).
_RESULTS = (
    ("fits in GPU memory", lambda m, s: "yes" if m.fits else "no"),
    ("engine starts", lambda m, s: "yes" if m.starts else "no"),
    ("weights, GiB (per GPU)", lambda m, s: f"{bytes_to_gib(m.per_gpu.weights_bytes):.1f}"),
    ("KV cache, GiB (per GPU)", lambda m, s: f"{bytes_to_gib(m.per_gpu.kv_cache_bytes):.1f}"),
    ("KV cache tokens", lambda m, s: f"{m.kv_cache_tokens:,}"),
    ("concurrent requests at max length", lambda m, s: f"{int(m.max_concurrency):,}"),
    ("speedup with the draft", lambda m, s: f"{s.speedup:.2f}x" if s else "no draft"),
    ("TPOT, ms (with the draft)", lambda m, s: f"{s.spec_tpot_s * 1000:.1f}" if s else "no draft"),
    ("TPOT, ms (target alone)", lambda m, s: f"{s.baseline_tpot_s * 1000:.1f}" if s else "no draft"),
    ("throughput, tok/s (with the draft)", lambda m, s: f"{s.throughput_tok_s:,.0f}" if s else "no draft"),
    ("verdict", lambda m, s: s.verdict.replace("_", " ") if s else "no draft"),
)


def _results(scenario: Scenario) -> tuple[list[str], list[str]]:
    """Each of :data:`_RESULTS` for ``scenario`` ("-" where it could not be computed) and what failed."""
    try:
        problem = scenario.context_problem()
        if problem:
            raise PlannerError(problem)
        dep = scenario.deployment()
        memory = plan_memory(dep, with_suggestions=False)
        speed = None
        if dep.is_speculative:
            workload = _workload(scenario, dep)
            speed = gate_verdict(estimate_speed(dep, workload), runnable(dep, workload))
    except PlannerError as exc:
        return ["-"] * len(_RESULTS), [str(exc)]
    return [read(memory, speed) for _, read in _RESULTS], []


def compare_scenarios(
    name_a: str, name_b: str, *, path: str | Path | None = None, actor: Actor = LOCAL_ACTOR
) -> ScenarioComparison:
    """Two saved scenarios side by side: every input (marking those that differ) and the planner's results."""
    return compare_saved(load_scenario(name_a, path=path, actor=actor), load_scenario(name_b, path=path, actor=actor))


def compare_saved(a: SavedScenario, b: SavedScenario) -> ScenarioComparison:
    """:func:`compare_scenarios` of two saved scenarios already read (a page caches it by their JSON)."""
    inputs = [
        ComparisonInput(
            field=field,
            label=field_label(field),
            a=_shown(getattr(a.scenario, field)),
            b=_shown(getattr(b.scenario, field)),
            differs=getattr(a.scenario, field) != getattr(b.scenario, field),
        )
        for field in Scenario.model_fields
    ]
    results_a, problems_a = _results(a.scenario)
    results_b, problems_b = _results(b.scenario)
    results = [
        ComparisonResult(label=label, a=ra, b=rb)
        for (label, _), ra, rb in zip(_RESULTS, results_a, results_b, strict=True)
    ]
    return ScenarioComparison(a=a, b=b, inputs=inputs, results=results, problems_a=problems_a, problems_b=problems_b)
