"""200 hostile links (values outside every widget's bounds, Markdown, HTML, huge and non-finite numbers, unknown
keys), a fixed seeded sample: none may raise (no exception box) or render what the link typed.

Every link is read the way every page reads it (the link parser, then the widgets' values): each value a page
would give a widget lies within that widget's bounds (``INPUT_BOUNDS``, the table the widgets are drawn with),
and the banner renders nothing the link typed. Every link is then opened on every page through AppTest, one
session per page, as a user pasting links one after another: no exception box, no internal error (an error the
page guard caught and logged, shown as "Could not use ..."), nothing rendered that the link typed.

Most hostile values are refused and fall back to their defaults, so most links give a page a scenario it has
already computed (each page caches its heavy result per scenario): those cost one render. The links whose
values are hostile but in bounds (a million requests per second, a two-billion-token prompt) are scenarios of
their own, and the page computes and renders their results. ``PLANNER_FUZZ_LINKS_PER_PAGE`` opens fewer links
per page (a share of the sample, a different one per page) for a quick local run.
"""

from __future__ import annotations

import logging
import os
import random

import pytest

from planner import Scenario
from planner.input_types import INPUT_BOUNDS
from planner.reports import plain_text
from planner.scenario import QUERY_KEYS
from tests.app.conftest import PAGE_FILES, internal_errors, page
from tests.app.test_hostile_text import HOSTILE, MD, RENDERED, rendered_problems
from ui._scenario import _widget_defaults

LINKS = 200
PER_PAGE = int(os.environ.get("PLANNER_FUZZ_LINKS_PER_PAGE", str(LINKS)))
_KEY_OF = {name: key for name, key in QUERY_KEYS.items()}


def _value(rng: random.Random, name: str) -> str:
    low, high = INPUT_BOUNDS.get(name, (0, 1))
    return rng.choice(
        [
            str(low - rng.choice([1e-9, 0.01, 1, 10**6])),
            str(high + rng.choice([1e-9, 0.01, 1, 10**12])),
            str(low),
            str(high),
            rng.choice(["nan", "inf", "-inf", "1e309", "-0", "", " ", "none", "0x10", "1_000", "٣"]),
            "9" * rng.choice([19, 25, 400, 401]),
            HOSTILE[: rng.randint(5, len(HOSTILE))],
            "8x-h100-sxm-80gb," * rng.randint(1, 40),
            str(rng.uniform(-1e6, 1e6)),
        ]
    )


def hostile_links(count: int, seed: int = 22) -> list[dict[str, str]]:
    rng = random.Random(seed)
    names = list(QUERY_KEYS)
    links = []
    for _ in range(count):
        link = {_KEY_OF[name]: _value(rng, name) for name in rng.sample(names, rng.randint(1, 6))}
        if rng.random() < 0.2:
            link[rng.choice(["x", "t[]", "tp%00", HOSTILE[:20]])] = HOSTILE
        links.append(link)
    return links


def test_every_value_a_hostile_link_gives_a_widget_is_within_its_bounds():
    rejected = 0
    for link in hostile_links(LINKS):
        scenario, problems = Scenario.from_query(link)
        rejected += bool(problems)
        for name, (low, high) in INPUT_BOUNDS.items():
            value = getattr(scenario, name)
            assert value is None or low <= value <= high, (link, name, value)
        for name, value in _widget_defaults(scenario).items():
            if name in INPUT_BOUNDS and value:  # 0 stands for the engine's default where the widget allows it
                low, high = INPUT_BOUNDS[name]
                assert low <= value <= high, (link, name, value)
        banner = MD.render("\n".join(f"- {plain_text(p)}" for p in problems))
        assert not any(r in banner for r in RENDERED), link
    assert rejected > LINKS * 0.9  # the sample is hostile: nearly every link has a value to refuse


@pytest.mark.parametrize("index", range(len(PAGE_FILES)), ids=[p.name for p in PAGE_FILES])
def test_hostile_links_never_break_a_page(tmp_store, caplog, index):
    caplog.set_level(logging.ERROR, logger="planner.pages")
    at = page(PAGE_FILES[index].name).run()
    links = hostile_links(LINKS)
    for link in (links * 2)[index * PER_PAGE : index * PER_PAGE + PER_PAGE] if PER_PAGE < LINKS else links:
        caplog.clear()
        at.query_params.clear()
        at.query_params.update(link)
        at.run()
        assert not at.exception, (link, at.exception)
        assert internal_errors(caplog.records) == [], link
        assert rendered_problems(at) == [], link
