"""Live GPU memory from NVML: a background thread samples device and per-process usage.

What each figure measures (named as vLLM's ``vllm/utils/mem_utils.py`` does,
https://github.com/vllm-project/vllm/blob/main/vllm/utils/mem_utils.py):

* ``device_used_bytes`` — ``nvmlDeviceGetMemoryInfo(h).used``: everything on the GPU, every process
  and the driver's own reservation.
* ``process_used_bytes`` — ``usedGpuMemory`` of this process in
  ``nvmlDeviceGetComputeRunningProcesses(h)``: what the driver charges this process (torch's reserved
  pool + the CUDA context + cuBLAS/NCCL workspaces). ``None`` where NVML does not report it (e.g. a
  container whose PID namespace hides the host PID).

pynvml is imported when a sampler starts, never at import. A missing library, driver or GPU, and
any error while sampling, become ``available=False`` with ``reason="NVML unavailable: <reason>"``:
the run goes on without a timeline. A fake NVML module can be injected (``nvml=``) for tests.

>>> result = NvmlSampler(nvml=_Missing()).start().stop()
>>> result.available, result.reason
(False, 'NVML unavailable: Library not found')
"""

from __future__ import annotations

import os
import threading
import time
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from planner.errors import InputError

#: Default polling interval: a few milliseconds resolves a decode step's KV growth and the prefill peak.
DEFAULT_INTERVAL_S = 0.005
#: Stored timelines are decimated to at most this many points per GPU (bucket maxima, so peaks survive).
STORED_POINTS_PER_GPU = 1500


class MemorySample(BaseModel):
    """One NVML reading of one GPU, ``t_s`` seconds after the sampler started."""

    t_s: float
    gpu_index: int
    device_used_bytes: int
    device_total_bytes: int
    process_used_bytes: int | None = None


class NvmlDevice(BaseModel):
    index: int
    name: str
    total_bytes: int


class NvmlResult(BaseModel):
    """The timeline and its peaks; ``available=False`` carries the reason instead."""

    available: bool
    reason: str | None = None
    interval_s: float = DEFAULT_INTERVAL_S
    driver_version: str | None = None
    devices: list[NvmlDevice] = []
    samples: list[MemorySample] = []
    sample_count: int = 0
    duration_s: float = 0.0
    #: Per GPU index (as a string key, JSON-friendly): the first reading, before the run allocated anything.
    baseline_device_used_bytes: dict[str, int] = {}
    peak_device_used_bytes: dict[str, int] = {}
    peak_process_used_bytes: dict[str, int] = {}
    errors: list[str] = []

    @property
    def peak_process_total_bytes(self) -> int | None:
        """This process's peak summed over GPUs (None where NVML gave no per-process figure)."""
        return sum(self.peak_process_used_bytes.values()) if self.peak_process_used_bytes else None

    @property
    def peak_device_increase_bytes(self) -> int | None:
        """Peak device usage above the starting reading, summed over GPUs."""
        if not self.peak_device_used_bytes:
            return None
        return sum(
            peak - self.baseline_device_used_bytes.get(gpu, 0) for gpu, peak in self.peak_device_used_bytes.items()
        )


def _unavailable(reason: str) -> str:
    return f"NVML unavailable: {reason}"


def _describe(exc: BaseException) -> str:
    return str(exc).strip() or type(exc).__name__


class _Missing:
    """Stands for an NVML whose shared library cannot be loaded (used by the doctest)."""

    class NVMLError(Exception):
        pass

    def nvmlInit(self) -> None:  # noqa: N802 (NVML's spelling)
        raise self.NVMLError("Library not found")


def _load_nvml() -> Any:
    import pynvml

    return pynvml


_FROM_ENVIRON = "<CUDA_VISIBLE_DEVICES>"


