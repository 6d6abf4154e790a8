"""The one form data takes across a process boundary: dataclasses to JSON-safe values and back.

A benchmark's configuration goes to its worker and its result comes back through here, nothing
else (no pickle, no hand-written ``from_dict`` per type). Three functions:

- ``encode(value)``: a dataclass becomes a dict of its fields, a tuple a list, a non-finite float
  ``{"$float": "inf"}``, and a message stays a message: a ``Text`` or a ``Msg`` (``core.i18n``) is
  ``{"$text" | "$msg": template, "params": {...}}`` with its values (a value that is itself a
  message nested the same way; a value JSON has no form for as ``{"$shown": str, "repr": repr}``,
  so the message reads exactly as it did). A page shows the message translated; nothing parses
  English back into a template. Any other object (in an untyped field) becomes its text, as the
  JSON export (``BenchResult.to_dict``) writes it.
- ``decode(type, data)``: the value rebuilt as ``type`` says (its dataclass fields' annotations,
  ``list[X]``, ``tuple[X, ...]``, ``dict[str, X]``, ``X | None``, ``Any``), checked on the way: a
  field of the wrong type, an unknown or missing field is a ``CodecError`` naming where; a
  dataclass is built through its constructor, so its own ``__post_init__`` checks run.
- ``pack(kind, value)`` / ``unpack(kind, type, payload)``: the value in a versioned envelope
  ``{"v": VERSION, "kind": kind, "data": ...}``; another version or kind is refused.

No torch, no third-party code: the types that cross are plain dataclasses of this project.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import types
import typing
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from gemmlib.core.i18n import Msg, Text

VERSION = 1
_TAGS = ("$text", "$msg", "$joined", "$float", "$shown")


class CodecError(ValueError):
    """Data that is not what the type says (or a value that has no JSON form)."""


class Shown:
    """A message's value that JSON has no form for (a tuple under ``{x!r}``, a path): its ``str`` and
    ``repr`` as they were, so the message renders exactly as where it was made."""

    __slots__ = ("text", "rep")

    def __init__(self, text: str, rep: str) -> None:
        self.text, self.rep = text, rep

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.rep

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shown) and (self.text, self.rep) == (other.text, other.rep)

    def __hash__(self) -> int:
        return hash((self.text, self.rep))


# --------------------------------------------------------------------------- encoding
def encode(x: Any) -> Any:
    """``x`` as JSON-safe data (see the module docstring)."""
    if isinstance(x, Text):
        return _encode_message(x.msg, text=True)
    if isinstance(x, Msg):
        return _encode_message(x, text=False)
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else {"$float": repr(x)}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: encode(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Mapping):
        out = {}
        for k, v in x.items():
            key = k if isinstance(k, str) else str(k) if isinstance(k, (int, float)) and not isinstance(k, bool) else None
            if key is None or key.startswith("$"):
                raise CodecError(f"a dict key {k!r} has no JSON form here")
            out[key] = encode(v)
        return out
    if isinstance(x, (list, tuple, set, frozenset)):
        return [encode(v) for v in (sorted(x) if isinstance(x, (set, frozenset)) else x)]
    if isinstance(x, PurePath):
        return str(x)
    item = getattr(x, "item", None)  # numpy scalars, 0-d tensors
    if callable(item):
        try:
            return encode(item())
        except (TypeError, ValueError, RuntimeError):
            pass
    return str(x)  # anything else (a dtype object in a row's extras): its text, as the JSON export writes it


def _encode_message(msg: Any, *, text: bool) -> dict:
    if isinstance(msg, Msg):
        return {"$text" if text else "$msg": msg.template,
                "params": {k: _encode_param(v) for k, v in msg.params.items()}}
    sep, parts = getattr(msg, "sep", None), getattr(msg, "parts", None)
    if isinstance(sep, str) and isinstance(parts, tuple):  # Text.joined
        return {"$joined": sep, "parts": [encode(p) if isinstance(p, (Msg, Text)) else str(p) for p in parts]}
    raise CodecError(f"a text whose message is a {type(msg).__name__} has no JSON form")


def _encode_param(v: Any) -> Any:
    if isinstance(v, (Msg, Text)):
        return encode(v)
    if isinstance(v, Shown):
        return {"$shown": v.text, "repr": v.rep}
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, float) and math.isfinite(v):
        return float(v)
    item = getattr(v, "item", None)
    if callable(item) and not isinstance(v, (list, tuple, dict)):
        try:
            return _encode_param(item())
        except (TypeError, ValueError, RuntimeError):
            pass
    return {"$shown": str(v), "repr": repr(v)}


# --------------------------------------------------------------------------- decoding
def decode(tp: Any, data: Any, where: str = "$") -> Any:
    """``data`` (from :func:`encode`, through JSON) as a value of type ``tp``; CodecError if it is not one."""
    if tp is Any or tp is object:
        return _plain(data, where)
    if tp is None or tp is type(None):
        if data is not None:
            raise CodecError(f"{where}: expected null, got {_what(data)}")
        return None
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return decode(a, data, where)
            except CodecError as e:
                errors.append(str(e))
        raise CodecError(errors[0] if len(errors) == 1 else f"{where}: {_what(data)} is none of {tp}")
    if origin is typing.Literal:
        if data not in typing.get_args(tp):
            raise CodecError(f"{where}: {data!r} is not one of {typing.get_args(tp)}")
        return data
    if origin in (list, tuple, dict, set, frozenset) or tp in (list, tuple, dict, set, frozenset):
        return _decode_container(origin or tp, typing.get_args(tp), data, where)
    if tp is str or tp is Text:
        return _decode_str(data, where, tp)
    if tp is Msg:
        if not (isinstance(data, dict) and "$msg" in data):
            raise CodecError(f"{where}: expected a message, got {_what(data)}")
        return _message(data, where)
    if tp is bool:
        if not isinstance(data, bool):
            raise CodecError(f"{where}: expected true or false, got {_what(data)}")
        return data
    if tp is int:
        if isinstance(data, float) and data.is_integer():  # JSON wrote a whole float (1e9)
            return int(data)
        if isinstance(data, bool) or not isinstance(data, int):
            raise CodecError(f"{where}: expected a whole number, got {_what(data)}")
        return data
    if tp is float:
        if isinstance(data, dict) and set(data) == {"$float"} and data["$float"] in ("inf", "-inf", "nan"):
            return float(data["$float"])
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise CodecError(f"{where}: expected a number, got {_what(data)}")
        return float(data)
    if isinstance(tp, type) and issubclass(tp, PurePath):
        if not isinstance(data, str):
            raise CodecError(f"{where}: expected a path, got {_what(data)}")
        return tp(data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, data, where)
    raise CodecError(f"{where}: the codec has no rule for {tp!r}")


def _decode_str(data: Any, where: str, tp: Any) -> str:
    if isinstance(data, dict) and ("$text" in data or "$joined" in data):
        return _message(data, where)
    if tp is str and isinstance(data, str):
        return data
    if tp is Text and isinstance(data, str):
        raise CodecError(f"{where}: expected a message, got plain text")
    raise CodecError(f"{where}: expected text, got {_what(data)}")


def _decode_container(origin: Any, args: tuple, data: Any, where: str) -> Any:
    if origin is dict:
        if not isinstance(data, dict) or any(str(k).startswith("$") for k in data):
            raise CodecError(f"{where}: expected an object, got {_what(data)}")
        kt, vt = args if len(args) == 2 else (Any, Any)
        out = {}
        for k, v in data.items():
            key = k
            if kt is int:
                try:
                    key = int(k)
                except ValueError:
                    raise CodecError(f"{where}: key {k!r} is not a whole number") from None
            elif kt is float:
                key = float(k)
            out[key] = decode(vt, v, f"{where}.{k}")
        return out
    if not isinstance(data, list):
        raise CodecError(f"{where}: expected a list, got {_what(data)}")
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        if args == ((),):
            args = ()
        if len(data) != len(args):
            raise CodecError(f"{where}: expected {len(args)} items, got {len(data)}")
        return tuple(decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True)))
    item = args[0] if args else Any
    items = [decode(item, v, f"{where}[{i}]") for i, v in enumerate(data)]
    return origin(items) if origin is not list else items


def _decode_dataclass(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise CodecError(f"{where}: expected {cls.__name__} as an object, got {_what(data)}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise CodecError(f"{where}: {cls.__name__} has no field {unknown[0]!r}")
    kwargs, late = {}, {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise CodecError(f"{where}: {cls.__name__} needs {name!r}")
            continue
        value = decode(hints.get(name, Any), data[name], f"{where}.{name}")
        (kwargs if f.init else late)[name] = value
    try:
        obj = cls(**kwargs)
    except (ValueError, TypeError) as e:  # the type's own checks (InputError is a ValueError)
        raise CodecError(f"{where}: {cls.__name__}: {e}") from e
    for name, value in late.items():
        object.__setattr__(obj, name, value)
    return obj


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The fields' annotations, resolved (string annotations included); a field whose annotation
    cannot be resolved here is decoded as ``Any``."""
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - a name only imported for type checking: resolve field by field
        out: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            ns = vars(sys.modules.get(klass.__module__, types.ModuleType("x")))
            for name, ann in getattr(klass, "__annotations__", {}).items():
                try:
                    out[name] = eval(ann, dict(ns)) if isinstance(ann, str) else ann  # noqa: S307 - our own annotations
                except Exception:  # noqa: BLE001
                    out[name] = Any
        return out


