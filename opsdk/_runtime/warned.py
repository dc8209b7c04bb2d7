"""Catching warnings without losing the filters code sets while they are caught."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

__all__ = ["caught"]


@contextlib.contextmanager
def caught(record: bool = False, always: tuple[type[Warning], ...] = ()) -> Iterator[list | None]:
    """``warnings.catch_warnings(record=record)`` with ``always`` shown every time; a filter
    code adds while active (an import: TorchAir's quieting its converters' import
    failures offline) outlives it, as it would uncaught: lost, the warnings it silences
    would land in whatever runs next."""
    with warnings.catch_warnings(record=record) as heard:
        for kind in always:
            warnings.simplefilter("always", kind)
        before = list(warnings.filters)
        try:
            yield heard
        finally:
            added = [f for f in warnings.filters if f not in before]
    for action, message, category, module, lineno in reversed(added):
        assert isinstance(category, type)  # filterwarnings and simplefilter assert one class
        warnings.filterwarnings(
            action,  # type: ignore[arg-type]  # typeshed types a filter's action as str
            message.pattern if message else "",
            category,
            module.pattern if module else "",
            lineno,
        )
