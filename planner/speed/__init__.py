"""Speed: engine speed profiles, the per-operator step model, the speed estimate, the serving simulator and the
speculation verdict."""

from planner.speed.deployment_acceptance import deployment_acceptance, workload_for
from planner.speed.drafting import VERIFICATIONS, DraftShape
from planner.speed.engine_step import EngineStep
from planner.speed.estimate import BaselineSpeed, SpeedEstimate, StepTimes, baseline_speed, estimate_speed
from planner.speed.inversion import alpha_for_speedup
from planner.speed.policy import SpeculationRules, speculation_rules
from planner.speed.profiles import SpeedProfile, calibration_summary, speed_profile
from planner.speed.roofline import ModelCost
from planner.speed.runnable import Runnability, gate_verdict, runnable
from planner.speed.serving_sweep import RatePoint, RateSweep, rate_sweep
from planner.speed.serving_workload import DATASET_NAMES, DATASETS_HELP, DRAWN_DATASETS, ServingWorkload, datasets
from planner.speed.simulate import ServingMetrics, SimulationResult, simulate
from planner.speed.speed_source import speed_source
from planner.speed.step_cache import pause_before_each_simulation
from planner.speed.step_model import ForwardTime, StepModel
from planner.speed.sweeps import BatchPoint, BatchSweep, SpeedGrid, SpeedReport, batch_sweep, speed_report, speedup_grid
from planner.speed.workload import SpeedWorkload

__all__ = [
    "DATASETS_HELP",
    "DATASET_NAMES",
    "DRAWN_DATASETS",
    "VERIFICATIONS",
    "BaselineSpeed",
    "BatchPoint",
    "BatchSweep",
    "DraftShape",
    "EngineStep",
    "ForwardTime",
    "ModelCost",
    "RatePoint",
    "RateSweep",
    "Runnability",
    "ServingMetrics",
    "ServingWorkload",
    "SimulationResult",
    "SpeculationRules",
    "SpeedEstimate",
    "SpeedGrid",
    "SpeedProfile",
    "SpeedReport",
    "SpeedWorkload",
    "StepModel",
    "StepTimes",
    "alpha_for_speedup",
    "baseline_speed",
    "batch_sweep",
    "calibration_summary",
    "datasets",
    "deployment_acceptance",
    "estimate_speed",
    "gate_verdict",
    "pause_before_each_simulation",
    "rate_sweep",
    "runnable",
    "simulate",
    "speculation_rules",
    "speed_profile",
    "speed_report",
    "speed_source",
    "speedup_grid",
    "workload_for",
]
