"""What a benchmark is, once: its spec.

Each benchmark module declares one ``SPEC = BenchSpec(name, Config, plan, run, Result, ...)``
(in the spirit of torchtitan's ``TrainSpec``: the parts are declared once and looked up by name;
``gemmlib.measure.registry`` holds them):

- ``config``: its configuration type, a frozen dataclass that checks itself where it is built
  (``__post_init__``: InputError for a value that can never run); it has a ``device``;
- ``plan(config, limits) -> Plan``: what the run will hold, its largest call, its time (one time
  model, ``gemmlib.measure.plan``) — the caps that depend on the server are checked here;
- ``run(config, progress, deadline) -> Result``: the measurement, in the worker process;
- ``result``: the type ``run`` returns, rebuilt by ``gemmlib.core.codec`` on the server's side;
- ``label(config)``: the run's name as a page and the queue show it (an ``N_`` constant or a Text);
- ``imports``: modules the worker imports before it counts its memory baseline, ``warm()`` what it
  calls there (a kernel's first-use set-up); ``profiler``: also start torch.profiler there (its
  own ~150 MB belong to the baseline); ``needs_device``:
  the device must exist here (a benchmark that answers a missing device with rows says False);
  ``ranks_open_devices``: the run only starts rank processes, each opening its own GPU, so the worker
  itself stays on the CPU (a CUDA context there would sit on GPU 0 beside rank 0's for the whole run).

The runner, the worker, the queue, the command line and the pages take a spec and a config;
none of them knows the list of benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from gemmlib.core.i18n import N_, Text

KIND_RUN = N_("a {kind} run")  # a run whose spec names no label

C = TypeVar("C")
R = TypeVar("R")

Progress = Callable[[float | None, str], None]  # (fraction done or None, the step's text: a Text or an N_ constant)


@dataclass(frozen=True)
class BenchSpec(Generic[C, R]):
    name: str
    config: type
    plan: Callable[..., Any]  # (config, limits) -> gemmlib.measure.plan.Plan
    run: Callable[..., Any]  # (config, progress, deadline) -> result
    result: Any  # a type gemmlib.core.codec decodes: a dataclass, list[BenchResult], ...
    label: Callable[[Any], str] | str = ""
    imports: tuple[str, ...] = ()
    warm: Callable[[], Any] | None = None
    profiler: bool = False
    needs_device: bool = True
    ranks_open_devices: bool = False

    def describe(self, config: Any) -> str:
        """The run's name: a Text (English as it is; a page shows it in its reader's language)."""
        label = self.label(config) if callable(self.label) else self.label
        if not label:
            return Text(KIND_RUN, kind=self.name)
        return label if isinstance(label, Text) else Text(label)  # a constant of the catalogue
