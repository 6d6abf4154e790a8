"""Byte units (binary: KiB = 1024 B, the project's one byte unit), used wherever sizes are checked or parsed;
printed by the one formatter (``gemmlib.core.format.nbytes``)."""

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_

KiB = 1024
MiB = 1024**2
GiB = 1024**3

_SUFFIX = {"": 1, "B": 1, "K": KiB, "KB": KiB, "KIB": KiB, "M": MiB, "MB": MiB, "MIB": MiB,
           "G": GiB, "GB": GiB, "GIB": GiB}


def parse_bytes(text: str, what: str = "a size") -> int:
    """'8', '64K', '4MiB', '1G' -> bytes (binary: K = 1024, as nccl-tests' -b/-e read them)."""
    s = str(text).strip().upper().replace(" ", "")
    num = s.rstrip("BKMGI") if s else s
    suffix = s[len(num):]
    if suffix not in _SUFFIX or not num:
        raise InputError(N_("{what} {text!r} is not a size; write bytes like 8, 64K, 4M or 1G"), what=what, text=text)
    try:
        v = float(num)
    except ValueError:
        raise InputError(N_("{what} {text!r} is not a size; write bytes like 8, 64K, 4M or 1G"), what=what, text=text) from None
    b = v * _SUFFIX[suffix]
    if not b >= 1 or not float(b).is_integer():
        raise InputError(N_("{what} {text!r} must be a whole number of bytes ≥ 1"), what=what, text=text)
    return int(b)
