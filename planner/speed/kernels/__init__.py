"""Measured kernel times (aiconfigurator-core's tables) for the step model, with the roofline as fallback.

Only :mod:`planner.speed.kernels.aiconfigurator_tables` touches the optional package;
:mod:`planner.speed.kernels.measured_pass` prices a pass's operators from it and
:mod:`planner.speed.kernels.grid` interpolates between measured shapes. Importing this package loads
neither the optional package nor any table.
"""

from planner.speed.kernels.aiconfigurator_tables import KernelTables, kernel_tables
from planner.speed.kernels.grid import Grid
from planner.speed.kernels.measured_pass import MeasuredPass, measured_pass, roofline_label

__all__ = ["Grid", "KernelTables", "MeasuredPass", "kernel_tables", "measured_pass", "roofline_label"]
