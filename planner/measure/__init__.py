"""The measurement harness: the only part of the planner that touches a GPU.

Importing this package is light (nothing heavy at import time); the modules that run models
(``speculative_run``, ``model_loading``, ``harness``) import torch, and ``nvml_sampler`` imports
pynvml only when a sampler starts. ``record``, ``prompts``, ``acceptance_counts``,
``vllm_metrics`` and ``prediction`` are pure Python, so the Validation page and the CLI can read
records without torch.
"""
