"""What the team journeys share: a real OpenID Connect provider on 127.0.0.1 (oidc-provider-mock, from the
package index), app servers signed in against it or sharing one PostgreSQL database, and the browser steps
(sign in, wait for a run to settle, save on the Saved page).

The app reads its sign-in setup from a secrets file the test writes into a temporary folder and names with
``--secrets.files`` (tests/e2e/conftest.py ``streamlit_command``); the repository's own ``.streamlit`` is
never written.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import expect

from tests.e2e.conftest import free_port, start_server, stop_server
from tests.e2e.steps import WAIT_MS, settled

#: The people the provider knows: subject → the claims it hands the app (name and e-mail).
PEOPLE = {
    "ada": {"name": "Ada Lovelace", "email": "ada@example.com"},
    "grace": {"name": "Grace Hopper", "email": "grace@example.com"},
}


#: The provider's own process: oidc-provider-mock's WSGI app on 127.0.0.1 at the port given, serving the people
#: given as JSON (a process of its own: its libraries' deprecation notices never meet this suite's warning filters).
_PROVIDER = """
import json, sys, warnings
warnings.simplefilter("ignore")
import oidc_provider_mock, werkzeug.serving
users = [oidc_provider_mock.User(sub=sub, claims=claims) for sub, claims in json.loads(sys.argv[2]).items()]
app = oidc_provider_mock.app(user_claims=users)
werkzeug.serving.make_server("127.0.0.1", int(sys.argv[1]), app, threaded=True).serve_forever()
"""


@contextmanager
def identity_provider() -> Iterator[str]:
    """oidc-provider-mock serving on 127.0.0.1 at a free port, ready on entry, stopped on exit; yields its URL."""
    port = free_port()
    proc = start_server([sys.executable, "-c", _PROVIDER, str(port), json.dumps(PEOPLE)])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/.well-known/openid-configuration", timeout=2) as response:
                    if json.load(response).get("issuer") == url:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the test identity provider did not start") from None
                time.sleep(0.3)
        yield url
    finally:
        stop_server(proc)


def secrets_file(provider_url: str, app_port: int) -> Path:
    """A secrets file (in a new temporary folder) that signs the app at ``app_port`` in with the provider."""
    folder = Path(tempfile.mkdtemp(prefix="planner-secrets-"))
    path = folder / "secrets.toml"
    path.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{app_port}/oauth2callback"\n'
        'cookie_secret = "a-test-cookie-secret-of-more-than-thirty-two-characters"\n'
        'client_id = "planner"\n'
        'client_secret = "any-secret-the-test-provider-accepts"\n'
        f'server_metadata_url = "{provider_url}/.well-known/openid-configuration"\n'
    )
    return path


def sign_in(page, app_url: str, provider_url: str, who: str, path: str = "/saved") -> None:
    """Open ``path`` signed out (the sign-in screen and nothing else), sign in as ``who`` at the provider, and
    come back signed in with the sidebar naming them."""
    page.goto(f"{app_url}{path}")
    button = page.get_by_role("button", name="Sign in", exact=True)
    expect(button).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("[data-testid=stSidebar]")).to_have_count(0)
    button.click()
    page.wait_for_url(f"{provider_url}/**", timeout=WAIT_MS)
    page.get_by_role("button", name=who, exact=True).click()  # the provider's one-click "predefined user"
    page.wait_for_url(f"{app_url}/**", timeout=WAIT_MS)
    expect(page.get_by_text(f"Signed in as {PEOPLE[who]['name']}")).to_be_visible(timeout=WAIT_MS)
    settled(page)
