"""Speed: engine speed profiles, the roofline step model, the speed estimate and the speculation verdict."""

from planner.speed.estimate import (
    BaselineSpeed,
    BatchPoint,
    BatchSweep,
    SpeedEstimate,
    SpeedGrid,
    SpeedReport,
    SpeedWorkload,
    StepTimes,
    baseline_speed,
    batch_sweep,
    estimate_speed,
    speed_report,
    speedup_grid,
)
from planner.speed.policy import SpeculationRules, speculation_rules
from planner.speed.profiles import SpeedProfile, calibration_summary, speed_profile
from planner.speed.roofline import ForwardTime, ModelCost

__all__ = [
    "BaselineSpeed",
    "BatchPoint",
    "BatchSweep",
    "ForwardTime",
    "ModelCost",
    "SpeculationRules",
    "SpeedEstimate",
    "SpeedGrid",
    "SpeedProfile",
    "SpeedReport",
    "SpeedWorkload",
    "StepTimes",
    "baseline_speed",
    "batch_sweep",
    "calibration_summary",
    "estimate_speed",
    "speculation_rules",
    "speed_profile",
    "speed_report",
    "speedup_grid",
]
