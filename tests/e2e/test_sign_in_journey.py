"""Browser journey of a team's planner: two people sign in with a real OpenID Connect provider (oidc-provider-mock
on 127.0.0.1, started here) to one app server on a throwaway PostgreSQL database. Ada saves a private scenario and a
private quote (their notes name a customer) and one of each shared with the team; Grace, in her own browser, sees
only the shared ones, under Ada's name, and cannot delete them or change who sees them; a tampered link or query
(the private scenario's own link included) never shows Ada's private work; after signing out, Grace's browser gets
the sign-in screen and nothing else. Screenshots go to tests/artifacts/."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from planner.validation import list_scenarios
from planner.validation.actor import Actor
from tests.e2e.conftest import REPO, free_port, running_app
from tests.e2e.steps import WAIT_MS, settled
from tests.e2e.team_setup import identity_provider, secrets_file, sign_in

ARTIFACTS = REPO / "tests" / "artifacts"
PRIVATE, SHARED = "Ada private scenario", "Ada team scenario"
PRIVATE_QUOTE, SHARED_QUOTE = "Ada private quote", "Ada team quote"
SECRET_CUSTOMER = "Confidential Customer GmbH"
#: The Fleet & Quote page plans every node type of the default scenario first: minutes on a busy machine.
QUOTE_WAIT_MS = 300_000


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"sign_in_journey_{name}.png"), full_page=True)


def _keyed(page, key: str):
    """The widget a page draws with ``key`` (Streamlit marks its container with the class ``st-key-KEY``)."""
    return page.locator(f".st-key-{key}")


def _save(page, name: str, notes: str, who_sees: str) -> None:
    box = page.get_by_label("Name", exact=True)
    box.fill(name)
    box.press("Enter")
    settled(page)
    page.get_by_label("Notes", exact=True).fill(notes)
    _keyed(page, "saved_visibility").get_by_text(who_sees, exact=True).click()
    settled(page)
    _keyed(page, "saved_save").get_by_role("button").click()
    expect(page.get_by_text(f"Saved “{name}”.")).to_be_visible(timeout=WAIT_MS)
    settled(page)


def _save_quote(page, url: str, name: str, notes: str, who_sees: str) -> None:
    """Save the Fleet & Quote page's default quote as ``name``, seen by ``who_sees``."""
    page.goto(f"{url}/fleet")
    expect(page.get_by_text("Cheapest option that meets every objective").first).to_be_visible(timeout=QUOTE_WAIT_MS)
    settled(page)
    name_box = page.get_by_label("Quote name", exact=True)
    if not name_box.is_visible():
        page.locator("[data-testid=stExpander]").filter(has_text="Save this quote").locator("summary").click()
    name_box.fill(name)
    name_box.press("Enter")
    settled(page)
    page.get_by_label("Notes", exact=True).fill(notes)
    _keyed(page, "quote_save_visibility").get_by_text(who_sees, exact=True).click()
    settled(page)
    _keyed(page, "quote_save").get_by_role("button").click()
    expect(page.get_by_text(f"Saved the quote as “{name}”")).to_be_visible(timeout=WAIT_MS)
    settled(page)


