"""TorchAir's GE backend as the compiled columns use it, and the GE graphs it compiles,
recorded: column ``ge`` checks the op's graph; ``fusion`` compiles a pattern through it."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import torch

from opsdk._runtime import patches
from opsdk.harness.variants import profiles
from opsdk.offline.torchair import torchair_config, torchair_with_converters

__all__ = ["Recorded", "backend", "recorded_graphs"]


def backend(profile: str | None = None) -> Callable[..., Any]:
    """TorchAir's GE backend, with the options of ``profile`` (:mod:`.profiles`) if any."""
    config = torchair_config("max-autotune")
    profiles.apply(config, profiles.options(profile, "ge"))
    return torchair_with_converters().get_npu_backend(compiler_config=config)


@dataclasses.dataclass
class Recorded:
    """The GE graphs TorchAir compiled, in order; ``backward`` those compiled while
    autograd ran a backward (AOT autograd compiles the backward graph lazily);
    ``received`` every graph TorchAir was handed an FX graph for, converted or not
    (what ``--dump`` shows of a conversion that failed)."""

    graphs: list = dataclasses.field(default_factory=list)
    backward: list = dataclasses.field(default_factory=list)
    received: list = dataclasses.field(default_factory=list)

    def forward(self, start: int = 0) -> list:
        """The forward graphs among those compiled from the ``start``-th on."""
        return [g for g in self.graphs[start:] if not any(g is b for b in self.backward)]


@contextlib.contextmanager
def recorded_graphs() -> Iterator[Recorded]:
    """Collect each ``GeConcreteGraph`` TorchAir compiles (a Python hook, so it
    works the same offline and on an NPU host)."""
    recorded = Recorded()

    def record(graph):
        recorded.graphs.append(graph)
        if torch._C._current_graph_task_id() != -1:
            recorded.backward.append(graph)

    def receive(graph):
        if not any(graph is seen for seen in recorded.received):
            recorded.received.append(graph)

    with patches.ge_compile_hooked(record), patches.ge_graphs_seen(receive):
        yield recorded
