"""Browser journey of a team's planner: two people sign in with a real OpenID Connect provider (oidc-provider-mock
on 127.0.0.1, started here) to one app server on a throwaway PostgreSQL database. Ada saves a private quote (for a
named customer) and one shared with the team; Grace, in her own browser, sees only the shared one, under Ada's
name, and cannot delete it or change who sees it; a tampered link or query never shows Ada's private quote; after
signing out, Grace's browser gets the sign-in screen and nothing else. Screenshots go to tests/artifacts/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import REPO, free_port, running_app
from tests.e2e.team_setup import WAIT_MS, identity_provider, secrets_file, settled, sign_in

ARTIFACTS = REPO / "tests" / "artifacts"
PRIVATE, SHARED = "Ada private quote", "Ada team quote"
SECRET_CUSTOMER = "Confidential Customer GmbH"


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"sign_in_journey_{name}.png"), full_page=True)


def _keyed(page, key: str):
    """The widget a page draws with ``key`` (Streamlit marks its container with the class ``st-key-KEY``)."""
    return page.locator(f".st-key-{key}")


def _fill(page, label: str, text: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(text)
    box.press("Tab")
    settled(page)


def _save_quote(page, name: str, who_sees: str) -> None:
    _fill(page, "Quote name", name)
    _keyed(page, "quote_save_visibility").get_by_text(who_sees, exact=True).click()
    settled(page)
    _keyed(page, "quote_save").get_by_role("button").click()
    expect(page.get_by_text(f"Saved the quote as “{name}”")).to_be_visible(timeout=WAIT_MS)
    settled(page)


def _quote_options(page) -> list[str]:
    _keyed(page, "saved_quote_pick").get_by_role("combobox").click()
    options = page.get_by_role("option")
    expect(options.first).to_be_visible(timeout=WAIT_MS)
    names = [text.strip() for text in options.all_inner_texts()]
    page.keyboard.press("Escape")
    return names


def _nothing_private(page) -> None:
    body = page.locator("body")
    expect(body).not_to_contain_text(PRIVATE)
    expect(body).not_to_contain_text(SECRET_CUSTOMER)


@pytest.fixture
def team_app(postgres_server):
    """(app URL, provider URL): one app server with sign-in, on its own PostgreSQL database."""
    with identity_provider() as provider:
        port = free_port()
        database = {"PLANNER_DATABASE_URL": postgres_server.new_database()}
        with running_app(port, secrets_file=secrets_file(provider, port), env=database) as url:
            yield url, provider


@pytest.mark.e2e
def test_two_people_see_their_own_and_the_teams_quotes_and_sign_out_ends_access(browser, team_app):
    url, provider = team_app
    ada_context = browser.new_context(viewport={"width": 1400, "height": 1000})
    ada = ada_context.new_page()
    ada.set_default_timeout(60_000)
    sign_in(ada, url, provider, "ada", path="/fleet")
    _shot(ada, "1_ada_signed_in")

    ada.goto(f"{url}/fleet")
    expect(ada.get_by_role("heading", name="Fleet & Quote", exact=True)).to_be_visible(timeout=WAIT_MS)
    ada.get_by_text("Cheapest option that meets every objective").first.wait_for(timeout=180_000)
    settled(ada)
    ada.get_by_text("Document details (optional)").click()
    _fill(ada, "Customer", SECRET_CUSTOMER)
    ada.get_by_text("Save this quote", exact=True).first.click()
    _save_quote(ada, PRIVATE, "Only me")
    _fill(ada, "Customer", "")
    _save_quote(ada, SHARED, "The team")
    _shot(ada, "2_ada_saved_two_quotes")

    grace_context = browser.new_context(viewport={"width": 1400, "height": 1000})
    grace = grace_context.new_page()
    grace.set_default_timeout(60_000)
    sign_in(grace, url, provider, "grace")
    grace.goto(f"{url}/saved")
    expect(grace.get_by_role("heading", name="Saved quotes")).to_be_visible(timeout=WAIT_MS)
    settled(grace)
    assert _quote_options(grace) == [f"{SHARED} (Ada Lovelace)"]
    _nothing_private(grace)
    for key in ("saved_quote_delete", "saved_quote_share"):  # only the owner deletes or changes who sees it
        expect(_keyed(grace, key).get_by_role("button")).to_be_disabled()
    _shot(grace, "3_grace_sees_the_shared_quote")

    # a tampered link or query: the private quote's name in every place a link could carry it
    for path in (
        f"/saved?saved_quote_pick={PRIVATE}",
        f"/saved?quote={PRIVATE}&owner=ada",
        f"/fleet?quote_save_name={PRIVATE}&quote_save_replace=true",
    ):
        grace.goto(f"{url}{path}")
        expect(grace.locator("[data-testid=stMain]")).to_be_visible(timeout=WAIT_MS)
        settled(grace)
        _nothing_private(grace)
        assert grace.locator("[data-testid=stException]").count() == 0

    # Ada still sees both, her own first-hand (no owner suffix)
    ada.goto(f"{url}/saved")
    expect(ada.get_by_role("heading", name="Saved quotes")).to_be_visible(timeout=WAIT_MS)
    settled(ada)
    assert sorted(_quote_options(ada)) == sorted([PRIVATE, SHARED])

    # signing out ends access: the sign-in screen and nothing else, whatever the link
    grace.goto(f"{url}/saved")
    settled(grace)
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
