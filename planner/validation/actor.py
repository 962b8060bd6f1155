"""Who is acting on the store: the signed-in person, or this machine when sign-in is not configured.

The identity provider's subject is the stable ``id`` (e-mail addresses and names can change). A store used
by one person without sign-in acts as :data:`LOCAL_ACTOR`.

>>> LOCAL_ACTOR.id, LOCAL_ACTOR.name
('local', 'this machine')
>>> Actor(id="auth0|42", name="Ada", email="ada@example.com").email
'ada@example.com'
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

#: Who may see a saved item: only its owner, or everyone using the same store.
Visibility = Literal["private", "team"]
#: Every visibility, in the order a choice offers them.
VISIBILITIES: tuple[Visibility, ...] = ("private", "team")


class Actor(BaseModel, frozen=True):
    """A person (or this machine) saving, reading, sharing and deleting saved work."""

    id: str
    name: str
    email: str = ""


#: The single user of a store without sign-in (the app's and the CLI's default).
LOCAL_ACTOR = Actor(id="local", name="this machine")
