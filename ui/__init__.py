"""Streamlit helpers shared by app.py and every page: ``import ui`` / ``from ui import _``.

This package is the only place besides the pages that imports streamlit; gemmlib never does. It
re-exports the names the pages use; each job lives in a module of its own:

- ``ui.text``: ``md()``, the markdown escaping every visitor-supplied text goes through, and the log.
- ``ui.i18n``: the languages, gettext (``_``, ``ngettext``, ``pgettext``, ``tr``), option labels and
  the language switch ("translating the app" there has the pattern every page follows).
- ``ui.nav``: the page list (``PAGES``), ``page()``, ``intro()``, ``nav()`` and ``guard()``.
- ``ui.url``: widgets and tabs bound to ``?key=value`` (``url``, ``tabs``, ``set_url_widget``, and
  ``Fields``: widgets drawn from a presenter's catalogue of labels, helps and ranges).
- ``ui.tables``: ``table()`` drawn by the one formatter's rules, ``view_table()`` and ``metrics()``
  for a presenter's tables and figures (``gemmlib.views``), ``catalogue_table()``, ``charts_as_arrow()``
  (a view's chart datasets as the Arrow bytes Streamlit sends).
- ``ui.stepper``: the browser-side step-through (its JS and CSS in ``ui_assets/``).
- ``ui.runbox``: the server's caps, ``run_benchmark`` (a worker process, the machine's FIFO queue, a
  Stop button), the time a run will take, the results a session keeps and shares, and
  ``bench_section``: the one run box (button, estimate, run, kept result) every benchmark page uses.

Each page starts with ``ui.page(...)`` and wraps its work in ``with ui.guard():`` so that bad input
shows a clear message and anything unexpected shows a short message with an error id — never a
traceback or a server path on the page.
"""

from .i18n import (
    LANG_KEY,
    LANGS,
    _,
    gettext_for,
    lang,
    language_switch,
    ngettext,
    option_labels,
    pgettext,
    po_path,
    tr,
    translations,
)
from .nav import PAGES, Page, guard, intro, nav, page, presenting
from .runbox import (
    CAP_PARTS,
    MAX_SESSION_RESULTS,
    RATE_SOURCES,
    RunStatus,
    bench_limits,
    bench_section,
    caps_caption,
    cuda_available,
    downloads,
    gpu_count,
    keep_results,
    noise_note,
    plan_for,
    rows_done,
    run_benchmark,
    run_estimate,
    session_results,
    share_results,
    shared_results,
    stopped_notice,
)
from .stepper import STEPPER_EVERY_STEP_SPEED, STEPPER_LABELS, STEPPER_MAX_SPEED, stepper
from .tables import FLAGS, catalogue_table, charts_as_arrow, metrics, table, view_table
from .text import md
from .url import Fields, highlight, set_url_widget, setter, tabs, url

__all__ = [
    "CAP_PARTS", "FLAGS", "Fields", "LANGS", "LANG_KEY", "MAX_SESSION_RESULTS", "PAGES", "RATE_SOURCES",
    "STEPPER_EVERY_STEP_SPEED", "STEPPER_LABELS", "STEPPER_MAX_SPEED", "Page", "RunStatus", "_", "bench_limits",
    "bench_section", "caps_caption", "catalogue_table", "charts_as_arrow", "cuda_available", "downloads", "gettext_for", "gpu_count",
    "guard", "highlight", "intro", "keep_results",
    "lang", "language_switch", "md", "metrics", "nav", "ngettext", "noise_note", "option_labels", "page", "pgettext",
    "plan_for", "presenting",
    "po_path", "rows_done", "run_benchmark", "run_estimate", "session_results", "set_url_widget", "setter",
    "share_results",
    "shared_results", "stepper", "stopped_notice", "table", "tabs", "tr", "translations", "url",
    "view_table",
]
