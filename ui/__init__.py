"""Shared Streamlit plumbing: sidebar controls bound to the URL, cached core calls, chart builders.

Nothing here knows about a particular page; pages import from here and from attention_core.
"""
