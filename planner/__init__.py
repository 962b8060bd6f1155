"""Speculative Decoding Capacity Planner: the core library (no Streamlit here).

Every figure the app, CLI and reports show is computed by a function in this package over the
catalog facts in ``data/``. Heavy dependencies (torch, transformers, pynvml) are imported lazily
inside the functions that need them, so the core imports in milliseconds.
"""

__all__ = ["__version__"]
__version__ = "0.1.0"