def _options(page, key: str) -> list[str]:
    """Every option of the selectbox drawn with ``key`` (opened and closed again). A rerun that redraws the box
    closes an open list, so it is opened again until it shows its options (three tries)."""
    options = page.get_by_role("option")
    names: list[str] = []
    for _ in range(3):
        settled(page)
        box = _keyed(page, key).get_by_role("combobox")
        box.scroll_into_view_if_needed()
        box.click()
        try:
            expect(options.first).to_be_visible(timeout=WAIT_MS // 4)
            names = [text.strip() for text in options.all_inner_texts() if text.strip()]
        except AssertionError:
            names = []
        page.keyboard.press("Escape")
        if names:
            break
    settled(page)
    return names


def _open_saved(page, url: str, query: str = "") -> None:
    page.goto(f"{url}/saved{query}")
    expect(page.get_by_role("heading", name="Saved scenarios")).to_be_visible(timeout=WAIT_MS)
    settled(page)


def _nothing_private(page) -> None:
    body = page.locator("body")
    expect(body).not_to_contain_text(PRIVATE)
    expect(body).not_to_contain_text(PRIVATE_QUOTE)
    expect(body).not_to_contain_text(SECRET_CUSTOMER)


@pytest.fixture
def team_app(postgres_server):
    """(app URL, provider URL): one app server with sign-in, on its own PostgreSQL database."""
    with identity_provider() as provider:
        port = free_port()
        database = {"PLANNER_DATABASE_URL": postgres_server.new_database()}
        with running_app(port, secrets_file=secrets_file(provider, port), env=database) as url:
            yield url, provider, database["PLANNER_DATABASE_URL"]


@pytest.mark.e2e
def test_two_people_see_their_own_and_the_teams_scenarios_and_quotes_and_sign_out_ends_access(browser, team_app):
    url, provider, database = team_app
    ada_context = browser.new_context(viewport={"width": 1400, "height": 1000})
    ada = ada_context.new_page()
    ada.set_default_timeout(60_000)
    sign_in(ada, url, provider, "ada", path="/fleet")  # a deep link: the sign-in screen first
    _shot(ada, "1_ada_signed_in")

    _open_saved(ada, url)
    _save(ada, SHARED, "for the whole team", "The team")
    _save(ada, PRIVATE, f"offer for {SECRET_CUSTOMER}", "Only me")
    assert sorted(_options(ada, "saved_pick")) == sorted([PRIVATE, SHARED])
    _save_quote(ada, url, SHARED_QUOTE, "the team's offer", "The team")
    _save_quote(ada, url, PRIVATE_QUOTE, f"offer for {SECRET_CUSTOMER}", "Only me")
    _open_saved(ada, url)
    assert sorted(_options(ada, "saved_quote_pick")) == sorted([PRIVATE_QUOTE, SHARED_QUOTE])
    _shot(ada, "2_ada_saved_two_of_each")

    grace_context = browser.new_context(viewport={"width": 1400, "height": 1000})
    grace = grace_context.new_page()
    grace.set_default_timeout(60_000)
    sign_in(grace, url, provider, "grace")
    _open_saved(grace, url)
    assert _options(grace, "saved_pick") == [f"{SHARED} (Ada Lovelace)"]
    assert _options(grace, "saved_quote_pick") == [f"{SHARED_QUOTE} (Ada Lovelace)"]
    _nothing_private(grace)
    main = grace.locator("[data-testid=stMain]")
    for label in ("Delete…", "Make private"):  # only the owner deletes either or changes who sees it
        for button in main.get_by_role("button", name=label, exact=True).all():
            button.scroll_into_view_if_needed()
            expect(button).to_be_disabled(timeout=WAIT_MS)
    expect(_keyed(grace, "saved_quote_delete").get_by_role("button")).to_be_disabled(timeout=WAIT_MS)
    expect(grace.get_by_text("Only its owner, Ada Lovelace, can change or delete it")).to_be_visible(timeout=WAIT_MS)
    _shot(grace, "3_grace_sees_the_shared_one")

    # a tampered link or query: the private scenario's name where a link could carry it, and its own link
    ada_private = next(
        s
        for s in list_scenarios(path=database, actor=Actor(id="ada", name="Ada Lovelace")).scenarios
        if s.name == PRIVATE
    )
    for query in (
        f"?saved_pick={PRIVATE}",
        f"?scenario={PRIVATE}&owner=ada",
        "?" + urlencode(ada_private.scenario.to_query()),
    ):
        _open_saved(grace, url, query)
        _nothing_private(grace)
        assert _options(grace, "saved_pick") == [f"{SHARED} (Ada Lovelace)"]
        assert _options(grace, "saved_quote_pick") == [f"{SHARED_QUOTE} (Ada Lovelace)"]
        assert grace.locator("[data-testid=stException]").count() == 0

    # signing out ends access: the sign-in screen and nothing else, whatever the link
    _open_saved(grace, url)
    _keyed(grace, "sign_out").get_by_role("button").click()
    grace.wait_for_url(f"{provider}/**", timeout=WAIT_MS)  # the provider's end of the session
    assert not [c for c in grace_context.cookies() if c["name"].startswith("_streamlit_user")]
    for path in ("/saved", "/fleet", "/"):
        grace.goto(f"{url}{path}")
        expect(grace.get_by_role("button", name="Sign in", exact=True)).to_be_visible(timeout=WAIT_MS)
        expect(grace.locator("[data-testid=stSidebar]")).to_have_count(0)
        expect(grace.locator("body")).not_to_contain_text(SHARED)
    _shot(grace, "4_grace_signed_out")
    ada_context.close()
    grace_context.close()
