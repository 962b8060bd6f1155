"""Each serving engine's documented memory behaviour as typed profiles (data/engines.json)."""

from planner.engines.components import memory_accuracy
from planner.engines.profiles import (
    EngineProfile,
    Limits,
    engine_profile,
    engine_release,
    list_engine_profiles,
    resolve_limits,
)

__all__ = [
    "EngineProfile",
    "Limits",
    "engine_profile",
    "engine_release",
    "list_engine_profiles",
    "memory_accuracy",
    "resolve_limits",
]
