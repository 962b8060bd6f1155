"""Who is using the app: the person signed in through the team's identity provider, or this machine.

Sign-in is Streamlit's built-in OpenID Connect (``st.login``, ``st.logout``, ``st.user``), configured by an
``[auth]`` section in the secrets file (``.streamlit/secrets.toml``; ``.streamlit/secrets.example.toml`` shows
every key). With that section every page asks for sign-in first and the sidebar shows who is signed in; without
it the app is single-user as before and everything saved belongs to :data:`LOCAL_ACTOR`. A section that is
there but incomplete is a message naming what is missing, and no page runs (never silently anonymous).

>>> sign_in_setup({}).configured
False
>>> sign_in_setup({"auth": {"redirect_uri": "http://localhost:8501/oauth2callback"}}).problem[:38]
'Sign-in is set up in the secrets file '
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from planner.reports import plain_text
from planner.validation import LOCAL_ACTOR, Actor

#: Keys of ``[auth]`` every setup needs (Streamlit's own names).
GENERAL_KEYS = ("redirect_uri", "cookie_secret")
#: Keys of each identity provider: in ``[auth]`` itself (the default provider) or in ``[auth.NAME]``.
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
DEFAULT_PROVIDER = "default"
#: The one sidebar line of a single-user app.
SINGLE_USER_LINE = "Single user: sign-in is not configured, so everything saved here is this machine's."


class SignInRequiredError(RuntimeError):
    """Asked who is acting while nobody is signed in (pages never run then: app.py shows the sign-in screen)."""


@dataclass(frozen=True)
class SignInSetup:
    """What the secrets file sets up: the identity providers to offer, or what keeps sign-in from working."""

    providers: tuple[str, ...] = ()
    problem: str = ""

    @property
    def configured(self) -> bool:
        """True when the secrets file asks for sign-in (even an incomplete setup: then nothing runs)."""
        return bool(self.providers or self.problem)


def _problem(text: str) -> SignInSetup:
    return SignInSetup(problem=f"Sign-in is set up in the secrets file but cannot work: {text}")


def _missing(keys: tuple[str, ...], where: Mapping[str, Any]) -> list[str]:
    return [key for key in keys if not str(where.get(key) or "").strip()]


def sign_in_setup(secrets: Mapping[str, Any], *, authlib_installed: bool = True) -> SignInSetup:
    """Read the ``[auth]`` section of ``secrets`` (the parsed secrets file) without raising.

    >>> auth = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "s" * 32,
    ...         "client_id": "planner", "client_secret": "x", "server_metadata_url": "https://id.example/.well-known/openid-configuration"}
    >>> sign_in_setup({"auth": auth}).providers
    ('default',)
    >>> sign_in_setup({"auth": {**auth, "client_secret": ""}}).problem.endswith("[auth] needs client_secret.")
    True
    """
    auth = secrets.get("auth")
    if auth is None:
        return SignInSetup()
    if not isinstance(auth, Mapping):
        return _problem("[auth] must be a section (a TOML table) with redirect_uri, cookie_secret and a provider.")
    missing = _missing(GENERAL_KEYS, auth)
    if missing:
        return _problem(f"[auth] needs {', '.join(missing)}.")
    if not str(auth["redirect_uri"]).rstrip().endswith("/oauth2callback"):
        return _problem("[auth] redirect_uri must be this app's address ending in /oauth2callback.")
    named = {name: value for name, value in auth.items() if isinstance(value, Mapping) and name != "client_kwargs"}
    providers: list[str] = []
    if any(key in auth for key in PROVIDER_KEYS) or not named:
        missing = _missing(PROVIDER_KEYS, auth)
        if missing:
            return _problem(f"[auth] needs {', '.join(missing)}.")
        providers.append(DEFAULT_PROVIDER)
    for name, section in named.items():
        if "_" in name:
            return _problem(f"[auth.{name}]: a provider's name may not contain an underscore.")
        missing = _missing(PROVIDER_KEYS, section)
        if missing:
            return _problem(f"[auth.{name}] needs {', '.join(missing)}.")
        providers.append(name)
    if not authlib_installed:
        return _problem("the Authlib package is missing (pip install -r requirements.txt).")
    return SignInSetup(providers=tuple(providers))


def _secrets_files_present() -> bool:
    return any(Path(path).exists() for path in st.get_option("secrets.files") or ())


def current_setup() -> SignInSetup:
    """The sign-in setup of this server's secrets file (``st.secrets``; a test's ``AppTest.secrets``)."""
    from streamlit.auth_util import is_authlib_installed  # noqa: PLC0415
    from streamlit.errors import StreamlitSecretNotFoundError  # noqa: PLC0415

    try:
        secrets = st.secrets.to_dict()
    except StreamlitSecretNotFoundError as exc:
        if _secrets_files_present():  # a file is there but cannot be read: never fall back to single-user
            return _problem(f"the secrets file could not be read ({exc}).")
        return SignInSetup()
    return sign_in_setup(secrets, authlib_installed=is_authlib_installed())


def signed_in() -> bool:
    """True when sign-in is configured and the browser's session belongs to a signed-in person."""
    setup = current_setup()
    return bool(setup.providers) and not setup.problem and bool(st.user.get("is_logged_in"))