def _plain(data: Any, where: str) -> Any:
    """Untyped data (an ``Any`` field, a bare ``dict``): as JSON gave it, with its messages and
    non-finite floats rebuilt."""
    if isinstance(data, dict):
        if "$text" in data or "$msg" in data or "$joined" in data:
            return _message(data, where)
        if set(data) == {"$float"}:
            return decode(float, data, where)
        return {k: _plain(v, f"{where}.{k}") for k, v in data.items()}
    if isinstance(data, list):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(data)]
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    raise CodecError(f"{where}: {_what(data)} is not JSON data")


def _message(data: dict, where: str) -> Any:
    if "$joined" in data:
        sep, parts = data.get("$joined"), data.get("parts")
        if not isinstance(sep, str) or not isinstance(parts, list) or set(data) != {"$joined", "parts"}:
            raise CodecError(f"{where}: a joined text needs a separator and its parts")
        return Text.joined([_decode_str(p, f"{where}.parts[{i}]", str) for i, p in enumerate(parts)], sep)
    key = "$text" if "$text" in data else "$msg"
    template, params = data.get(key), data.get("params", {})
    if not isinstance(template, str) or not isinstance(params, dict) or set(data) - {key, "params"}:
        raise CodecError(f"{where}: a message needs a template and its values")
    values = {}
    for k, v in params.items():
        if isinstance(v, dict) and "$shown" in v:
            if not (isinstance(v.get("$shown"), str) and isinstance(v.get("repr"), str)):
                raise CodecError(f"{where}.params.{k}: a shown value needs its text and repr")
            values[k] = Shown(v["$shown"], v["repr"])
        elif isinstance(v, dict):
            values[k] = _message(v, f"{where}.params.{k}")
        elif v is None or isinstance(v, (bool, int, float, str)):
            values[k] = v
        else:
            raise CodecError(f"{where}.params.{k}: {_what(v)} is not a message's value")
    try:
        return Text(template, **values) if key == "$text" else Msg(template, **values)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
        raise CodecError(f"{where}: the template does not take its values ({e})") from None


def _what(data: Any) -> str:
    if isinstance(data, dict):
        return "an object"
    if isinstance(data, list):
        return "a list"
    if isinstance(data, str):
        return f"text {data[:40]!r}"
    return "null" if data is None else f"{type(data).__name__} {data!r}"


# --------------------------------------------------------------------------- envelopes
def pack(kind: str, value: Any) -> dict:
    """``value`` encoded, in its versioned envelope."""
    return {"v": VERSION, "kind": kind, "data": encode(value)}


def unpack(kind: str, tp: Any, payload: Any) -> Any:
    """The value :func:`pack` wrapped, as ``tp``; CodecError for another version or kind."""
    if not isinstance(payload, dict) or set(payload) != {"v", "kind", "data"}:
        raise CodecError("not a packed value")
    if payload["v"] != VERSION:
        raise CodecError(f"codec version {payload['v']!r}, this side reads {VERSION}")
    if payload["kind"] != kind:
        raise CodecError(f"a packed {payload['kind']!r}, expected {kind!r}")
    return decode(tp, payload["data"], kind)