def visible_gpu_indices(count: int, env: str | None = _FROM_ENVIRON) -> list[int | str]:
    """NVML indices (or UUIDs) of the GPUs this process may use, from ``CUDA_VISIBLE_DEVICES``.

    ``env=None`` means the variable is unset (every GPU is visible).

    >>> visible_gpu_indices(4, "2,3"), visible_gpu_indices(2, None), visible_gpu_indices(2, "")
    ([2, 3], [0, 1], [])
    """
    if env == _FROM_ENVIRON:
        env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is None:
        return list(range(count))
    chosen: list[int | str] = []
    for part in (p.strip() for p in env.split(",")):
        if not part:
            continue
        if part.lstrip("-").isdigit():
            index = int(part)
            if index < 0:
                break  # CUDA stops at the first invalid index
            if index < count:
                chosen.append(index)
        else:
            chosen.append(part)  # a UUID (GPU-..., MIG-...)
    return chosen


class NvmlSampler:
    """Poll NVML every ``interval_s`` in a daemon thread; use as a context manager or start()/stop()."""

    def __init__(
        self,
        interval_s: float = DEFAULT_INTERVAL_S,
        *,
        nvml: ModuleType | Any | None = None,
        pid: int | None = None,
        visible: list[int | str] | None = None,
    ) -> None:
        if not interval_s > 0:
            raise InputError("interval_s", interval_s, "a polling interval > 0 seconds")
        self.interval_s = float(interval_s)
        self._nvml = nvml
        self._pid = os.getpid() if pid is None else pid
        self._visible = visible
        self._handles: list[tuple[int, Any]] = []
        self._samples: list[MemorySample] = []
        self._errors: list[str] = []
        self._reason: str | None = None
        self._driver: str | None = None
        self._devices: list[NvmlDevice] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._elapsed = 0.0
        self._initialised = False
        self._result: NvmlResult | None = None

    # ----- life cycle ------------------------------------------------------------------------

    def __enter__(self) -> NvmlSampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> NvmlSampler:
        """Initialise NVML, take a first reading and start the thread; failures only mark it unavailable."""
        self._t0 = time.perf_counter()
        try:
            nvml = self._nvml if self._nvml is not None else _load_nvml()
            self._nvml = nvml
        except Exception as exc:  # ImportError or a broken install: never a crash
            self._reason = _unavailable(f"pynvml cannot be imported ({_describe(exc)})")
            return self
        try:
            nvml.nvmlInit()
            self._initialised = True
            self._driver = _text(nvml.nvmlSystemGetDriverVersion())
            wanted = self._visible if self._visible is not None else visible_gpu_indices(nvml.nvmlDeviceGetCount())
            for position, key in enumerate(wanted):
                handle = (
                    nvml.nvmlDeviceGetHandleByIndex(key)
                    if isinstance(key, int)
                    else nvml.nvmlDeviceGetHandleByUUID(key)
                )
                index = key if isinstance(key, int) else position
                info = nvml.nvmlDeviceGetMemoryInfo(handle)
                self._handles.append((index, handle))
                self._devices.append(
                    NvmlDevice(index=index, name=_text(nvml.nvmlDeviceGetName(handle)), total_bytes=int(info.total))
                )
            if not self._handles:
                raise RuntimeError("no visible GPU")
            self._sample_once()
        except Exception as exc:
            self._reason = _unavailable(_describe(exc))
            self._shutdown()
            return self
        self._thread = threading.Thread(target=self._loop, name="nvml-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> NvmlResult:
        """Stop the thread (joins it), take a last reading, shut NVML down and return the result."""
        if self._result is not None:
            return self._result
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(1.0, 20 * self.interval_s))
            if self._reason is None:
                try:
                    self._sample_once()
                except Exception as exc:
                    self._errors.append(f"final sample: {_describe(exc)}")
        self._elapsed = time.perf_counter() - self._t0
        self._shutdown()
        self._result = self._build()
        return self._result

    def latest(self) -> list[MemorySample]:
        """The most recent reading of each GPU (e.g. the memory at the moment of an OOM)."""
        with self._lock:
            last: dict[int, MemorySample] = {}
            for sample in self._samples:
                last[sample.gpu_index] = sample
        return list(last.values())

    # ----- internals -------------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._sample_once()
            except Exception as exc:  # a GPU fell off the bus, the driver went away: keep what we have
                self._errors.append(f"sampling stopped at {time.perf_counter() - self._t0:.3f} s: {_describe(exc)}")
                return

    def _sample_once(self) -> None:
        nvml = self._nvml
        now = time.perf_counter() - self._t0
        readings = []
        for index, handle in self._handles:
            info = nvml.nvmlDeviceGetMemoryInfo(handle)
            readings.append(
                MemorySample(
                    t_s=now,
                    gpu_index=index,
                    device_used_bytes=int(info.used),
                    device_total_bytes=int(info.total),
                    process_used_bytes=self._process_bytes(handle),
                )
            )
        with self._lock:
            self._samples.extend(readings)

    def _process_bytes(self, handle: Any) -> int | None:
        try:
            processes = self._nvml.nvmlDeviceGetComputeRunningProcesses(handle)
        except Exception:
            return None
        processes = list(processes or ())
        for proc in processes:
            if int(getattr(proc, "pid", -1)) == self._pid:
                used = getattr(proc, "usedGpuMemory", None)
                return int(used) if used is not None else None
        # Not listed: no CUDA context yet (0) if nothing runs, else unknown (a container hides our host PID).
        return 0 if not processes else None

    def _shutdown(self) -> None:
        if self._initialised:
            try:
                self._nvml.nvmlShutdown()
            except Exception as exc:
                self._errors.append(f"nvmlShutdown: {_describe(exc)}")
            self._initialised = False

    def _build(self) -> NvmlResult:
        if self._reason is not None:
            return NvmlResult(available=False, reason=self._reason, interval_s=self.interval_s, errors=self._errors)
        with self._lock:
            samples = list(self._samples)
        baseline: dict[str, int] = {}
        peak_device: dict[str, int] = {}
        peak_process: dict[str, int] = {}
        unknown: set[str] = set()
        for s in samples:
            key = str(s.gpu_index)
            baseline.setdefault(key, s.device_used_bytes)
            peak_device[key] = max(peak_device.get(key, 0), s.device_used_bytes)
            if s.process_used_bytes is None:
                unknown.add(key)
            else:
                peak_process[key] = max(peak_process.get(key, 0), s.process_used_bytes)
        # A GPU whose per-process figure went missing at any point has no trustworthy process peak.
        peak_process = {key: value for key, value in peak_process.items() if key not in unknown}
        return NvmlResult(
            available=True,
            interval_s=self.interval_s,
            driver_version=self._driver,
            devices=self._devices,
            samples=decimate(samples, STORED_POINTS_PER_GPU),
            sample_count=len(samples),
            duration_s=self._elapsed,
            baseline_device_used_bytes=baseline,
            peak_device_used_bytes=peak_device,
            peak_process_used_bytes=peak_process,
            errors=self._errors,
        )


