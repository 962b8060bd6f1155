"""Measured kernel latencies from ``aiconfigurator-core`` (the only module that touches that package).

NVIDIA's aiconfigurator ships kernel times measured on each GPU for each serving engine release
(Apache-2.0, https://github.com/ai-dynamo/aiconfigurator), as parquet tables under
``aiconfigurator_core/systems/data/<system>/<family>/<engine>/<version>/``:

* ``gemm/…/gemm_perf.parquet``: ``gemm_dtype, m, n, k, latency`` (ms) for ``m`` tokens × ``k`` → ``n``;
* ``attention/…/generation_attention_perf.parquet``: one decode token per sequence, ``batch_size`` sequences
  at context ``step``, ``num_heads`` / ``num_key_value_heads`` / ``head_dim`` per GPU, ``kv_cache_dtype``;
* ``attention/…/context_attention_perf.parquet``: prefill of ``batch_size`` sequences of ``isl`` tokens;
* ``comm/<engine>/…/custom_allreduce_perf.parquet``: one all-reduce of ``message_size`` bf16 elements
  over ``num_gpus`` GPUs (the engine's custom all-reduce, captured in a CUDA graph or eager).

**Why the tables and not the SDK.** The package's Python SDK is being moved into a compiled engine
release by release (its query functions are deprecation shims over a Rust extension in 0.12), while the
table layout and column names above are the published data contract its collectors write and every
release reads. Reading the tables with pyarrow keeps one narrow, documented contract, needs no native
extension at run time, and leaves interpolation, clamping and the roofline fallback in our hands.

The package is located without importing it (``importlib.util.find_spec``), only when asked, and every
function answers ``None`` where it is missing, where the GPU / engine / precision has no table, or
where a shape lies outside the measured grid: the caller then uses the roofline for that operator.

Which table: the GPU's system from ``data/measured_kernels.json``; the engine's newest release that has
both GEMM and attention tables (aiconfigurator's own default release per system); within a table, the
kernel with the most measured shapes (the engine's default path on that GPU: FA3 on Hopper for vLLM and
SGLang, FlashInfer/TRT-LLM kernels on Blackwell), the CUDA-graph all-reduce where graphs are captured.

>>> tables = kernel_tables("h100-sxm-80gb", "vllm")
>>> tables is None or tables.gemm_ms("bf16", 1, 8192, 8192) > 0
True
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import TypeVar

import numpy as np

from planner.errors import CatalogError
from planner.facts import clear_caches, data_cache, read_data_file
from planner.speed.kernels import grid as grid_module
from planner.speed.kernels.grid import Grid, sliced

PACKAGE = "aiconfigurator_core"
DISTRIBUTION = "aiconfigurator-core"
MAP_FILE = "measured_kernels.json"

#: What a derived table holds for a key it has not made yet (a made value may be None).
_MISSING = object()
#: Our compute / KV dtypes → the tables' ``gemm_dtype`` / ``kv_cache_dtype`` values.
GEMM_DTYPES = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8", "nvfp4": "nvfp4", "int4": "int4_wo"}
KV_DTYPES = {2: "bfloat16", 1: "fp8"}
#: Lines and values derived from one GPU's tables that are kept for reuse (a few per model and batch size).
DERIVED_ENTRIES = 65_536

T = TypeVar("T")


def systems_dir() -> Path | None:
    """``…/aiconfigurator_core/systems/data`` of the installed package, or None (it is not installed)."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "systems" / "data"
    return root if root.is_dir() else None


@contextmanager
def roofline_only() -> Iterator[None]:
    """Within it every step is priced on the roofline, as where aiconfigurator-core is not installed: the roofline's
    own fit (``python -m bench.fit_step_model``) prices its rows so. The data caches are cleared on entry and exit.

    >>> with roofline_only():
    ...     systems_dir() is None
    True
    """
    missing = object()
    saved = sys.modules.get(PACKAGE, missing)
    sys.modules[PACKAGE] = None  # type: ignore[assignment]  # find_spec now answers None
    clear_caches()
    try:
        yield
    finally:
        if saved is missing:
            del sys.modules[PACKAGE]
        else:
            sys.modules[PACKAGE] = saved  # type: ignore[assignment]
        clear_caches()


@data_cache
def package_version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


@data_cache
def _mapping() -> dict:
    try:
        return read_data_file(MAP_FILE)
    except CatalogError:  # a data folder without the mapping: nothing is covered
        return {"gpus": {}, "engines": {}}


def _version_key(text: str) -> tuple:
    parts = []
    for piece in text.replace("rc", ".-1.").replace("post", ".").split("."):
        parts.append(int(piece) if piece.lstrip("-").isdigit() else -2)
    return tuple(parts)


