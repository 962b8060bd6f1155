"""Validation: serving-engine start-up logs parsed and checked against the plan; the store (measurements, saved
scenarios, imported custom models, saved quotes)."""

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
from planner.validation.saved_models import (
    SavedModel,
    SavedModelList,
    SavedModelOutcome,
    custom_model_specs,
    delete_custom_model,
    list_custom_models,
    save_custom_model,
)
from planner.validation.saved_quotes import (
    SavedQuote,
    SavedQuoteList,
    delete_quote,
    list_quotes,
    load_quote,
    save_quote,
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
    "SavedModel",
    "SavedModelList",
    "SavedModelOutcome",
    "SavedQuote",
    "SavedQuoteList",
    "SavedScenario",
    "SavedScenarioList",
    "ScenarioComparison",
    "StoreError",
    "StoredMeasurement",
    "check_log",
    "compare_scenarios",
    "custom_model_specs",
    "delete_custom_model",
    "delete_quote",
    "delete_scenario",
    "duplicate_scenario",
    "list_custom_models",
    "list_measurements",
    "list_quotes",
    "list_scenarios",
    "load_measurement",
    "load_quote",
    "load_scenario",
    "parse_engine_log",
    "save_custom_model",
    "save_measurement",
    "save_quote",
    "save_scenario",
    "store_path",
]
