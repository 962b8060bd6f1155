"""Speculative Decoding Capacity Planner: the Streamlit entry point (`make run`).

Pages live in ui/ and are registered here explicitly; each page reads the shared scenario (drawn in
the sidebar here and kept in the page's link, so a reload or a shared link shows the same numbers),
calls the core once and renders what it returns. A page opened by a deep link on a
fresh server hands the request back to this file (ui/_frame.py), so every page runs in this frame.
"""

import streamlit as st

from ui._background import server_activity
from ui._common import run_page_guarded
from ui._flash import begin_run, end_run
from ui._frame import run_in_app_frame
from ui._identity import identity_sidebar, sign_in_gate
from ui._rerun import begin_run as note_who_started_the_run
from ui._scenario import scenario_sidebar
from ui._timing import timed
from ui._warm_up import warm_up_after_first_render

st.set_page_config(page_title="Speculative Decoding Capacity Planner", page_icon="🧮", layout="wide")
note_who_started_the_run()  # a run the server started tells the browser the seeded widgets' values (ui/_rerun.py)
# Headline figures stay whole on narrow screens (1024 px with the sidebar open): a metric's value shrinks with
# the window and wraps rather than ending in an ellipsis.
st.html(
    "<style>[data-testid='stMetricValue']{font-size:clamp(1.1rem,2.1vw,2.25rem)}"
    "[data-testid='stMetricValue'] *{white-space:normal!important;overflow:visible!important;"
    "text-overflow:clip!important;overflow-wrap:anywhere}</style>"
)

#: The first page, served at the app's root (Streamlit gives the default page no path of its own).
SIZING = st.Page("ui/sizing.py", title="Sizing", icon="📐", url_path="home", default=True)


def _open_sizing() -> None:
    """``/sizing`` (a link written by hand, or an old one): the Sizing page at the root, with the link's scenario."""
    st.switch_page(SIZING, query_params=st.query_params.to_dict())


PAGES = [
    SIZING,
    st.Page("ui/catalog.py", title="Catalog", icon="📚", url_path="catalog"),
    st.Page("ui/performance.py", title="Performance", icon="⚡", url_path="performance"),
    st.Page("ui/draft_selection.py", title="Draft Selection", icon="🧭", url_path="draft-selection"),
    st.Page("ui/fleet.py", title="Fleet & Quote", icon="💰", url_path="fleet"),
    st.Page("ui/explore.py", title="Explore", icon="🗺️", url_path="explore"),
    st.Page("ui/validation.py", title="Validation", icon="🔬", url_path="validation"),
    st.Page("ui/saved.py", title="Saved", icon="💾", url_path="saved"),
    st.Page(_open_sizing, title="Sizing", url_path="sizing", visibility="hidden"),
]
# With sign-in configured (the secrets file's [auth]), nobody signed in sees the sign-in screen and nothing else:
# no page, no sidebar, whatever the link names (ui/_identity.py).
may_run = sign_in_gate()
begin_run()  # one-shot messages stay until a run that drew them finishes (ui/_flash.py)
with timed("run") as this_run, server_activity().run():  # render time (`make bench-app`); a run in progress
    page = st.navigation(PAGES, position="sidebar" if may_run else "hidden")
    this_run.name = page.url_path
    if may_run:
        # Every page draws the scenario and keeps it in its link: sidebar widgets that stay on screen keep their
        # state (a widget left out of one run loses it, and a fast switch back could show its first option).
        scenario_sidebar()
        identity_sidebar()
        run_in_app_frame(lambda: run_page_guarded(page))
end_run()
warm_up_after_first_render()  # once per server, after its first page is drawn: the Fleet default in the background
