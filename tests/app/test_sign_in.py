"""Sign-in (ui/_identity.py, the gate in app.py): single-user without an [auth] section, a sign-in screen and
nothing else until someone signs in, the signed-in person in the sidebar with "Sign out", and a clear message
(never a traceback, never a silent fall-back to anonymous) for an incomplete setup."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from planner.reports.escaping import ZERO_WIDTH_SPACE
from planner.validation.actor import LOCAL_ACTOR, Actor
from tests.app.conftest import REPO
from ui._identity import SINGLE_USER_LINE, sign_in_setup

AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "a-long-random-string-for-signing-cookies",
    "client_id": "planner",
    "client_secret": "not-a-real-secret",
    "server_metadata_url": "https://id.example.com/.well-known/openid-configuration",
}
ADA = {"is_logged_in": True, "sub": "u-ada-1", "name": "Ada Lovelace", "email": "ada@example.com"}


def _app(auth: dict | None = None, user: dict | None = None, page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    if auth is not None:
        at.secrets["auth"] = auth
    if user is not None:
        at.user = user
    if page:
        at.run()
        at.switch_page(f"ui/{page}")
    return at


def _sidebar_text(at: AppTest) -> str:
    text = " ".join(str(e.value) for e in [*at.sidebar.markdown, *at.sidebar.caption])
    return text.replace(ZERO_WIDTH_SPACE, "")


def test_without_auth_the_app_is_single_user_and_says_so_in_the_sidebar():
    at = _app().run()
    assert not at.exception
    assert at.title
    assert SINGLE_USER_LINE in [c.value for c in at.sidebar.caption]
    assert not [b for b in at.button if b.label.startswith("Sign")]
    assert at.sidebar.selectbox(key="scenario_target").value == "meta-llama/Llama-3.1-70B"


@pytest.mark.parametrize("page", [None, "saved.py", "fleet.py"])
def test_configured_and_signed_out_shows_only_the_sign_in_screen(page):
    at = _app(AUTH, {"is_logged_in": False}, page).run()
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert [t.value for t in at.title] == ["Speculative Decoding Capacity Planner"]
    # nothing of any page: no scenario sidebar, no tables, no saved names
    assert not at.sidebar.selectbox and not at.sidebar.caption and not at.sidebar.button
    assert not at.dataframe and not at.selectbox and not at.metric


def test_named_providers_get_a_button_each():
    auth = {k: AUTH[k] for k in ("redirect_uri", "cookie_secret")}
    auth["google"] = {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")}
    auth["okta"] = dict(auth["google"])
    at = _app(auth, {"is_logged_in": False}).run()
    assert [b.label for b in at.button] == ["Sign in with google", "Sign in with okta"]


def test_signed_in_person_is_named_in_the_sidebar_and_signs_out():
    at = _app(AUTH, dict(ADA)).run()
    assert not at.exception
    assert "Signed in as **Ada Lovelace**" in _sidebar_text(at)
    assert "ada@example.com" in _sidebar_text(at)
    assert SINGLE_USER_LINE not in _sidebar_text(at)
    assert at.sidebar.selectbox(key="scenario_target").value == "meta-llama/Llama-3.1-70B"
    at.sidebar.button(key="sign_out").click().run()
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.sidebar.selectbox


@pytest.mark.parametrize(
    ("auth", "named"),
    [
        ({"redirect_uri": AUTH["redirect_uri"]}, "cookie_secret"),
        ({**AUTH, "client_secret": ""}, "client_secret"),
        ({**AUTH, "redirect_uri": "http://localhost:8501/"}, "/oauth2callback"),
        ("not a table", "section"),
    ],
)
def test_an_incomplete_setup_is_a_message_naming_the_key_and_no_page_runs(auth, named):
    at = _app(auth, dict(ADA)).run()
    assert not at.exception
    assert len(at.error) == 1 and named in at.error[0].value
    assert not at.sidebar.selectbox and not at.button


def test_current_actor_is_the_provider_subject_or_this_machine():
    script = """
import streamlit as st
from ui._identity import SignInRequiredError, current_actor, signed_in
try:
    actor = current_actor()
    st.write(f"{actor.id}|{actor.name}|{actor.email}|{signed_in()}")
except SignInRequiredError as exc:
    st.write(f"refused: {exc}")
"""
    at = AppTest.from_string(script, default_timeout=60).run()
    assert at.markdown[0].value == f"{LOCAL_ACTOR.id}|{LOCAL_ACTOR.name}||False"

    at = AppTest.from_string(script, default_timeout=60)
    at.secrets["auth"] = AUTH
    at.user = dict(ADA)
    at.run()
    assert at.markdown[0].value == "u-ada-1|Ada Lovelace|ada@example.com|True"

    at = AppTest.from_string(script, default_timeout=60)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": False}
    at.run()
    assert at.markdown[0].value.startswith("refused: Sign in first")


def test_sign_in_setup_reads_default_and_named_providers():
    assert not sign_in_setup({}).configured
    assert sign_in_setup({"auth": AUTH}).providers == ("default",)
    general = {k: AUTH[k] for k in ("redirect_uri", "cookie_secret")}
    provider = {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")}
    assert sign_in_setup({"auth": {**general, "corp": provider}}).providers == ("corp",)
    assert "underscore" in sign_in_setup({"auth": {**general, "my_idp": provider}}).problem
    assert "[auth.corp] needs client_id" in sign_in_setup({"auth": {**general, "corp": {}}}).problem
    missing_authlib = sign_in_setup({"auth": AUTH}, authlib_installed=False)
    assert missing_authlib.configured and "Authlib" in missing_authlib.problem
    assert Actor(id="x", name="y") != LOCAL_ACTOR
