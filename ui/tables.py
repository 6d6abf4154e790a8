"""Tables drawn by the one formatter's rules (``gemmlib.core.format``), and the GPU catalogue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from gemmlib.core.i18n import N_

from .i18n import _

FLAGS = (N_("yes"), N_("no"))  # core.format's flags (ui.table shows them translated)


def text_width(texts: Any, header: str = "") -> int:
    """Pixels a grid column needs to show the longest of ``texts`` (and its ``header``) whole: about 7.5 px per
    Latin character and 14 per Chinese one at the grid's 14-px font, plus 16 px of padding."""
    return 16 + max(round(sum(14 if ord(ch) > 0x2E80 else 7.5 for ch in str(t))) for t in [*texts, header, ""])


def table(data: Any, formats: Mapping[str, str] | None = None, *, where: Any = None,
          column_config: Mapping[str, Any] | None = None, hide_index: bool = True,
          widths: Mapping[str, int | str] | None = None, notes: str | None = None,
          named_by: tuple[str, ...] = (), **kwargs: Any) -> Any:
    """``st.dataframe`` drawn by the one formatter's rules (``gemmlib.core.format``).

    Numeric columns stay numeric (they sort) and get the format of their kind: ``"count"`` (every
    digit, separators; the default for whole numbers), ``"number"`` (4 significant digits; the
    default for other numbers), ``"percent"``, ``"error"`` (scientific). A count past 2**53 (more
    than a browser's number holds exactly) becomes its exact text. Flags become yes / no, a
    missing value shows "—", and a column named in ``column_config`` is left as it is (progress
    bars, links, checkboxes). ``widths``: a column's width (pixels or "small" / "medium" / "large")
    over whatever it had, formatted or configured. ``notes``: a column of row notes, written in full under the
    table (``note_lines``: each note once, numbered, after the rows it concerns, named by ``named_by``'s columns),
    where no sideways scroll hides it; the column keeps only the number ("note 1"): the last column of a wide
    table showed a few words of a note, and the same note again whole under it.
    """
    import pandas as pd

    from gemmlib.core import format as fmt

    df = data.copy() if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    noted = notes is not None and notes in df.columns and bool(named_by)
    if noted:
        numbers = {note: i for i, note in enumerate(_distinct_notes(df[notes]), 1)}
        source, df = df, df.assign(**{notes: [_("note {n}").format(n=numbers[str(v).strip()])
                                              if str(v).strip() in numbers else None for v in df[notes]]})
    formats, explicit = dict(formats or {}), dict(column_config or {})
    cfg: dict[str, Any] = {}
    labels = {c: v for c, v in explicit.items() if isinstance(v, str)}  # a bare label: formatted here
    explicit = {c: v for c, v in explicit.items() if not isinstance(v, str)}
    for col in df.columns:
        if col in explicit:
            continue
        s, kind = df[col], formats.get(col)
        if s.dtype == object:
            vals = [v for v in s if not fmt.missing(v)]
            if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                big = any(isinstance(v, int) and abs(v) >= 2**53 for v in vals)
                if not big:
                    s = df[col] = pd.to_numeric(s)
            if s.dtype == object:
                df[col] = s.map(fmt.count if kind == "count" else fmt.cell)
                if kind in ("count", "number"):
                    cfg[col] = st.column_config.TextColumn(alignment="right")
                continue
        if pd.api.types.is_bool_dtype(s):
            df[col] = s.map(lambda v: _(fmt.cell(v)))  # yes / no in the reader's language
            continue
        if not pd.api.types.is_numeric_dtype(s):
            continue
        kind = kind or ("count" if pd.api.types.is_integer_dtype(s) else "number")
        if kind == "count" and len(s.dropna()) and float(s.abs().max()) >= 2**53:
            df[col] = s.map(fmt.count)
            cfg[col] = st.column_config.TextColumn(alignment="right")
            continue
        width = None
        if kind == "count" and len(s.dropna()) and len(fmt.count(s.abs().max())) > 11:
            width = "medium"  # room for every digit (a narrow column would clip the leading ones)
        cfg[col] = st.column_config.NumberColumn(format=fmt.STREAMLIT_FORMATS.get(kind, kind), width=width)
    for col, label in labels.items():
        cfg[col] = {**cfg[col], "label": label} if isinstance(cfg.get(col), dict) else label
    cfg.update(explicit)
    for col, w in (widths or {}).items():
        c = cfg.get(col)
        cfg[col] = {**c, "width": w} if isinstance(c, dict) else {"label": c, "width": w} if c else {"width": w}
    shown = (where or st).dataframe(df, hide_index=hide_index, column_config=cfg, placeholder=fmt.DASH, **kwargs)
    if noted:
        lines = note_lines(source, notes, named_by, {c: labels.get(c, c) for c in named_by})
        if lines:
            (where or st).caption("  \n".join(lines))
    return shown


def _distinct_notes(column: Any) -> list[str]:
    """The column's notes, each once, in the order of the rows (a blank or missing cell is no note)."""
    from gemmlib.core import format as fmt

    return list(dict.fromkeys(str(v).strip() for v in column if not fmt.missing(v) and str(v).strip()))


