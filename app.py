"""Speculative Decoding Capacity Planner: the Streamlit entry point (`make run`).

Pages live in pages/ and are registered here explicitly; each page reads the shared scenario (drawn in
the sidebar here and kept in the page's link, so a reload or a shared link shows the same numbers),
calls the core once and renders what it returns. A page opened by a deep link on a
fresh server hands the request back to this file (pages/_frame.py), so every page runs in this frame.
"""

import streamlit as st

from pages._common import run_page_guarded
from pages._frame import run_in_app_frame
from pages._scenario import scenario_sidebar
from pages._timing import timed
from pages._warm_up import warm_up_after_first_render

st.set_page_config(page_title="Speculative Decoding Capacity Planner", page_icon="🧮", layout="wide")

PAGES = [
    st.Page("pages/sizing.py", title="Sizing", icon="📐", url_path="sizing", default=True),
    st.Page("pages/catalog.py", title="Catalog", icon="📚", url_path="catalog"),
    st.Page("pages/performance.py", title="Performance", icon="⚡", url_path="performance"),
    st.Page("pages/draft_selection.py", title="Draft Selection", icon="🧭", url_path="draft-selection"),
    st.Page("pages/fleet.py", title="Fleet & Quote", icon="💰", url_path="fleet"),
    st.Page("pages/validation.py", title="Validation", icon="🔬", url_path="validation"),
    st.Page("pages/saved.py", title="Saved", icon="💾", url_path="saved"),
]
with timed("run") as this_run:  # server-side render time, logged only for `make bench-app`
    page = st.navigation(PAGES)
    this_run.name = page.url_path
    # Every page draws the scenario and keeps it in its link: sidebar widgets that stay on screen keep their state
    # (a widget left out of one run loses it, and a fast switch back could show its first option).
    scenario_sidebar()
    run_in_app_frame(lambda: run_page_guarded(page))
warm_up_after_first_render()  # once per server, after its first page is drawn: the Fleet default in the background