def current_actor() -> Actor:
    """The signed-in person (the provider's subject is the id; name and e-mail from its claims), or
    :data:`LOCAL_ACTOR` when sign-in is not configured. Raises :class:`SignInRequiredError` when nobody is signed in."""
    setup = current_setup()
    if not setup.configured:
        return LOCAL_ACTOR
    if setup.problem or not st.user.get("is_logged_in") or not st.user.get("sub"):
        raise SignInRequiredError("Sign in first: this app is shared by a team and every save has an owner.")
    user = st.user
    subject = str(user.get("sub"))
    provider = str(user.get("provider") or DEFAULT_PROVIDER)
    email = str(user.get("email") or "")
    name = str(user.get("name") or user.get("preferred_username") or email or subject)
    # subjects are unique per provider: a second provider's people never share an id with the first's
    actor_id = subject if provider == DEFAULT_PROVIDER else f"{provider}|{subject}"
    return Actor(id=actor_id, name=name, email=email)


def _sign_in_screen(setup: SignInSetup) -> None:
    st.title("Speculative Decoding Capacity Planner")
    st.subheader("Sign in")
    st.write("This planner is shared by a team: sign in to see your saved work and the team's.")
    for provider in setup.providers:
        label = "Sign in" if provider == DEFAULT_PROVIDER else f"Sign in with {provider}"
        args = () if provider == DEFAULT_PROVIDER else (provider,)
        st.button(label, key=f"sign_in_{provider}", type="primary", on_click=st.login, args=args)


def sign_in_gate() -> bool:
    """app.py, before any page: True when pages may run (someone is signed in, or sign-in is not configured);
    otherwise the sign-in screen (or what is wrong with the setup) is drawn and the caller draws nothing else."""
    setup = current_setup()
    if setup.problem:
        st.error(plain_text(setup.problem))
        st.caption("The operator fixes the [auth] section of the secrets file (see .streamlit/secrets.example.toml).")
        return False
    if not setup.providers or st.user.get("is_logged_in"):
        return True
    _sign_in_screen(setup)
    return False


def identity_sidebar() -> None:
    """The sidebar's line about who is using the app: the signed-in person with "Sign out", or single user."""
    if not current_setup().configured:
        st.sidebar.caption(SINGLE_USER_LINE)
        return
    actor = current_actor()
    with st.sidebar.container(key="identity"):
        st.markdown(f"Signed in as **{plain_text(actor.name, max_chars=80)}**")
        if actor.email and actor.email != actor.name:
            st.caption(plain_text(actor.email, max_chars=120))
        st.button("Sign out", key="sign_out", on_click=st.logout)
