"""`python -m bench.acceptance_priors`: the acceptance prior against every α it was fitted on.

Prints the refit of data/acceptance_priors.json (sweep slopes, per-relation intercepts, clip range)
beside the stored numbers, then each observation (the file's own and the convertible rows of
data/pair_evidence.json): relation, parameter ratio, observed α, the prior's α and the error; then
the median and worst absolute errors per relation, and the published pairs whose acceptance does
not convert to α (no K). It measures; it never asserts.
"""

from __future__ import annotations

import statistics
import sys

from planner.catalog.lookup import get_model
from planner.pairs.acceptance import (
    fit_points,
    head_prior_alphas,
    load_acceptance_priors,
    load_pair_evidence,
    prior_alpha,
    refit_priors,
)


def main() -> int:
    priors = load_acceptance_priors()
    fit = refit_priors()
    out = sys.stdout.write
    out("Acceptance prior: alpha(r) = alpha_10 - slope * log10(r / 10), clipped\n\n")
    out(f"  slope per decade   stored {priors.slope_per_decade:.3f}   refit {fit.slope_per_decade:.4f}\n")
    for name, slope in fit.sweep_slopes.items():
        out(f"    sweep {name:<14} {slope:+.4f}\n")
    out(f"  clip               stored [{priors.alpha_min}, {priors.alpha_max}]   ")
    out(f"refit [{fit.alpha_min:.3f}, {fit.alpha_max:.3f}]\n")
    for rel in priors.relations:
        refit = fit.alpha_at_ratio_10.get(rel.id)
        shown = f"{refit:.4f}" if refit is not None else "  -   (no observation)"
        out(f"  alpha_10 {rel.id:<17} stored {rel.alpha_at_ratio_10:.3f}  refit {shown}  [{rel.basis}]\n")

    out(f"\n{'observation':<78} {'relation':<16} {'ratio':>7} {'alpha':>6} {'prior':>6} {'error':>7}\n")
    errors: dict[str, list[float]] = {}
    for label, relation, ratio, alpha in fit.points:
        predicted = prior_alpha(relation, ratio)  # type: ignore[arg-type]
        error = predicted - alpha
        errors.setdefault(relation, []).append(abs(error))
        out(f"{label[:78]:<78} {relation:<16} {ratio:>7.1f} {alpha:>6.3f} {predicted:>6.3f} {error:>+7.3f}\n")
    out("\nabsolute error of the prior, by relation\n")
    for relation, errs in errors.items():
        out(f"  {relation:<16} n={len(errs):<3} median {statistics.median(errs):.3f}  worst {max(errs):.3f}\n")
    every = [e for errs in errors.values() for e in errs]
    out(f"  {'all':<16} n={len(every):<3} median {statistics.median(every):.3f}  worst {max(every):.3f}\n")

    out("\nspeculator heads: their own prior, the median published alpha of heads of the same kind\n")
    heads = [row for row in load_pair_evidence() if get_model(row.draft).speculator is not None]
    for kind in sorted({get_model(row.draft).speculator.kind for row in heads}):
        alphas = head_prior_alphas(kind)
        if not alphas:
            continue
        prior = statistics.median(alphas)
        errs = [abs(a - prior) for a in alphas]
        out(f"  {kind:<8} n={len(alphas):<3} prior {prior:.3f}  |alpha - prior| median {statistics.median(errs):.3f}")
        out(f"  worst {max(errs):.3f} (in-sample; {len({r.draft for r in heads})} head(s) measured)\n")

    used = {label for label, *_ in fit_points()}
    skipped = [
        row
        for row in load_pair_evidence()
        if row.acceptance
        and row.alpha is None
        and f"{row.target_measured} + {row.draft_measured}, {row.task}" not in used
    ]
    if skipped:
        out("\npublished acceptance that does not convert to alpha (K unknown):\n")
        for row in skipped:
            figures = ", ".join(f"{f.convention} {f.value}" for f in row.acceptance)
            out(f"  {row.target_measured} + {row.draft_measured}: {figures} ({row.source})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
