"""`make bench-accuracy`: the memory plan against real serving-engine start-up logs.

Prints, for every case it can express, logged and predicted KV GiB and KV tokens with the % error,
the implied KV bytes per token per GPU against the planner's exact figure, and the planner's own
weights / activation / non-torch / CUDA-graph figures where the log states them; then the median
and worst errors, and every case it cannot express with the reason. It measures; it never asserts.

Logs a calibration coefficient was fitted on (bench/fit_memory_profile.py ``fitted_case_ids``) are marked ``F``;
every goal is printed twice, over all logs and over the logs not used in any fit, and per engine and release
family (the engine profile of data/engines.json that planned the log).

Logs taken under a condition the plan does not describe (data/calibration/log_conditions.json: a warm
compile cache, where the plan sizes a first start; serving flags the source does not publish) are printed
with their error on lines of their own and kept out of the goal statistics.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys

from bench.fit_memory_profile import fitted_case_ids
from bench.kv_cases import Case, load_cases
from planner.errors import PlannerError
from planner.facts import REPO_ROOT
from planner.memory import MEMORY_COMPONENTS, MemoryPlan, plan_memory
from planner.units import GIB

CONDITIONS_FILE = REPO_ROOT / "data" / "calibration" / "log_conditions.json"


def log_conditions() -> dict[str, dict]:
    """Case id -> its entry (``condition``, ``evidence``), for logs taken under a condition the plan does not
    describe."""
    return {entry["case_id"]: entry for entry in json.loads(CONDITIONS_FILE.read_text(encoding="utf-8"))["logs"]}


def _pct(predicted: float, logged: float | None) -> float | None:
    return None if not logged else 100 * (predicted - logged) / logged


def _fmt(value: float | None, width: int = 7, digits: int = 1) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def evaluate(case: Case) -> dict | None:
    try:
        plan: MemoryPlan = plan_memory(case.deployment, with_suggestions=False)
    except PlannerError as exc:
        case.reason = f"planner error: {exc}"
        return None
    logged, gpu = case.logged, plan.per_gpu
    first = plan.stages[0]  # logs print rank 0, the first pipeline stage
    implied = (
        logged.kv_cache_bytes / logged.kv_cache_tokens if logged.kv_cache_bytes and logged.kv_cache_tokens else None
    )
    comp = {
        name: (getattr(first, f"{name}_bytes"), getattr(logged, f"{name}_bytes"))
        for name in MEMORY_COMPONENTS
        if name != "kv_cache"  # compared in GiB and tokens below
    }
    return {
        "case": case,
        "plan": plan,
        "kv_gib": (gpu.kv_cache_bytes / GIB, logged.kv_cache_bytes / GIB if logged.kv_cache_bytes else None),
        "tokens": (plan.kv_cache_tokens, logged.kv_cache_tokens),
        "bpt": (plan.kv_bytes_per_token_per_gpu, implied),
        "components": comp,
    }


ENGINES_FILE = REPO_ROOT / "data" / "engines.json"


def accuracy_record(
    known: list[float], v0: list[float], gib: list[float], today: str, unseen: dict[str, list[float]] | None = None
) -> dict:
    """The figures the app and reports quote (``calibration.accuracy`` of data/engines.json)."""

    def figure(errors: list[float]) -> str:
        return f"median |error| {statistics.median(errors):.2f}%, worst {max(errors):.2f}% over {len(errors)} logs"

    return {
        "command": "make bench-accuracy",
        "date": today,
        "kv_tokens_known_engine": "KV-cache tokens against real start-up logs of a known engine, release and flags "
        f"at a first start: {figure(known)}",
        "kv_tokens_v0": f"KV-cache tokens (else GiB) against vLLM V0 start-up logs: {figure(v0)}",
        "kv_gib_all": f"KV-cache GiB against the start-up logs that state it: {figure(gib)}",
        **(
            {
                "kv_tokens_unseen_known": "KV-cache tokens against start-up logs of a known engine, release and flags "
                f"not used in any fit: {figure(unseen['known'])}",
                "kv_tokens_unseen_v0": f"KV-cache tokens (else GiB) against vLLM V0 logs not used in any fit: "
                f"{figure(unseen['v0'])}",
            }
            if unseen and unseen["known"] and unseen["v0"]
            else {}
        ),
        "source": "printed by bench/memory_accuracy.py (make bench-accuracy) over the start-up logs in "
        "data/calibration/vllm-kv-cases.csv and vllm_v0190_llmd_logs.csv, each row with its public source URL; "
        "logs under a condition the plan does not describe (data/calibration/log_conditions.json) are printed apart; "
        "logs a coefficient was fitted on are marked and the unseen figures leave them out",
    }


def record_accuracy(record: dict) -> None:
    """Write ``record`` into data/engines.json whole (a temporary file, then an atomic replace)."""
    data = json.loads(ENGINES_FILE.read_text(encoding="utf-8"))
    data["calibration"]["accuracy"] = record
    tmp = ENGINES_FILE.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(ENGINES_FILE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", action="store_true", help="write the goal figures into data/engines.json")
    args = parser.parse_args(argv)
    cases = load_cases()
    results, skipped = [], []
    for case in cases:
        if case.deployment is None:
            skipped.append(case)
            continue
        result = evaluate(case)
        (results if result else skipped).append(result or case)
    print("Memory plan vs real start-up logs (GiB = 2^30 bytes; error = (predicted - logged) / logged)\n")
    fitted = fitted_case_ids()
    header = (
        f"{'case':<44} {'F':1} {'engine':<14} {'KV GiB log':>10} {'pred':>7} {'err%':>6} {'tokens log':>11} "
        f"{'pred':>10} {'err%':>6} {'B/tok implied':>13} {'planner':>8} {'err%':>6}"
    )
    print(header)
    print("-" * len(header))
    token_errors_known, token_errors_all, token_errors_v0, bpt_errors, gib_errors = [], [], [], [], []
    unseen: dict[str, list[float]] = {"known": [], "v0": [], "all": [], "gib": []}
    by_family: dict[tuple[str, str], dict[str, list[float]]] = {}
    conditions, condition_errors = log_conditions(), {}
    for r in results:
        case, plan = r["case"], r["plan"]
        kv_pred, kv_log = r["kv_gib"]
        tok_pred, tok_log = r["tokens"]
        bpt_pred, bpt_log = r["bpt"]
        kv_err, tok_err, bpt_err = _pct(kv_pred, kv_log), _pct(tok_pred, tok_log), _pct(bpt_pred, bpt_log)
        if tok_err is not None and case.case_id in conditions:
            condition_errors.setdefault(conditions[case.case_id]["condition"], []).append(abs(tok_err))
        elif tok_err is not None:
            token_errors_all.append(abs(tok_err))
            if case.engine_version:
                token_errors_known.append(abs(tok_err))
        if kv_err is not None and case.case_id not in conditions:
            gib_errors.append(abs(kv_err))
        if plan.engine == "vllm-v0" and (tok_err is not None or kv_err is not None):
            token_errors_v0.append(abs(tok_err if tok_err is not None else kv_err))
        if bpt_err is not None:
            bpt_errors.append((abs(bpt_err), case.case_id))
        is_fit = case.case_id in fitted
        err = tok_err if tok_err is not None else kv_err
        if case.case_id not in conditions and err is not None:
            family = by_family.setdefault((plan.engine, plan.engine_profile), {"all": [], "unseen": []})
            family["all"].append(abs(err))
            if not is_fit:
                family["unseen"].append(abs(err))
                unseen["all" if tok_err is not None else "gib"].append(abs(err))
                if tok_err is not None and case.engine_version:
                    unseen["known"].append(abs(tok_err))
                if plan.engine == "vllm-v0":
                    unseen["v0"].append(abs(err))
        engine = f"{plan.engine} {case.engine_version or '?'}"[:14]
        print(
            f"{case.case_id[:44]:<44} {'F' if is_fit else ' '} {engine:<14} "
            f"{_fmt(kv_log, 10, 2)} {_fmt(kv_pred, 7, 2)} {_fmt(kv_err, 6)} "
            f"{tok_log if tok_log else '-':>11} {tok_pred:>10} {_fmt(tok_err, 6)} "
            f"{_fmt(bpt_log, 13, 0)} {bpt_pred:>8} {_fmt(bpt_err, 6, 2)}"
        )
        if case.note:
            print(f"{'':<44}   note: {case.note}")
        if is_fit:
            print(f"{'':<44}   fitted on: {', '.join(fitted[case.case_id])}")
        if case.case_id in conditions:
            condition = conditions[case.case_id]["condition"].replace("_", " ")
            print(
                f"{'':<44}   note: {condition} (data/calibration/log_conditions.json): kept out of the goal statistics"
            )
        if bpt_err is not None and abs(bpt_err) > 2:
            print(
                f"{'':<44}   note: the logged KV GiB and tokens imply {bpt_log:,.0f} B/token: the GiB line is from a "
                "rank that does not bind the pool (the engine keeps the minimum over ranks); tokens are the engine's"
            )
    print("\nComponents where the log states them (GiB: logged / planner / err%)")
    for r in results:
        parts = [
            f"{name} {logged / GIB:.2f}/{pred / GIB:.2f}/{_pct(pred, logged):+.0f}%"
            for name, (pred, logged) in r["components"].items()
            if logged
        ]
        if parts:
            print(f"  {r['case'].case_id[:44]:<44} " + "; ".join(parts))

    def summary(label: str, errors: list[float]) -> None:
        if errors:
            print(f"{label:<72} median {statistics.median(errors):5.2f}%   worst {max(errors):6.2f}%   n={len(errors)}")

    print()
    print("Over all logs (F rows included):")
    summary("KV tokens, known engine, release and flags (goal median <=1%, worst <=5%)", token_errors_known)
    summary("KV tokens (else GiB), vLLM V0 cases (goal each within 10%)", token_errors_v0)
    summary("KV tokens, all cases with logged tokens", token_errors_all)
    print("Over logs not used in any fit (the accuracy goal):")
    summary("KV tokens, known engine, release and flags, unseen (goal median <=1%, worst <=5%)", unseen["known"])
    summary("KV tokens (else GiB), vLLM V0 cases, unseen (goal each within 10%)", unseen["v0"])
    summary("KV tokens, all unseen cases with logged tokens", unseen["all"])
    summary("KV GiB, unseen cases without logged tokens", unseen["gib"])
    print("Per engine and release family (KV tokens, else GiB; |error| median / worst, n): all logs | unseen logs")
    for (engine, family), errs in sorted(by_family.items()):

        def cell(errors: list[float]) -> str:
            if not errors:
                return f"{'none':>26}"
            return f"{statistics.median(errors):6.2f}% / {max(errors):6.2f}%  n={len(errors):<3}"

        print(f"  {engine:<8} {family:<16} {cell(errs['all'])} | {cell(errs['unseen'])}")
    print("Other figures:")
    for condition, errors in sorted(condition_errors.items()):
        summary(f"KV tokens, logs with {condition.replace('_', ' ')} (apart)", errors)
    summary("KV GiB, all cases with logged GiB", gib_errors)
    if bpt_errors:
        worst, worst_case = max(bpt_errors)
        within = sum(e <= 0.5 for e, _ in bpt_errors)
        print(
            f"{'implied KV bytes/token/GPU (goal exact, +-0.5%)':<72} {within}/{len(bpt_errors)} within 0.5%; "
            f"worst {worst:.2f}% ({worst_case})"
        )
    groups: dict[str, list] = {}
    for r in results:
        if r["tokens"][1]:
            key = r["case"].deployment.model_dump_json(exclude={"target", "draft"}) + r["case"].deployment.target.id
            groups.setdefault(key, []).append(r)
    for same in (g for g in groups.values() if len({r["tokens"][1] for r in g}) > 1):
        logged = [r["tokens"][1] for r in same]
        spread = 100 * (max(logged) - min(logged)) / min(logged)
        names = ", ".join(r["case"].case_id for r in same)
        conditioned = [
            f"{r['case'].case_id} is a {conditions[r['case'].case_id]['condition'].replace('_', ' ')}"
            for r in same
            if r["case"].case_id in conditions
        ]
        why = (
            "; ".join(conditioned)
            if conditioned
            else "no single prediction can be closer to both than half that spread"
        )
        span = f"{min(logged):,} to {max(logged):,} tokens ({spread:.1f}% apart)"
        print(f"note: the same flags logged {span}: {names}; {why}")
    print(f"\nCases the planner cannot express ({len(skipped)}):")
    for case in skipped:
        print(f"  {case.case_id:<44} {case.reason}")
    if args.record:
        record_accuracy(
            accuracy_record(token_errors_known, token_errors_v0, gib_errors, datetime.date.today().isoformat(), unseen)
        )
        print(f"\nrecorded in {ENGINES_FILE.relative_to(REPO_ROOT)} (calibration.accuracy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
