"""Presenters: what a page shows, computed without Streamlit.

A page lays out (widgets, one call into its presenter, charts, words); its presenter turns the
page's inputs into view models that are ready to draw: texts in the reader's language (the page
passes its ``gettext``, as the chart builders take one), markdown with the visitor's own text
escaped (the page passes ``ui.md``), chart specs from ``gemmlib.charts`` and tables as rows with
their headers and number formats. Nothing here imports streamlit, so each view model is tested
as plain data.

- :mod:`gemmlib.views.estimator`: the LLM Estimator page.
- :mod:`gemmlib.views.accumulate`: the Accumulate page's loads table and texts.
"""
