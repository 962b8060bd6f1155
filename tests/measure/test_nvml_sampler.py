"""The NVML sampler against a fake NVML module: timeline, peaks, clean stop, every error path."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from planner.errors import InputError
from planner.measure.nvml_sampler import MemorySample, NvmlSampler, decimate, visible_gpu_indices

GIB = 2**30


class FakeNvml:
    """Just enough of pynvml: a scripted sequence of used-memory readings per device."""

    class NVMLError(Exception):
        pass

    def __init__(self, used_by_device: list[list[int]], *, pid: int = 4242, total: int = 80 * GIB) -> None:
        self.used_by_device = used_by_device
        self.calls = [0] * len(used_by_device)
        self.pid = pid
        self.total = total
        self.shutdowns = 0
        self.fail_after: int | None = None
        self.lock = threading.Lock()
        self.last_used = [series[0] for series in used_by_device]

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self):
        return b"550.54.15"

    def nvmlDeviceGetCount(self):
        return len(self.used_by_device)

    def nvmlDeviceGetHandleByIndex(self, index):
        return index

    def nvmlDeviceGetName(self, handle):
        return "NVIDIA H100 80GB HBM3"

    def _used(self, handle):
        series = self.used_by_device[handle]
        return series[min(self.calls[handle], len(series) - 1)]

    def nvmlDeviceGetMemoryInfo(self, handle):
        with self.lock:
            if self.fail_after is not None and self.calls[handle] >= self.fail_after:
                raise self.NVMLError("GPU is lost")
            used = self._used(handle)
            self.calls[handle] += 1
            self.last_used[handle] = used
        return SimpleNamespace(used=used, total=self.total, free=self.total - used)

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        used = self.last_used[handle]
        return [SimpleNamespace(pid=1, usedGpuMemory=GIB), SimpleNamespace(pid=self.pid, usedGpuMemory=used - GIB)]


def _wait_for(fake: FakeNvml, calls: int, timeout_s: float = 300.0) -> None:
    """Until every device was read ``calls`` times (a loaded machine may take long; only a hang fails)."""
    deadline = time.monotonic() + timeout_s
    while min(fake.calls) < calls and time.monotonic() < deadline:
        time.sleep(0.001)
    assert min(fake.calls) >= calls, "the sampler thread stopped reading"


def test_timeline_is_ordered_and_peak_is_the_highest_reading():
    series = [GIB * v for v in (2, 2, 3, 10, 7, 5)]  # the first reading is start()'s device query
    fake = FakeNvml([series])
    with NvmlSampler(0.001, nvml=fake, pid=fake.pid) as sampler:
        _wait_for(fake, len(series) + 2)
    result = sampler.stop()
    assert result.available and result.reason is None
    assert result.driver_version == "550.54.15"
    assert result.devices[0].name == "NVIDIA H100 80GB HBM3" and result.devices[0].total_bytes == 80 * GIB
    times = [s.t_s for s in result.samples]
    assert times == sorted(times)
    assert result.peak_device_used_bytes == {"0": 10 * GIB}
    assert result.baseline_device_used_bytes == {"0": 2 * GIB}
    # this process = device used minus the other process's 1 GiB
    assert result.peak_process_used_bytes == {"0": 9 * GIB}
    assert result.peak_process_total_bytes == 9 * GIB
    assert result.peak_device_increase_bytes == 8 * GIB
    assert fake.shutdowns == 1


def test_two_gpus_are_sampled_separately():
    fake = FakeNvml([[GIB, 4 * GIB], [GIB, 6 * GIB]])
    with NvmlSampler(0.001, nvml=fake, pid=fake.pid) as sampler:
        _wait_for(fake, 3)
    result = sampler.stop()
    assert result.peak_device_used_bytes == {"0": 4 * GIB, "1": 6 * GIB}
    assert {s.gpu_index for s in result.samples} == {0, 1}


def test_stop_joins_the_thread_and_is_idempotent():
    fake = FakeNvml([[GIB]])
    sampler = NvmlSampler(0.001, nvml=fake, pid=fake.pid).start()
    _wait_for(fake, 3)
    first = sampler.stop()
    calls = fake.calls[0]
    time.sleep(0.02)
    assert fake.calls[0] == calls  # nothing samples after stop
    assert sampler.stop() is first
    assert not any(t.name == "nvml-sampler" and t.is_alive() for t in threading.enumerate())


def test_library_missing_is_a_clean_unavailable_result():
    class Missing(FakeNvml):
        def nvmlInit(self):
            raise self.NVMLError("NVML Shared Library Not Found")

    result = NvmlSampler(nvml=Missing([[0]])).start().stop()
    assert not result.available
    assert result.reason == "NVML unavailable: NVML Shared Library Not Found"
    assert result.samples == []


def test_error_while_sampling_keeps_the_timeline_and_records_the_error():
    fake = FakeNvml([[GIB, 2 * GIB, 3 * GIB]])
    fake.fail_after = 3
    with NvmlSampler(0.001, nvml=fake, pid=fake.pid) as sampler:
        _wait_for(fake, 3)
        deadline = time.monotonic() + 300
        while not sampler._errors and time.monotonic() < deadline:  # the failing read: wait for it, not a time
            time.sleep(0.001)
    result = sampler.stop()
    assert result.available
    assert result.peak_device_used_bytes == {"0": 3 * GIB}
    assert any("GPU is lost" in e for e in result.errors)


def test_no_visible_gpu_is_unavailable():
    result = NvmlSampler(nvml=FakeNvml([[GIB]]), visible=[]).start().stop()
    assert not result.available and "no visible GPU" in result.reason


def test_process_hidden_by_a_container_gives_no_process_peak():
    fake = FakeNvml([[GIB, 2 * GIB]], pid=999)
    with NvmlSampler(0.001, nvml=fake, pid=4242) as sampler:  # our pid is not in NVML's list
        _wait_for(fake, 3)
    result = sampler.stop()
    assert result.peak_process_used_bytes == {}
    assert result.peak_process_total_bytes is None
    assert result.peak_device_used_bytes == {"0": 2 * GIB}


def test_latest_gives_the_last_reading_per_gpu():
    fake = FakeNvml([[GIB, 5 * GIB]])
    sampler = NvmlSampler(0.001, nvml=fake, pid=fake.pid).start()
    _wait_for(fake, 3)
    assert sampler.latest()[0].device_used_bytes == 5 * GIB
    sampler.stop()


def test_this_machine_reports_nvml_unavailable_cleanly():
    """No NVIDIA driver here: the real pynvml must fail softly (a GPU machine would sample instead)."""
    result = NvmlSampler(0.001).start().stop()
    if result.available:
        pytest.skip("an NVIDIA driver is present on this machine")
    assert result.reason.startswith("NVML unavailable: ")


def test_bad_interval_is_an_input_error():
    with pytest.raises(InputError) as err:
        NvmlSampler(0)
    assert err.value.field == "interval_s"


def test_visible_devices_parsing():
    assert visible_gpu_indices(8, "0,3") == [0, 3]
    assert visible_gpu_indices(2, "0,5") == [0]
    assert visible_gpu_indices(4, "1,-1,2") == [1]
    assert visible_gpu_indices(2, "GPU-abc") == ["GPU-abc"]


def test_decimate_keeps_bucket_maxima_per_gpu():
    samples = [
        MemorySample(t_s=i, gpu_index=g, device_used_bytes=(i * 7919) % 101, device_total_bytes=100)
        for i in range(1000)
        for g in (0, 1)
    ]
    kept = decimate(samples, 50)
    assert len([s for s in kept if s.gpu_index == 0]) <= 50
    assert max(s.device_used_bytes for s in kept) == max(s.device_used_bytes for s in samples)
