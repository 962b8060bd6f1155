"""The planner's estimate for a measured run, and the errors between estimate and measurement.

The run is a plain-transformers job, so the deployment is engine ``"hf"``: one GPU, batch 1
(``hf_batch_size`` 1), ``max_model_len`` = the longest prompt + the new tokens, the run's K and
dtypes, the GPU from the catalog (matched by the CUDA device name, else the user's ``--gpu``) and the
device total CUDA reported. The prediction is :func:`planner.memory.plan.plan_memory` plus
:func:`planner.speed.estimate.estimate_speed` of that deployment, with the measured τ fed to the speed model
(so the speed error is the step-time model's, not the acceptance's). Without a GPU there is no
prediction ("no GPU: prediction not applicable"), never a made-up number.

``errors_frac[x] = (predicted − measured) / measured``. Weight and KV bytes are exact tensor sizes on
any device, so they are compared on CPU too; speed is compared only on the GPU it was predicted for.

>>> errors_frac({"speedup": 2.5}, {"speedup": 2.0})
{'speedup': 0.25}
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from planner.catalog.config_import import model_from_config
from planner.catalog.schemas import GpuSpec, ModelSpec
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.memory.plan import plan_memory
from planner.speed.estimate import SpeedWorkload, estimate_speed
from planner.speed.simulate import offline_batch_speedup

NOT_APPLICABLE = "no GPU: prediction not applicable"
#: What a run's speedup is: the transformers loop times its steps (baseline TPOT / speculative TPOT at batch 1);
#: the vLLM backend times one ``generate`` call over a batch (output tokens per second, prefill included).
TPOT_RATIO = "decode: baseline TPOT / speculative TPOT"
OFFLINE_BATCH = "one offline batch: output tokens per second with the draft / without it, prefill included"


class PredictedMemory(BaseModel):
    total_bytes: int
    target_weights_bytes: int
    draft_weights_bytes: int
    activation_bytes: int
    non_torch_bytes: int
    cudagraph_bytes: int
    kv_cache_bytes: int
    #: Everything the plan puts on the GPU: the sum of the components above (the plan's total − free).
    peak_memory_bytes: int
    fits: bool


class PredictedSpeed(BaseModel):
    profile: str
    mean_accepted_len: float
    alpha: float
    baseline_tpot_s: float
    spec_tpot_s: float
    #: The speedup the run measures, predicted as :attr:`speedup_measure` says.
    speedup: float
    speedup_measure: str = TPOT_RATIO
    baseline_ttft_s: float
    spec_ttft_s: float
    baseline_tok_s_per_sequence: float
    tok_s_per_sequence: float


class Prediction(BaseModel):
    applicable: bool
    reason: str | None = None
    engine: str = "hf"
    gpu: str | None = None
    max_model_len: int | None = None
    memory: PredictedMemory | None = None
    speed: PredictedSpeed | None = None
    #: Speed is predicted for ``gpu``; compared with the measurement only when the run was on it.
    speed_comparable: bool = False
    assumptions: list[str] = []
    problems: list[str] = []


def _spec(config: dict[str, Any], name: str) -> ModelSpec:
    return model_from_config(config, model_id=name)


def predict(
    *,
    target_config: dict[str, Any],
    target_name: str,
    draft_config: dict[str, Any],
    draft_name: str,
    gpu: GpuSpec | None,
    dtype: str,
    draft_dtype: str,
    k: int,
    max_model_len: int,
    prompt_tokens: int,
    output_tokens: int,
    mean_accepted_len: float | None,
    gpu_memory_bytes: int | None = None,
    on_gpu: bool = True,
    engine: str = "hf",
    tp: int = 1,
    batch_size: int = 1,
    offline_batch: bool = False,
) -> Prediction:
    """Memory plan and speed estimate of the run's deployment (``hf`` for the transformers loop, batch 1). The
    speedup is predicted as the run measures it: the decode TPOT ratio, or with ``offline_batch`` one offline batch
    of ``batch_size`` requests (:func:`planner.speed.simulate.offline_batch_speedup`)."""
    if gpu is None:
        return Prediction(applicable=False, reason=NOT_APPLICABLE)
    try:
        dep = Deployment.build(
            target=_spec(target_config, target_name),
            draft=_spec(draft_config, draft_name),
            gpu=gpu,
            gpu_count=tp,
            tp=tp,
            gpu_memory_bytes=gpu_memory_bytes,
            engine=engine,
            dtype=dtype,
            draft_dtype=draft_dtype,
            max_model_len=max(16, max_model_len),
            num_speculative_tokens=k,
            hf_batch_size=1,
        )
        plan = plan_memory(dep, with_suggestions=False)
    except PlannerError as exc:
        return Prediction(
            applicable=False, reason=f"the planner cannot express this run: {exc}", engine=engine, gpu=gpu.id
        )
    g = plan.per_gpu
    memory = PredictedMemory(
        total_bytes=g.total_bytes,
        target_weights_bytes=g.target_weights_bytes,
        draft_weights_bytes=g.draft_weights_bytes,
        activation_bytes=g.torch_peak_increase_bytes,
        non_torch_bytes=g.non_torch_increase_bytes,
        cudagraph_bytes=g.cudagraph_bytes,
        kv_cache_bytes=g.kv_cache_bytes,
        peak_memory_bytes=g.total_bytes - g.free_bytes,
        fits=plan.fits,
    )
    prediction = Prediction(
        applicable=True,
        engine=engine,
        gpu=gpu.id,
        max_model_len=plan.max_model_len,
        memory=memory,
        speed_comparable=on_gpu,
        assumptions=list(plan.assumptions),
        problems=list(plan.problems),
    )
    if not on_gpu:
        prediction.assumptions.append(f"measured on CPU: the speed estimate is for {gpu.id} and is not compared")
    if mean_accepted_len is None:
        prediction.assumptions.append("no speculative step was measured: no speed estimate")
        return prediction
    try:
        est = estimate_speed(
            dep,
            SpeedWorkload.build(
                batch_size=batch_size,
                prompt_tokens=max(1, prompt_tokens),
                output_tokens=max(1, output_tokens),
                mean_accepted_len=min(float(k + 1), max(1.0, mean_accepted_len)),
                k=k,
            ),
        )
    except PlannerError as exc:
        prediction.problems.append(f"speed model: {exc}")
        return prediction
    speedup, measure = est.baseline_tpot_s / est.spec_tpot_s, TPOT_RATIO
    if offline_batch:
        try:
            speedup, _ = offline_batch_speedup(dep, batch_size, max(1, prompt_tokens), max(1, output_tokens),
                                               alpha=est.alpha, k=k)  # fmt: skip
        except PlannerError as exc:
            prediction.problems.append(f"serving simulator: {exc}")
            return prediction
        measure = OFFLINE_BATCH
    prediction.speed = PredictedSpeed(
        profile=est.profile,
        mean_accepted_len=est.expected_tokens_per_step,
        alpha=est.alpha,
        baseline_tpot_s=est.baseline_tpot_s,
        spec_tpot_s=est.spec_tpot_s,
        speedup=speedup,
        speedup_measure=measure,
        baseline_ttft_s=est.baseline_ttft_s,
        spec_ttft_s=est.spec_ttft_s,
        baseline_tok_s_per_sequence=est.baseline_tok_s_per_sequence,
        tok_s_per_sequence=est.tok_s_per_sequence,
    )
    prediction.assumptions.append(
        f"speed model fed the measured τ = {mean_accepted_len:.3f} (α = {est.alpha:.3f}) at K = {k}, batch {batch_size}"
    )
    prediction.assumptions.append(f"speedup compared as {measure}")
    prediction.assumptions += [f"speed: {w}" for w in est.warnings]
    return prediction


def errors_frac(predicted: dict[str, float | None], measured: dict[str, float | None]) -> dict[str, float | None]:
    """``(predicted − measured) / measured`` per key; ``None`` where either side is missing or zero."""
    out: dict[str, float | None] = {}
    for key, value in predicted.items():
        actual = measured.get(key)
        out[key] = None if value is None or not actual else (value - actual) / actual
    return out


def comparison(prediction: Prediction, measured: dict[str, float | None]) -> dict[str, float | None]:
    """The record's ``errors_frac``: memory components always, speed only where it is comparable."""
    if not prediction.applicable or prediction.memory is None:
        return {}
    m = prediction.memory
    predicted: dict[str, float | None] = {
        "target_weights": m.target_weights_bytes,
        "draft_weights": m.draft_weights_bytes,
        "kv_cache": m.kv_cache_bytes,
        "peak_memory": m.peak_memory_bytes,
        "activation": m.activation_bytes,
        "non_torch": m.non_torch_bytes,
    }
    if prediction.speed is not None and prediction.speed_comparable:
        s = prediction.speed
        predicted |= {
            "speedup": s.speedup,
            "tpot": s.spec_tpot_s,
            "baseline_tpot": s.baseline_tpot_s,
            "ttft": s.spec_ttft_s,
            "baseline_ttft": s.baseline_ttft_s,
        }
    return errors_frac(predicted, measured)