def _release(system: Path, engine: str) -> str | None:
    """The newest release of ``engine`` with both GEMM and attention tables on ``system``."""
    gemm = {p.parent.name for p in (system / "gemm" / engine).glob("*/gemm_perf.parquet")}
    attn = {p.parent.name for p in (system / "attention" / engine).glob("*/generation_attention_perf.parquet")}
    both = gemm & attn
    return max(both, key=_version_key) if both else None


def _read(path: Path, columns: list[str], filters: dict | None = None, prefer: str | None = None) -> dict:
    """Numeric columns of one table as numpy arrays, rows kept where every ``filters`` column equals its value.

    A column a release does not write (e.g. ``window_size`` before sliding-window kernels were measured)
    counts as its filter value; a table that is missing or unreadable has no rows. Where the table has a
    ``kernel_source`` column, only the kernel with the most measured shapes is kept (or the one whose name
    holds ``prefer``): the engine's default path on that GPU.
    """
    import pyarrow.compute as pc  # noqa: PLC0415 (optional and heavy: only where measured tables are read)
    import pyarrow.parquet as pq  # noqa: PLC0415

    wanted = [*columns, *(filters or {}), "kernel_source"]
    try:
        present = set(pq.read_schema(path).names)
        table = pq.read_table(path, columns=[c for c in dict.fromkeys(wanted) if c in present])
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        return {name: np.array([]) for name in columns}
    for name, value in (filters or {}).items():
        if name in present:
            table = table.filter(pc.equal(table[name], value))
    if "kernel_source" in present and table.num_rows:
        counts = pc.value_counts(table["kernel_source"]).to_pylist()
        chosen = max(counts, key=lambda c: (prefer is not None and prefer in c["values"].lower(), c["counts"]))
        table = table.filter(pc.equal(table["kernel_source"], chosen["values"]))
    return {name: table[name].to_numpy() for name in columns}


@data_cache
def _code_hash() -> hashlib._Hash:
    """The hash of the code that builds a grid (this module and the grid's), to extend with a query's key."""
    return hashlib.sha256(b"".join(Path(f).read_bytes() for f in (__file__, grid_module.__file__)))


def _cache_path(path: Path, axes: list[str], filters: dict, prefer: str | None) -> Path:
    """Where a built grid is kept between processes: keyed by the table, the query and the code that builds it."""
    key = json.dumps([package_version(), str(path), axes, filters, prefer], sort_keys=True, default=str)
    digest = _code_hash().copy()
    digest.update(key.encode())
    root = os.environ.get("PLANNER_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    root = Path(root) if os.environ.get("PLANNER_CACHE_DIR") else Path(root) / "sd-capacity-planner"
    return root / "kernel-grids" / f"{digest.hexdigest()[:24]}.npy"


def _packed(grid: Grid | None) -> np.ndarray:
    """``grid`` as one float array, ``[d, len(axis 1) … len(axis d), axis 1 … axis d, values…]`` (``[0]``: no
    grid): one ``.npy`` file reads in tens of microseconds, an ``.npz`` archive of the same arrays in a millisecond.

    >>> _unpacked(_packed(Grid.build([(1, 10, 2.0), (3, 10, 6.0)]))).at((2, 10)), _unpacked(_packed(None))
    (4.0, None)
    """
    if grid is None:
        return np.zeros(1)
    sizes = [len(axis) for axis in grid.axes]
    return np.concatenate([[len(sizes)], sizes, *grid.axes, grid.values.ravel()]).astype(float)


def _unpacked(packed: np.ndarray) -> Grid | None:
    """The grid :func:`_packed` wrote (axes and values exactly as built)."""
    dims = int(packed[0])
    if not dims:
        return None
    sizes = [int(n) for n in packed[1 : 1 + dims]]
    at = 1 + dims
    axes = []
    for size in sizes:
        axes.append(tuple(packed[at : at + size].tolist()))
        at += size
    values = packed[at:]
    if values.size != int(np.prod(sizes)):
        raise ValueError("a truncated grid")
    return Grid(tuple(axes), values.reshape(sizes))


def _table_grid(path: Path, axes: list[str], filters: dict, prefer: str | None = None) -> Grid | None:
    """The padded grid of one table over ``axes`` (later processes read it from a disk cache, no pyarrow)."""
    cached = _cache_path(path, axes, filters, prefer)
    if cached.is_file():
        try:
            return _unpacked(np.load(cached))
        except (OSError, ValueError, IndexError):
            pass  # a damaged cache entry is rebuilt below
    data = _read(path, [*axes, "latency"], filters, prefer)
    grid = Grid.from_columns([data[a] for a in axes], data["latency"]).padded() if len(data["latency"]) else None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f"{cached.stem}.tmp{os.getpid()}.npy")
        np.save(tmp, _packed(grid))
        os.replace(tmp, cached)
    except OSError:
        pass  # the cache is an optimisation; a read-only home still works
    return grid


