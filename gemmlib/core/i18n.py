"""Messages that the app translates and the command line prints in English.

gemmlib never translates anything itself and never imports streamlit. It hands the pages
*messages*: an English template with named ``{placeholders}`` plus the values to put in them.
The page looks the template up in its catalogue (``ui._``) and fills in the values; the CLI and
the report fill in the English template as it is.

- ``N_("text")`` marks a constant for extraction into the catalogue and returns it unchanged.
- ``Msg(N_("{n} GEMMs, {share:.1%} of the FLOPs"), n=7, share=0.99)`` is a message with values
  (a verdict, a note); ``str(msg)`` is the English text, ``msg.render(gettext)`` a translation.
- ``InputError`` (core.errors) takes the same form: ``InputError(N_("M must be ≥ 1, got {m}"), m=m)``.
- Chart builders take a ``gettext`` keyword (default: English) and call ``gettext("title")``
  for every title, axis and legend text; a page passes ``gettext=ui._``.

The extraction (``scripts/i18n.py``, Babel's default keywords) picks up the literal inside
``N_(…)``, ``gettext(…)`` and ``ngettext(…)``; a template must be one literal (never an
f-string: Babel cannot extract it, and it would not match the catalogue at run time).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Translate = Callable[[str], str]


def N_(message: str) -> str:  # noqa: N802 - the gettext convention
    """Mark ``message`` for the catalogue; it is translated later, where it is shown."""
    return message


def english(message: str) -> str:
    """The identity ``gettext``: the English template as written (the CLI, the report)."""
    return message


def render(template: str, params: Mapping[str, Any], gettext: Translate = english) -> str:
    """``gettext(template)`` with its ``{placeholders}`` filled in.

    A template with no values is not passed through ``str.format`` (so literal braces, as in a
    matrix typed as ``[[1,2],[3,4]]``, need no escaping there). A translation whose
    placeholders do not match the template's (the catalogue tests forbid it) falls back to
    English rather than hiding the message.
    """
    text = gettext(template)
    if not params:
        return text
    try:
        return text.format(**params)
    except (KeyError, IndexError, ValueError):
        return template.format(**params)


class Msg:
    """An English template and its values; immutable, comparable, printable in English."""

    __slots__ = ("template", "params")

    def __init__(self, template: str, /, **params: Any) -> None:
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "params", dict(params))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Msg is immutable")

    def render(self, gettext: Translate = english) -> str:
        return render(self.template, self.params, gettext)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Msg({self.template!r}{args})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Msg) and (self.template, self.params) == (other.template, other.params)

    def __hash__(self) -> int:
        return hash((self.template, tuple(sorted(self.params.items(), key=lambda kv: kv[0]))))

    def __reduce__(self):
        return (_msg, (self.template, self.params))


def _msg(template: str, params: dict[str, Any]) -> Msg:
    return Msg(template, **params)
