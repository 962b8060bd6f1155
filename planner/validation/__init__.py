"""Validation: serving-engine start-up logs parsed and checked against the plan; the store (measurements, saved
scenarios)."""

from planner.validation.engine_log import MAX_LOG_CHARS, EngineLogFacts, parse_engine_log
from planner.validation.log_check import ComparisonRow, DeploymentSummary, LogCheck, check_log
from planner.validation.saved import (
    ComparisonInput,
    ComparisonResult,
    SavedScenario,
    SavedScenarioList,
    ScenarioComparison,
    compare_scenarios,
    delete_scenario,
    duplicate_scenario,
    list_scenarios,
    load_scenario,
    save_scenario,
)
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
    "ComparisonInput",
    "ComparisonResult",
    "ComparisonRow",
    "DeploymentSummary",
    "EngineLogFacts",
    "LogCheck",
    "SavedScenario",
    "SavedScenarioList",
    "ScenarioComparison",
    "StoreError",
    "StoredMeasurement",
    "check_log",
    "compare_scenarios",
    "delete_scenario",
    "duplicate_scenario",
    "list_measurements",
    "list_scenarios",
    "load_measurement",
    "load_scenario",
    "parse_engine_log",
    "save_measurement",
    "save_scenario",
    "store_path",
]
