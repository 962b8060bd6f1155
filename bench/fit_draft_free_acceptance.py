"""`python -m bench.fit_draft_free_acceptance`: n-gram α per task, inverted from published speedups.

For each task of data/draft_free_acceptance.json, finds the α at which the planner's speed model predicts the
published speedup of its fit case (n-gram lookup, no draft pass) and prints it beside the stored α. Run it after
the speed model or its profile changes, and copy the refit into the data file. It measures; it never asserts.
"""

from __future__ import annotations

import sys

from planner.catalog import get_gpu, get_model
from planner.deployment import Deployment
from planner.pairs import load_draft_free_acceptance
from planner.speed import alpha_for_speedup


def refit(task) -> float | None:
    """The α the speed model needs to predict ``task``'s published speedup."""
    fit = task.fit
    gpu = get_gpu(fit.gpu)
    dep = Deployment.build(target=get_model(fit.target), gpu=gpu, gpu_count=fit.tp, tp=fit.tp).with_method("ngram")
    return alpha_for_speedup(
        dep,
        fit.speedup,
        fit.metric,
        k=fit.k,
        batch_size=fit.batch_size,
        prompt_tokens=fit.prompt_tokens,
        output_tokens=fit.output_tokens,
    )


def main() -> int:
    out = sys.stdout.write
    out(f"{'task':<12} {'published speedup':>18} {'stored alpha':>13} {'refit alpha':>12}\n")
    for task in load_draft_free_acceptance().ngram.tasks:
        alpha = refit(task)
        shown = "out of reach" if alpha is None else f"{alpha:.3f}"
        out(f"{task.task:<12} {task.fit.speedup:>18.3f} {task.alpha:>13.3f} {shown:>12}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
