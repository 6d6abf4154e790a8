"""Every benchmark by name: the one place that knows the list.

Each benchmark module declares its spec (``SPEC = BenchSpec(...)``, ``gemmlib.measure.spec``); this
module says where each one is. ``SPECS[name]`` imports that module when it is first asked for, so a
worker that runs one benchmark loads only that benchmark's code. The worker looks a request's spec
up here; everything else takes a spec from the module that declares it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_
from gemmlib.measure.spec import BenchSpec

# name -> (module, attribute) of its spec
WHERE: dict[str, tuple[str, str]] = {
    "precision": ("gemmlib.measure.precision", "SPEC"),
    "tiling": ("gemmlib.measure.tiling", "SPEC"),
    "waves": ("gemmlib.measure.tiling", "WAVES_SPEC"),
    "batching": ("gemmlib.measure.batching", "SPEC"),
    "article": ("gemmlib.measure.batching", "ARTICLE_SPEC"),
    "ceilings": ("gemmlib.measure.devices", "SPEC"),
    "profile": ("gemmlib.measure.profiler", "SPEC"),
    "block_bench": ("gemmlib.measure.profiler", "BLOCK_BENCH_SPEC"),
    "calibrate": ("gemmlib.measure.calibrate", "SPEC"),
    "collectives": ("gemmlib.measure.collectives", "SPEC"),
    "tp": ("gemmlib.measure.tp", "SPEC"),
}


class _Specs(Mapping):
    """The specs by name, each imported on first use."""

    def __getitem__(self, name: str) -> BenchSpec:
        module, attr = WHERE[name]
        spec = getattr(importlib.import_module(module), attr)
        if not isinstance(spec, BenchSpec) or spec.name != name:
            raise TypeError(f"{module}.{attr} is not the spec named {name!r}")
        return spec

    def __iter__(self) -> Iterator[str]:
        return iter(WHERE)

    def __len__(self) -> int:
        return len(WHERE)


SPECS: Mapping[str, BenchSpec] = _Specs()


def get(name: str) -> BenchSpec:
    """The spec named ``name``; InputError for a name no module declares."""
    if name not in WHERE:
        raise InputError(N_("unknown benchmark {name!r}; known: {names}"), name=name, names=", ".join(WHERE))
    return SPECS[name]