def detect_gpus(nvml: ModuleType | Any | None = None) -> NvmlResult:
    """One NVML reading: the visible GPUs (``devices``), or ``available=False`` with the reason. No torch.

    >>> detect_gpus(_Missing()).available
    False
    """
    return NvmlSampler(nvml=nvml).start().stop()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def decimate(samples: list[MemorySample], max_points: int) -> list[MemorySample]:
    """At most ``max_points`` readings per GPU, keeping the highest reading of each time bucket.

    >>> pts = [MemorySample(t_s=i, gpu_index=0, device_used_bytes=u, device_total_bytes=9) for i, u in
    ...        enumerate([1, 5, 2, 2, 9, 1])]
    >>> [s.device_used_bytes for s in decimate(pts, 3)]
    [5, 2, 9]
    """
    by_gpu: dict[int, list[MemorySample]] = {}
    for sample in samples:
        by_gpu.setdefault(sample.gpu_index, []).append(sample)
    kept: list[MemorySample] = []
    for series in by_gpu.values():
        if len(series) <= max_points:
            kept.extend(series)
            continue
        size = -(-len(series) // max_points)
        for start in range(0, len(series), size):
            bucket = series[start : start + size]
            kept.append(max(bucket, key=lambda s: (s.process_used_bytes or 0, s.device_used_bytes)))
    return sorted(kept, key=lambda s: (s.t_s, s.gpu_index))
