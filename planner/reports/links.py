"""The scenario link a document carries: the public address people open, never the server's own loopback address.

The operator sets the public base URL once (environment variable ``PLANNER_PUBLIC_URL``, e.g.
``https://planner.example.com``); the link is that base, the page's path and the scenario's query. Without it the
browser's address is used when it is reachable by others, and a loopback address (127.0.0.1, localhost, ::1)
gives no link at all: a customer could not open it.

>>> scenario_link({"t": "a b", "k": "3"}, "http://127.0.0.1:8501/fleet", public_base="https://plan.example.com/")
'https://plan.example.com/fleet?t=a+b&k=3'
>>> scenario_link({"k": "3"}, "http://127.0.0.1:8501/fleet", public_base="")
''
>>> scenario_link({"k": "3"}, "https://planner.corp.example/sizing?x=1", public_base="")
'https://planner.corp.example/sizing?k=3'
"""

from __future__ import annotations

import ipaddress
import os
import re
from urllib.parse import urlencode, urlsplit

#: The environment variable that holds the public base URL of the app.
PUBLIC_URL_ENV = "PLANNER_PUBLIC_URL"
#: A link printed as a link: http(s), no spaces or angle brackets.
SAFE_LINK = re.compile(r"^https?://[^\s<>\"']+$")


def _loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback or ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def scenario_link(query: dict[str, str], browser_url: str | None, public_base: str | None = None) -> str:
    """The link to this page with ``query`` (see the module docstring); empty when no public address is known."""
    base = os.environ.get(PUBLIC_URL_ENV, "") if public_base is None else public_base
    page = urlsplit(browser_url or "")
    suffix = "?" + urlencode(query) if query else ""
    if base.strip():
        root = urlsplit(base.strip())
        if root.scheme not in ("http", "https") or not root.netloc:
            return ""
        return f"{root.scheme}://{root.netloc}{root.path.rstrip('/')}{page.path or '/'}{suffix}"
    if page.scheme not in ("http", "https") or _loopback(page.hostname or ""):
        return ""
    return f"{page.scheme}://{page.netloc}{page.path or '/'}{suffix}"


def safe_link(url: str) -> bool:
    """True when ``url`` can be printed as a link (Markdown autolink, HTML href)."""
    return bool(SAFE_LINK.match(url))