class KernelTables:
    """Measured latencies of one GPU system for one engine release; every query in milliseconds or None."""

    def __init__(self, root: Path, system: str, engine: str, version: str, gpu_name: str, engine_name: str):
        self.root = root
        self.system = system
        self.engine = engine
        self.version = version
        self.engine_name = engine_name
        self.label = (
            f"kernel times measured on {gpu_name} for {engine_name} {version} (aiconfigurator-core {package_version()})"
        )
        self._gemm: dict[str, Grid | None] = {}
        self._attn: dict[tuple, Grid | None] = {}
        self._ar: dict[tuple[int, bool | str], Grid | None] = {}
        self._derived: dict[tuple, object] = {}

    def derived(self, key: tuple, build: Callable[[], T]) -> T:
        """What ``build`` makes from these tables (a model's per-layer GEMM line, an attention line at one batch),
        made once per ``key`` and shared by every model priced from them in this process."""
        value = self._derived.get(key, _MISSING)  # a miss costs no exception: cold pricing misses often
        if value is _MISSING:
            if len(self._derived) >= DERIVED_ENTRIES:
                self._derived.clear()
            value = self._derived[key] = build()
        return value  # type: ignore[return-value]

    def _dir(self, family: str, engine: str | None = None, version: str | None = None) -> Path:
        return self.root / self.system / family / (engine or self.engine) / (version or self.version)

    def gemm_grid(self, dtype: str) -> Grid | None:
        """The measured (m, n, k) grid of our compute dtype (bf16, fp8, nvfp4, int4), or None."""
        name = GEMM_DTYPES.get(dtype)
        if name is None:
            return None
        if name not in self._gemm:
            path = self._dir("gemm") / "gemm_perf.parquet"
            self._gemm[name] = _table_grid(path, ["m", "n", "k"], {"gemm_dtype": name})
        return self._gemm[name]

    def gemm_ms(self, dtype: str, m: float, n: float, k: float) -> float | None:
        """One GEMM of ``m`` tokens, ``k`` inputs → ``n`` outputs at our compute dtype (bf16, fp8, nvfp4, int4)."""
        grid = self.gemm_grid(dtype)
        return grid.at((m, n, k)) if grid is not None else None

    def moe_grid(self, dtype: str, hidden: int, inter: int, topk: int, experts: int, tp: int) -> Grid | None:
        """The routed experts of one MoE layer (``moe_perf``: tokens → ms) for one exact expert shape, split
        ``tp`` ways (no expert parallelism), tokens routed evenly; None where that shape was not measured."""
        key = ("moe", dtype, hidden, inter, topk, experts, tp)
        if key not in self._attn:
            path = self._dir("moe") / "moe_perf.parquet"
            filters = {"moe_dtype": dtype, "hidden_size": hidden, "inter_size": inter, "topk": topk}
            filters |= {"num_experts": experts, "moe_tp_size": tp, "moe_ep_size": 1, "distribution": "balanced"}
            self._attn[key] = _table_grid(path, ["num_tokens"], filters) if path.is_file() else None
        return self._attn[key]

    def _attention(self, table: str, kv_heads: int, head_dim: int, kv_dtype: str) -> Grid | None:
        key = (table, kv_heads, head_dim, kv_dtype)
        if key not in self._attn:
            path = self._dir("attention") / f"{table}_perf.parquet"
            axis = "step" if table == "generation_attention" else "isl"
            want = {"num_key_value_heads": kv_heads, "head_dim": head_dim, "kv_cache_dtype": kv_dtype}
            filters = {"window_size": 0, "beam_width": 1, **want}
            self._attn[key] = _table_grid(path, ["batch_size", axis, "num_heads"], filters)
        return self._attn[key]

    def attention_grid(self, table: str, heads: int, kv_heads: int, head_dim: int, kv_dtype: str) -> Grid | None:
        """The (batch, context or tokens) grid of one attention table at ``heads`` query heads per GPU."""
        key = (table, heads, kv_heads, head_dim, kv_dtype)
        if key not in self._attn:
            grid = self._attention(table, kv_heads, head_dim, kv_dtype)
            self._attn[key] = grid.fix_last(heads) if grid is not None else None
        return self._attn[key]

    def decode_attention_ms(
        self, batch: float, context: float, heads: int, kv_heads: int, head_dim: int, kv_dtype: str
    ) -> float | None:
        """One layer's decode attention: ``batch`` sequences, one query token each, ``context`` cached tokens."""
        grid = self.attention_grid("generation_attention", heads, kv_heads, head_dim, kv_dtype)
        return grid.at((batch, context)) if grid is not None else None

    def context_attention_ms(
        self, batch: float, tokens: float, heads: int, kv_heads: int, head_dim: int, kv_dtype: str
    ) -> float | None:
        """One layer's causal prefill attention over ``batch`` sequences of ``tokens`` tokens each."""
        key = ("context attention", batch, tokens, heads, kv_heads, head_dim, kv_dtype)
        value = self._derived.get(key, _MISSING)
        if value is not _MISSING:
            return value  # type: ignore[return-value]
        grid = self.attention_grid("context_attention", heads, kv_heads, head_dim, kv_dtype)
        return self.derived(key, lambda: grid.at((batch, tokens)) if grid is not None else None)

    def allreduce_ms(self, elements: float, gpus: int, cuda_graphs: bool = True) -> float | None:
        """One all-reduce of ``elements`` bf16 values over ``gpus`` GPUs: the faster of the engine's custom
        all-reduce and NCCL's (engines switch to NCCL above the custom kernel's message limit). A message past a
        table's largest is priced as equal slices of it, never below as many whole messages of that size as it holds
        (:func:`~planner.speed.kernels.grid.sliced`): past the tables a bus never runs faster than measured at their
        edge."""
        key = ("all-reduce", elements, gpus, cuda_graphs)
        value = self._derived.get(key, _MISSING)
        if value is _MISSING:  # priced here, not through derived(): each new token count of a pass asks once
            custom = self._custom_allreduce_ms(elements, gpus, cuda_graphs)
            nccl = self._nccl_allreduce_ms(elements, gpus)
            value = nccl if custom is None else custom if nccl is None else min(custom, nccl)
            if len(self._derived) >= DERIVED_ENTRIES:
                self._derived.clear()
            self._derived[key] = value
        return value  # type: ignore[return-value]

    def _nccl_allreduce_ms(self, elements: float, gpus: int) -> float | None:
        key = (gpus, "nccl")
        if key not in self._ar:
            paths = list((self.root / self.system / "comm" / "nccl").glob("*/nccl_perf.parquet"))
            grid = None
            if paths:
                newest = max(paths, key=lambda p: _version_key(p.parent.name))
                filters = {"op_name": "all_reduce", "nccl_dtype": "half", "num_gpus": gpus}
                grid = _table_grid(newest, ["message_size"], filters)
            self._ar[key] = grid
        grid = self._ar[key]
        return sliced(grid, elements) if grid is not None else None

    def _custom_allreduce_ms(self, elements: float, gpus: int, cuda_graphs: bool) -> float | None:
        key = (gpus, cuda_graphs)
        if key not in self._ar:
            versions = [p.parent.name for p in (self.root / self.system / "comm" / self.engine).glob("*/custom_*")]
            grid = None
            if versions:
                newest = max(versions, key=_version_key)
                path = self._dir("comm", version=newest) / "custom_allreduce_perf.parquet"
                prefer = "graph" if cuda_graphs else "eager"
                grid = _table_grid(path, ["message_size"], {"num_gpus": gpus}, prefer)
            self._ar[key] = grid
        grid = self._ar[key]
        return sliced(grid, elements) if grid is not None else None


@data_cache
def kernel_tables(gpu_id: str, engine: str) -> KernelTables | None:
    """The measured tables for our GPU id and engine id, or None (package missing, GPU or engine not covered)."""
    root = systems_dir()
    if root is None:
        return None
    mapping = _mapping()
    system = mapping["gpus"].get(gpu_id)
    engine_entry = mapping["engines"].get(engine)
    if system is None or engine_entry is None or not (root / system["system"]).is_dir():
        return None
    release = _release(root / system["system"], engine_entry["engine"])
    if release is None:
        return None
    return KernelTables(root, system["system"], engine_entry["engine"], release, system["name"], engine_entry["name"])


def coverage_reason(gpu_id: str, engine: str) -> str:
    """Why there are no measured kernels for ``gpu_id`` under ``engine`` (for the roofline label)."""
    if systems_dir() is None:
        return "aiconfigurator-core is not installed"
    mapping = _mapping()
    if gpu_id not in mapping["gpus"]:
        return "no measured kernels for this GPU"
    if engine not in mapping["engines"]:
        return "no measured kernels for this engine"
    return "no measured kernels for this GPU and engine"
