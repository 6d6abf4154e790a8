"""The LLM Estimator's Serving tab: where its inputs sit (the page stays a list of tabs).

Each box is a flag of ``python -m gemmlib estimate --serve`` (:class:`gemmlib.views.estimator.ServingInputs`
names them), with its default, range and help in ``estimator.FIELDS``; a box greys out where the CLI would refuse
the flag (:func:`gemmlib.views.estimator.greyed_serving`). No streamlit here: the page hands in its container, its
URL-bound widget drawer (``ui.Fields``) and its gettext.
"""

from __future__ import annotations

from typing import Any

from gemmlib.core.i18n import N_, Translate
from gemmlib.views.estimator import ARRIVAL_NAMES, ENGINE_NAMES, ServingInputs, greyed_serving

ARRIVAL_LABELS = {"poisson": N_("Poisson"), "fixed": N_("fixed gaps")}  # --arrival's choices, as the box shows them


def draw(where: Any, fields: Any, gettext: Translate) -> ServingInputs:
    """Draw the Serving tab's inputs in ``where`` (the tab), three rows: the switch and the targets; one point (a
    concurrency, a request rate or every request at once, and the arrivals) and the requests per point; the engine
    and its limits. Each box greys out where it counts for nothing. Returns the inputs as drawn."""
    c = where.columns([2, 1, 1], vertical_alignment="bottom")  # the switch's words in a third were cut ("serving cur…")
    serve = fields.flag(c[0], "le_serve")
    off = greyed_serving(ServingInputs(serve=serve))
    tpot, ttft = fields.num(c[1], "le_tpot", step=5.0, disabled=off["le_tpot"]), fields.num(
        c[2], "le_ttft", step=50.0, disabled=off["le_ttft"])
    c = where.columns(4, vertical_alignment="bottom")
    conc = fields.num(c[0], "le_conc", disabled=off["le_conc"])
    offline = fields.flag(c[1], "le_offline", disabled=off["le_offline"])  # above the rate box it greys
    rate = fields.num(c[1], "le_rate", step=1.0,
                      disabled=greyed_serving(ServingInputs(serve=serve, offline=offline))["le_rate"])
    arrival = fields.pick(c[2], "le_arrival", ARRIVAL_NAMES, format_func=lambda v: gettext(ARRIVAL_LABELS[v]),
                          disabled=greyed_serving(ServingInputs(serve=serve, rate=rate, offline=offline))["le_arrival"])
    nreq = fields.num(c[3], "le_nreq", disabled=off["le_nreq"])
    c = where.columns(4, vertical_alignment="bottom")
    engine = fields.pick(c[0], "le_engine", ENGINE_NAMES, disabled=off["le_engine"])
    kvb, maxseqs, maxtok = (fields.num(c[i], key, disabled=off[key])
                            for i, key in enumerate(("le_kvb", "le_maxseqs", "le_maxtok"), 1))
    return ServingInputs(serve=serve, tpot=tpot, engine=engine, rate=rate, offline=offline, kvb=kvb, ttft=ttft,
                         conc=conc, arrival=arrival, nreq=nreq, maxseqs=maxseqs, maxtok=maxtok)
