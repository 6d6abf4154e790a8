"""The one exception type for bad input.

Everything in gemmlib that rejects what a user typed raises InputError with a
sentence a person can act on. Pages show it in an error box (translated: see
core.i18n); the command line prints it on one line and exits with status 2.

``InputError(N_("M must be at most {limit:,}, got {m:,}"), limit=lim, m=m)`` keeps the
English template and its values apart, so a page can show the sentence in the
reader's language; ``str(error)`` is the English sentence, as before. A plain
``InputError("a finished sentence")`` still works (its template is the sentence).
"""

from __future__ import annotations

from typing import Any

from gemmlib.core.i18n import Translate, english, render


class InputError(ValueError):
    """A value supplied by the user cannot be used; the message says why."""

    def __init__(self, message: str = "", /, **params: Any) -> None:
        self.template = str(message)
        self.params = params
        super().__init__(render(self.template, params) if params else self.template)

    def render(self, gettext: Translate = english) -> str:
        """The message through ``gettext`` (a page's ``ui._``), its values filled in."""
        return render(self.template, self.params, gettext)

    def __reduce__(self):
        # Survive pickling (a benchmark worker process) with the template and values intact,
        # for subclasses too, whatever their __init__ takes.
        return (_rebuild, (type(self), self.args, self.__dict__.copy()))


def _rebuild(cls: type[InputError], args: tuple, state: dict) -> InputError:
    err = cls.__new__(cls)
    err.args = args
    err.__dict__.update(state)
    return err
