"""The deployment a fleet quote's option runs: its node type, TP, and speculation at the option's K.

The quote sizes each option at max model length = prompt + output tokens (``planner.decisions.fleet``); the
launch takes the same deployment, so the command starts what was priced.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.decisions import Traffic, plan_fleet
>>> traffic = Traffic.build(requests_per_s=2, prompt_tokens=1000, output_tokens=200)
>>> plan = plan_fleet(get_model("Llama-3.1-8B"), [get_node("1x-h100-sxm-80gb")], traffic)
>>> dep = quoted_deployment(get_model("Llama-3.1-8B"), plan.recommended, traffic)
>>> dep.node_id, dep.max_model_len, dep.is_speculative
('1x-h100-sxm-80gb', 1200, False)
"""

from __future__ import annotations

from planner.catalog.lookup import get_node
from planner.catalog.schemas import ModelSpec
from planner.decisions import QuotedOption, Traffic
from planner.deployment import Deployment


def quoted_deployment(
    target: ModelSpec, quoted: QuotedOption, traffic: Traffic, *, draft: ModelSpec | None = None, **fields
) -> Deployment:
    """The deployment of one quoted option (``fields``: the engine, KV dtype or method the quote was asked with)."""
    dep = Deployment.on_node(
        target,
        get_node(quoted.node),
        tp=quoted.tp,
        pp=quoted.option.pp,
        draft=draft,
        max_model_len=max(traffic.prompt_tokens + traffic.output_tokens, 16),
        **fields,
    )
    if not quoted.option.speculation:
        return dep.without_draft()
    return dep.replace(num_speculative_tokens=quoted.option.k) if quoted.option.k else dep
