"""Messages that the app translates and the command line prints in English.

gemmlib never translates anything itself and never imports streamlit. It hands the pages
*messages*: an English template with named ``{placeholders}`` plus the values to put in them.
The page looks the template up in its catalogue (``ui._``) and fills in the values; the CLI and
the report fill in the English template as it is.

- ``N_("text")`` marks a constant for extraction into the catalogue and returns it unchanged.
- ``Msg(N_("{n} GEMMs, {share:.1%} of the FLOPs"), n=7, share=0.99)`` is a message with values
  (a verdict, a note); ``str(msg)`` is the English text, ``msg.render(gettext)`` a translation.
- ``InputError`` (core.errors) takes the same form: ``InputError(N_("M must be ≥ 1, got {m}"), m=m)``.
- ``Text(N_("…"), …)`` is a message that *is* its English text (a ``str``), for texts kept inside
  gemmlib's data (an op's note, a rule's reason, a parser's note, a catalogue row's source): code,
  tests, JSON and the CLI see the English string as before; a page shows ``text.render(ui._)``.
  ``Text.joined(parts)`` joins texts with a translated separator ("; " → "；").
- A message that crosses a process boundary or a file (a benchmark worker's progress and results,
  the run queue's names) travels as its template and values (``gemmlib.core.codec``), never as
  English to be read back into a template.
- A value that is itself a Msg or a Text is rendered through the same gettext.
- Chart builders take a ``gettext`` keyword (default: English) and call ``gettext("title")``
  for every title, axis and legend text; a page passes ``gettext=ui._``.

The extraction (``scripts/i18n.py``, Babel's default keywords) picks up the literal inside
``N_(…)``, ``gettext(…)`` and ``ngettext(…)``; a template must be one literal (never an
f-string: Babel cannot extract it, and it would not match the catalogue at run time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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
    params = {k: v.render(gettext) if isinstance(v, (Msg, Text)) else v for k, v in params.items()}
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


class Text(str):
    """A message that is its own English text: a ``str`` which remembers its template and values.

    ``Text(N_("{n} per layer"), n=2) == "2 per layer"``, so anything that stores, compares, joins,
    searches or serializes it (JSON, the CLI, tests) sees the English string, while a page shows
    ``text.render(ui._)`` (``ui.tr(text)``) in the reader's language. Adding it to a str gives a
    plain (English) str: build longer texts with a template of their own or :meth:`joined`.
    """

    msg: Msg | _Joined

    def __new__(cls, template: str, /, **params: Any) -> Text:
        return cls._of(Msg(template, **params))

    @classmethod
    def _of(cls, msg: Msg | _Joined) -> Text:
        self = super().__new__(cls, msg.render())
        self.msg = msg
        return self

    @classmethod
    def joined(cls, parts: Iterable[str], sep: str = N_("; ")) -> Text:
        """The non-empty ``parts`` joined by ``sep`` (itself a message: "; " reads "；" in Chinese)."""
        kept = tuple(p for p in parts if p)
        return cls._of(_Joined(sep, kept))

    def render(self, gettext: Translate = english) -> str:
        return self.msg.render(gettext)

    def __reduce__(self):
        return (_text, (str(self), self.msg))


class _Joined:
    """Texts joined by a separator that is translated too (a Text's message)."""

    __slots__ = ("sep", "parts")

    def __init__(self, sep: str, parts: tuple[str, ...]) -> None:
        self.sep, self.parts = sep, parts

    def render(self, gettext: Translate = english) -> str:
        return gettext(self.sep).join(p.render(gettext) if isinstance(p, (Msg, Text)) else gettext(p)
                                      for p in self.parts)

    def __reduce__(self):
        return (_Joined, (self.sep, self.parts))


def _text(english_text: str, msg: Msg | _Joined) -> Text:
    self = str.__new__(Text, english_text)
    self.msg = msg
    return self
