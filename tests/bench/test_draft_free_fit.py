"""The n-gram α per task in data/draft_free_acceptance.json is what the speed model inverts from its source."""

import pytest

from bench.fit_draft_free_acceptance import refit
from planner.pairs import load_draft_free_acceptance


@pytest.mark.parametrize("task", load_draft_free_acceptance().ngram.tasks, ids=lambda t: t.task)
def test_stored_alpha_reproduces_the_published_speedup(task):
    assert refit(task) == pytest.approx(task.alpha, abs=0.002)
