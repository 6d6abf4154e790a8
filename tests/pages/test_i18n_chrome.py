"""The shared chrome in both languages: ui.guard's messages (an InputError from gemmlib shown in
the reader's language), the sidebar's page names, the language kept across reruns."""

import re
from pathlib import Path

import gemm_i18n
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def _zh(msgid: str) -> str:
    return gemm_i18n.read("zh")[msgid].string


def _bad_metric_page():
    import ui
    from gemmlib.charts.batching import batching_chart

    ui.page(ui._("Batching"), "📦")
    with ui.guard():
        batching_chart([], "speed")  # InputError(N_("unknown metric {metric!r}; …"), …)
    with ui.guard():
        raise RuntimeError("boom")


def test_guard_messages_in_english():
    at = AppTest.from_function(_bad_metric_page, default_timeout=30).run()
    errors = [e.value for e in at.error]
    assert errors[0] == ("**Check the input:** unknown metric 'speed'; "
                         "choose from tflops, gbps, intensity, per_request_s")
    assert re.fullmatch(r"Something went wrong in this section\. It has been logged on the server as error id "
                        r"\*\*[0-9a-f]{8}\*\*; please mention this id when you report it\.", errors[1]), errors[1]
    assert "boom" not in errors[1] and not at.expander  # the details are in the server log, not on the page


def test_guard_messages_in_chinese():
    at = AppTest.from_function(_bad_metric_page, default_timeout=30)
    at.query_params["lang"] = "zh"
    at.run()
    errors = [e.value for e in at.error]
    template = _zh("unknown metric {metric!r}; choose from {choices}")
    assert errors[0] == _zh("**Check the input:** {message}").format(message=template.format(
        metric="speed", choices="tflops, gbps, intensity, per_request_s"))
    assert "未知" in errors[0]  # the translation itself, not the English template
    eid = re.search(r"\*\*([0-9a-f]{8})\*\*", errors[1]).group(1)
    assert errors[1] == _zh("Something went wrong in {what}. It has been logged on the server as error id **{eid}**; "
                            "please mention this id when you report it.").format(what=_zh("this section"), eid=eid)
    assert "出错" in errors[1] and not at.expander


def _home_sidebar(at):
    return [c.proto.label for c in at.sidebar.children.values() if type(c).__name__ == "PageLink"]


def test_sidebar_page_names_follow_the_language():
    import ui

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert _home_sidebar(at) == [p.label for p in ui.PAGES]
    at.radio(key=ui.LANG_KEY).set_value("zh").run()
    assert _home_sidebar(at) == [_zh(p.label) for p in ui.PAGES]
    at.run()  # a rerun without touching the switch keeps the choice
    assert _home_sidebar(at) == [_zh(p.label) for p in ui.PAGES]
    assert at.radio(key=ui.LANG_KEY).value == "zh" and not at.exception


def _attention_radio():
    import streamlit as st

    import ui

    ui.page(ui._("Home"), "🏠")
    kind = ui.url(st.radio, ui._("attention"), ["eager", "fused"], format_func=ui._, key="zz_attention")
    st.markdown(f"KIND={kind}")


def _kind(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("KIND=")).removeprefix("KIND=")


def test_a_link_with_a_label_in_the_other_language_selects_that_option():
    """Streamlit writes an option widget's label to the URL, so a link copied from the Chinese page
    names the option in Chinese: it must select the same option on an English page, and back."""
    cases = [({"zz_attention": _zh("fused")}, "fused"),  # a Chinese label on an English page
             ({"zz_attention": "fused", "lang": "zh"}, "fused"),  # an English label on a Chinese page
             ({"zz_attention": _zh("fused"), "lang": "zh"}, "fused"),  # its own label
             ({"zz_attention": "nonsense"}, "eager")]  # unknown: the default, as before
    for query, want in cases:
        at = AppTest.from_function(_attention_radio, default_timeout=30)
        at.query_params.update(query)
        at.run()
        assert not at.exception and _kind(at) == want, query


def _lang_page():
    import streamlit as st

    import ui

    st.markdown(f"before the switch: {ui.lang()}")
    ui.language_switch()
    st.markdown(f"after the switch: {ui.lang()}")


def test_the_language_is_asked_once_per_run_and_each_run_asks_again():
    """ui.lang() keeps its answer for the rest of a run (the pages ask it ~120 times); a switch to the other
    language mid-run (the radio) and the next run both see the new one."""
    at = AppTest.from_function(_lang_page, default_timeout=30).run()
    assert [m.value for m in at.markdown] == ["before the switch: en", "after the switch: en"]
    at.radio(key="lang").set_value("zh").run()
    assert [m.value for m in at.markdown] == ["before the switch: zh", "after the switch: zh"]
    at.radio(key="lang").set_value("en").run()
    assert [m.value for m in at.markdown] == ["before the switch: en", "after the switch: en"]
