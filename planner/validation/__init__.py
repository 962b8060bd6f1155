"""Validation: serving-engine start-up logs parsed and checked against the plan; the measurement store."""

from planner.validation.engine_log import MAX_LOG_CHARS, EngineLogFacts, parse_engine_log
from planner.validation.log_check import ComparisonRow, DeploymentSummary, LogCheck, check_log
from planner.validation.store import (
    StoredMeasurement,
    StoreError,
    list_measurements,
    load_measurement,
    save_measurement,
    store_path,
)

__all__ = [
    "MAX_LOG_CHARS",
    "ComparisonRow",
    "DeploymentSummary",
    "EngineLogFacts",
    "LogCheck",
    "StoreError",
    "StoredMeasurement",
    "check_log",
    "list_measurements",
    "load_measurement",
    "parse_engine_log",
    "save_measurement",
    "store_path",
]