def note_lines(df: Any, notes: str, named_by: tuple[str, ...], labels: Mapping[str, str] | None = None) -> list[str]:
    """Each distinct note of ``df``'s ``notes`` column once, as markdown, numbered as the table's column numbers
    them (in the order of the rows), after the rows it concerns: a row is named by its first ``named_by`` column's
    value, the other columns' values (under their ``labels``) listed after it, "note 1 — triton (tile 16, 32):
    interpreter: correctness only …". The notes are the page's texts, already translated."""
    from gemmlib.core import format as fmt

    from .text import md

    groups: dict[str, dict[str, list[str]]] = {note: {} for note in _distinct_notes(df[notes])}
    for _i, row in df.iterrows():
        note = row[notes]
        if fmt.missing(note) or not str(note).strip():
            continue
        values = [fmt.cell(row[c]) for c in named_by[1:] if not fmt.missing(row[c])]
        groups[str(note).strip()].setdefault(str(row[named_by[0]]), []).extend(values)
    what = " ".join((labels or {}).get(c, c) for c in named_by[1:])
    return [_("**note {n}** — {rows}: {note}").format(n=n, note=md(note), rows=_("; ").join(
        md(name) if not values else _("{name} ({what} {values})").format(
            name=md(name), what=md(what), values=md(_(", ").join(values))) for name, values in names.items()))
        for n, (note, names) in enumerate(groups.items(), 1)]


def view_table(t: Any, where: Any = None, **kwargs: Any) -> Any:
    """A presenter's table (``gemmlib.views.estimator.Table``) drawn by ``table``: its rows in its column
    order, its headers and formats, its ``printf`` columns as numbers with that format, its ``wide`` text
    columns wide, and its ``index`` column (if any) labelling the rows."""
    import pandas as pd

    df = pd.DataFrame(t.rows, columns=list(t.columns) if t.columns else None)
    if t.index:
        df = df.set_index(t.index)
    cfg = {**t.labels,
           **{c: st.column_config.NumberColumn(t.labels.get(c), format=f) for c, f in t.printf.items()},
           **{c: st.column_config.TextColumn(t.labels.get(c), width="large") for c in t.wide}}
    return table(df, t.formats, where=where, column_config=cfg, hide_index=not t.index, width="stretch", **kwargs)


def metrics(columns: Any, items: Any) -> None:
    """One ``st.metric`` per column for a presenter's metrics (``gemmlib.views.estimator.Metric``: its fields
    are st.metric's keywords); a ``None`` leaves its column empty."""
    from dataclasses import asdict

    for where, m in zip(columns, items, strict=False):
        if m is not None:
            where.metric(**asdict(m))


CATALOGUE_TEXT_CELLS = ("name", "scale-up link", "node network")  # catalogue texts marked N_ in core.hardware


def catalogue_table(where: Any = None) -> Any:
    """The GPU catalogue (``gemmlib.core.hardware.catalogue_rows``) as a table in the reader's language:
    headers and the catalogue's own texts translated, each row's source a link."""
    from gemmlib.core.hardware import catalogue_rows

    rows = [{**r, **{c: _(r[c]) for c in CATALOGUE_TEXT_CELLS if r.get(c)}, "kind": r["kind"].upper(),
             "source": r["source"] if r["source"].startswith("http") else _(r["source"])} for r in catalogue_rows()]
    return table(rows, where=where, column_config={
        "name": _("name"), "kind": _("kind"), "unknown peaks": _("unknown peaks"),
        "bandwidth TB/s": _("bandwidth TB/s"), "SMs": _("SMs"), "memory GiB": _("memory GiB"),
        "memory bytes": _("memory bytes"), "scale-up link": _("scale-up link"),
        "scale-up GB/s per direction": _("scale-up GB/s per direction"),
        "node network": _("node network"), "source": st.column_config.LinkColumn(_("source"))})


def _arrow_dataset(rows: Any) -> Any:
    """One chart dataset (a list of row dicts) as the Arrow IPC bytes ``st.vega_lite_chart`` sends, built by pyarrow
    from the rows; the rows as they are where pyarrow cannot type a column (Streamlit then converts them itself)."""
    import pyarrow as pa
    from streamlit.dataframe_util import convert_arrow_table_to_arrow_bytes

    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return rows
    try:
        return convert_arrow_table_to_arrow_bytes(pa.Table.from_pylist(rows))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return rows


def charts_as_arrow(view: Any, keep: tuple[str, ...] = ()) -> Any:
    """A presenter's view (a dataclass) with every Vega-Lite spec among its fields carrying its datasets as Arrow
    bytes. ``st.vega_lite_chart`` would otherwise build a pandas DataFrame of each dataset on every run to make the
    same bytes (a few ms a chart); made once here, inside the page's cached call, a rerun that hits the cache
    sends them as they are. ``keep``: fields left as rows (a presenter reads them again, e.g. the roofline's points
    for the op a click picks)."""
    from dataclasses import fields, is_dataclass, replace

    if not is_dataclass(view):
        return view
    changed = {}
    for f in fields(view):
        if f.name in keep:
            continue
        v = getattr(view, f.name)
        if isinstance(v, dict) and isinstance(v.get("datasets"), dict):
            changed[f.name] = {**v, "datasets": {k: _arrow_dataset(d) for k, d in v["datasets"].items()}}
    return replace(view, **changed) if changed else view
