"""Streamlit helpers shared by app.py and every page.

This module is the only place besides the pages that imports streamlit; gemmlib
never does. Each page starts with ``ui.page(...)`` and wraps its work in
``with ui.guard():`` so that bad input shows a clear message and anything
unexpected shows a friendly error with the details folded away, never a bare
traceback.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from gemmlib.errors import InputError


def page(title: str, icon: str, intro: str | None = None) -> None:
    """Page config, title and one-paragraph introduction."""
    try:
        st.set_page_config(page_title=f"{title} · GEMM", page_icon=icon, layout="wide")
    except st.errors.StreamlitAPIException:  # already set in this run
        pass
    st.title(f"{icon} {title}")
    if intro:
        st.markdown(intro)


@contextmanager
def guard(what: str = "this section") -> Iterator[None]:
    """Show InputError as a plain message and any other error as a folded traceback."""
    try:
        yield
    except InputError as e:
        st.error(f"**Check the input:** {e}")
    except Exception as e:  # noqa: BLE001 - st.stop/st.rerun are BaseExceptions and pass
        st.error(f"Something went wrong in {what}: {type(e).__name__}: {e}")
        with st.expander("Details (for a bug report)"):
            st.code(traceback.format_exc())


def bound(key: str, default: Any, cast: Callable[[str], Any] | None = None,
          valid: Callable[[Any], bool] | None = None) -> Any:
    """Seed ``st.session_state[key]`` from the URL (``?key=value``) once, else from ``default``.

    Use with a widget created with ``key=key`` and no ``value=``; call
    ``ui.push_query(keys)`` after the widgets so that the URL follows them.
    A malformed or out-of-range query value falls back to the default.
    """
    if key not in st.session_state:
        value = default
        raw = st.query_params.get(key)
        if raw is not None:
            conv = cast or type(default)
            try:
                if conv is bool:
                    candidate = raw.lower() in {"1", "true", "yes", "on"}
                else:
                    candidate = conv(raw)
                if valid is None or valid(candidate):
                    value = candidate
            except (TypeError, ValueError):
                pass
        st.session_state[key] = value
    return st.session_state[key]


def push_query(keys: list[str]) -> None:
    """Write the current values of ``keys`` into the URL, so the view can be shared."""
    for k in keys:
        if k in st.session_state:
            v = st.session_state[k]
            s = str(v).lower() if isinstance(v, bool) else str(v)
            if st.query_params.get(k) != s:
                st.query_params[k] = s


def fmt_si(x: float, unit: str = "", digits: int = 3) -> str:
    """1.23e12 -> '1.23 T' + unit."""
    if x is None:
        return "—"
    ax = abs(x)
    for scale, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if ax >= scale:
            return f"{x / scale:.{digits}g} {prefix}{unit}"
    return f"{x:.{digits}g} {unit}".rstrip()
