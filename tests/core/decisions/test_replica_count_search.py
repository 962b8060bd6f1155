"""The fewest replicas between a miss and a hit: every order of tries (interpolated probes, steps away from an end,
bisection) settles on the first count that meets objectives which ease as replicas are added."""

from __future__ import annotations

from math import ceil, log2

from hypothesis import given
from hypothesis import strategies as st

from planner.decisions.fleet import ReplicaSearch, first_count_that_meets


def _search(threshold: int, probes: list[float]) -> tuple[ReplicaSearch, list[int]]:
    """A search whose objectives are met from ``threshold`` replicas on, and whose interpolation puts each probe at
    the next fraction of ``probes`` across the bracket (wherever the real margins would)."""
    search = ReplicaSearch.__new__(ReplicaSearch)
    tried: list[int] = []
    search.at = lambda n: tried.append(n) or n
    search.misses = lambda n: ["p99 TTFT"] if n < threshold else []
    fractions = iter(probes)

    def probe(miss: int, hit: int) -> int:
        x = miss + (hit - miss) * next(fractions, 0.5)
        return min(hit - 1, max(miss + 1, ceil(x)))

    search.probe = probe
    return search, tried


@given(
    miss=st.integers(1, 2_000),
    width=st.integers(2, 2_000),
    at=st.floats(0, 1),
    probes=st.lists(st.floats(0, 1), max_size=4),
)
def test_any_probes_settle_on_the_first_count_that_meets(miss, width, at, probes):
    hit = miss + width
    threshold = min(hit, miss + 1 + int(at * (width - 1)))
    search, tried = _search(threshold, probes)
    assert first_count_that_meets(search, miss, hit) == threshold
    assert all(miss < n < hit for n in tried) and len(set(tried)) == len(tried)
    # never much worse than bisecting: probes until one fails to halve the bracket, steps that at most double the
    # bisection's count, then bisection
    assert len(tried) <= 3 * ceil(log2(width)) + 2


def test_a_probe_next_to_the_miss_steps_up_from_it_instead_of_bisecting():
    search, tried = _search(486, [0.0])
    assert first_count_that_meets(search, 480, 960) == 486
    assert tried == [481, 483, 487, 485, 486]  # bisection alone would try 720, 600, 540, … : ten counts
