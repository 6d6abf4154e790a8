"""The one exception type for bad input.

Everything in gemmlib that rejects what a user typed raises InputError with a
sentence a person can act on. Pages show it in an error box; the command line
prints it on one line and exits with status 2.
"""


class InputError(ValueError):
    """A value supplied by the user cannot be used; the message says why."""
