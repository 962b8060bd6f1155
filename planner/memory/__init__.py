"""The per-GPU memory plan: the engine's budget, what stops it from starting, and ranked fixes."""

from planner.memory.budget import concurrency_by_context, plan_budget
from planner.memory.plan import plan_memory
from planner.memory.types import COMPONENT_LABELS, MEMORY_COMPONENTS, GpuMemory, MemoryPlan, Suggestion

__all__ = [
    "COMPONENT_LABELS",
    "MEMORY_COMPONENTS",
    "GpuMemory",
    "MemoryPlan",
    "Suggestion",
    "concurrency_by_context",
    "plan_budget",
    "plan_memory",
]
