"""Plotly figure builders: pure functions of core results, shared by the pages and the reports."""
