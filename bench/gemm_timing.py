"""Time bf16 weight GEMMs on a CUDA GPU with torch (cuBLAS, as an engine's linear layers run them): the device half
of `python -m bench.gemm_check` (prints JSON, never asserts).

``python -m bench.gemm_timing SHAPES.json OUT.json``: SHAPES.json holds ``{"shapes": [[n, k], ...], "m": [...]}``;
OUT.json gets ``{"device": ..., "torch": ..., "ms": {"n,k,m": milliseconds}}``. Each GEMM ``[m, k] x [k, n]`` runs
over enough copies of its weight that they do not fit in the L2 cache (an engine streams every layer's weights from
HBM once per pass), 20 calls captured in a CUDA graph (as an engine runs decode: the host's launch rate never
starves the GPU) and replayed between two CUDA events, the median of 5 replays after a warm-up. Imports only torch.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import torch

#: Bytes of weight copies cycled through per GEMM: several times the L2 cache of current GPUs (60 MB on H200).
STREAM_BYTES = 512 * 2**20
CALLS, RUNS = 20, 5


def time_shape(n: int, k: int, tokens: list[int]) -> dict[int, float]:
    """Milliseconds of one ``[m, k] x [k, n]`` bf16 GEMM at each ``m`` of ``tokens``, weights streamed from HBM."""
    copies = max(2, min(16, -(-STREAM_BYTES // (n * k * 2))))
    weights = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
    linear = torch.nn.functional.linear
    out = {}
    for m in tokens:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        side = torch.cuda.Stream()  # warm up on a side stream before capturing (PyTorch's CUDA graph recipe)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(3 * copies):
                linear(x, weights[i % copies])
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        # captured in a CUDA graph, as an engine runs its decode steps: the host's launch rate never starves the GPU
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for i in range(CALLS):
                linear(x, weights[i % copies])
        graph.replay()
        torch.cuda.synchronize()
        runs = []
        for _ in range(RUNS):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            runs.append(start.elapsed_time(end) / CALLS)
        out[m] = statistics.median(runs)
        del graph
    del weights
    torch.cuda.empty_cache()
    return out


def main(argv: list[str]) -> int:
    if not torch.cuda.is_available():
        sys.stderr.write("gemm_timing needs a CUDA GPU\n")
        return 2
    spec = json.loads(Path(argv[0]).read_text())
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "ms": {}}
    for n, k in spec["shapes"]:
        timed = time_shape(n, k, spec["m"])
        out["ms"] |= {f"{n},{k},{m}": ms for m, ms in timed.items()}
        print(n, k, {m: round(ms, 4) for m, ms in timed.items()}, flush=True)
    Path(argv[1]).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
