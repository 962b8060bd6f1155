"""Where a deployment's step times come from, in one sentence users understand.

Measured kernel tables (aiconfigurator-core) where they cover the GPU, engine and precision, else the
roofline with fitted efficiencies (:mod:`planner.speed.kernels`). The sentence names the target's
source and, where it differs, the draft's; operators the tables did not cover are listed.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-l4-24gb"), tp=1)
>>> speed_source(dep), step_times_of(dep)
('roofline estimate: no measured kernels for this GPU', 'roofline')
"""

from __future__ import annotations

from planner.deployment import Deployment
from planner.speed.engine_step import EngineStep
from planner.speed.profiles import StepTimes
from planner.speed.step_model import StepModel


def _probe(model: StepModel) -> str:
    """Price one decode step and one prefill chunk so that shape-dependent fallbacks are recorded."""
    model.forward(decode_seqs=8, decode_context_tokens=8 * 1024)
    model.prefill(512)
    return model.source


def speed_source(deployment: Deployment) -> str:
    """The source of ``deployment``'s step times: target, then the draft's where it differs."""
    engine = EngineStep(deployment)
    target = _probe(engine.target)
    if engine.draft is None:
        return target
    draft = _probe(engine.draft)
    return target if draft == target else f"target: {target}; draft: {draft}"


def step_times_of(deployment: Deployment) -> StepTimes:
    """Whether the target's step times come from measured kernel tables or the roofline (which of the planner's
    recorded throughput errors applies to them, :func:`planner.speed.profiles.measured_throughput_error`)."""
    return "roofline" if EngineStep(deployment).target.measured is None else "measured kernels"
