"""Who the CLI acts as in the store: this machine, or the person ``PLANNER_USER`` names.

Without ``PLANNER_USER`` the CLI is :data:`~planner.validation.actor.LOCAL_ACTOR`, the same single user as the
app without sign-in. On a team's database, ``PLANNER_USER`` is the person's id as the identity provider gives
it (the ``owner_id`` that ``saved list --json`` prints) and ``PLANNER_USER_NAME`` the name their saves show
(default: the id). Whoever can reach the database can act as anyone, so the CLI trusts these variables the way
the database trusts its credentials.

>>> cli_actor({}).id
'local'
>>> cli_actor({"PLANNER_USER": "oidc|ada", "PLANNER_USER_NAME": "Ada"}).name
'Ada'
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from planner.errors import InputError
from planner.validation.actor import LOCAL_ACTOR, Actor

USER_ENV = "PLANNER_USER"
USER_NAME_ENV = "PLANNER_USER_NAME"
MAX_ID_CHARS = 255


def _checked(env: str, text: str) -> str:
    text = text.strip()
    if not text or len(text) > MAX_ID_CHARS or any(not c.isprintable() for c in text):
        raise InputError(env, text, f"printable text of 1 to {MAX_ID_CHARS} characters (or unset: this machine)")
    return text


def cli_actor(environ: Mapping[str, str] | None = None) -> Actor:
    """The actor the environment names (``PLANNER_USER``), else this machine."""
    environ = os.environ if environ is None else environ
    user = environ.get(USER_ENV)
    if user is None or not user.strip():
        return LOCAL_ACTOR
    user = _checked(USER_ENV, user)
    name = _checked(USER_NAME_ENV, environ.get(USER_NAME_ENV) or user)
    return Actor(id=user, name=name)
