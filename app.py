"""Speculative Decoding Capacity Planner: the Streamlit entry point (`make run`).

Pages live in pages/ and are registered here explicitly; each page gathers inputs into the core's
pydantic models, calls the core once and renders what it returns.
"""

import streamlit as st

from pages._common import run_page_guarded

st.set_page_config(page_title="Speculative Decoding Capacity Planner", page_icon="🧮", layout="wide")

PAGES = [
    st.Page("pages/sizing.py", title="Sizing", icon="📐", url_path="sizing", default=True),
    st.Page("pages/catalog.py", title="Catalog", icon="📚", url_path="catalog"),
    st.Page("pages/performance.py", title="Performance", icon="⚡", url_path="performance"),
    st.Page("pages/draft_selection.py", title="Draft Selection", icon="🧭", url_path="draft-selection"),
    st.Page("pages/fleet.py", title="Fleet & Quote", icon="💰", url_path="fleet"),
    st.Page("pages/validation.py", title="Validation", icon="🔬", url_path="validation"),
]

run_page_guarded(st.navigation(PAGES))
