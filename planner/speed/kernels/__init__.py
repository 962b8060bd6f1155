"""Measured kernel times (aiconfigurator-core's tables) for the step model, with the roofline as fallback.

Only :mod:`planner.speed.kernels.aiconfigurator_tables` touches the optional package;
:mod:`planner.speed.kernels.measured_pass` prices a pass's operators from it.
"""
