"""`make bench-matrix`: how long the draft decision matrix takes for one target and node (prints only).

The first call in a process pays for importing torch/transformers and counting the few catalog models
only transformers can count (meta device); later calls reuse those counts.
"""

from __future__ import annotations

import statistics
import sys
import time

from planner.catalog.lookup import get_model, get_node
from planner.decisions.selection import decision_matrix
from planner.deployment import Deployment

CASES = [
    ("Llama-3.1-70B", "8x-h100-sxm-80gb", 8),
    ("Qwen2.5-72B", "8x-h200-sxm-141gb", 4),
    ("Llama-3.1-8B", "1x-l40s-48gb", 1),
]


def main() -> int:
    for target, node, tp in CASES:
        base = Deployment.on_node(get_model(target), get_node(node), tp=tp)
        start = time.perf_counter()
        matrix = decision_matrix(base, batch_size=8)
        cold = time.perf_counter() - start
        warm = []
        for _ in range(5):
            start = time.perf_counter()
            decision_matrix(base, batch_size=8)
            warm.append(time.perf_counter() - start)
        print(
            f"{target:<16} on {node:<20} {len(matrix.rows):>3} drafts: first call {cold:6.3f} s, "
            f"then median {statistics.median(warm):6.3f} s (best {min(warm):.3f} s); top draft {matrix.rows[0].draft}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
