"""One registry idiom for opsdk's module registries: values by key in the order added,
one conflict rule, and a handle that undoes each registration.

The rule: the same value again under a taken key is a no-op (a module imported twice,
an op defined again with the same definition); a different value raises
:class:`Conflict`, one line naming the key and the fix, because the registry could
hold only one and silently keeping either would judge with the wrong one. A registry
whose users legitimately replace their own entry (a converter re-run in a notebook)
says so and uses :meth:`Registry.replace`, whose undo puts the old value back.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

from opsdk.errors import OpsdkError

__all__ = ["Conflict", "Registration", "Registry", "Unknown"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Conflict(OpsdkError, ValueError):
    """A different value for a key a registry holds already."""


class Unknown(OpsdkError, LookupError):
    """A key a registry does not hold, asked for where it must."""


class Registration:
    """What :meth:`Registry.add` returns: :meth:`undo` removes the entry it added (once;
    an entry replaced since is left alone); a ``with`` block undoes it on leaving."""

    def __init__(self, undo: Callable[[], None] | None = None) -> None:
        self._undo = undo

    def undo(self) -> None:
        undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    def __enter__(self) -> Registration:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()


class Registry(Generic[K, V]):
    """Values of kind ``what`` (``"column"``, ``"GE op type"``) by key, in the order added;
    ``fix`` ends a conflict's message (what the registering code should change)."""

    def __init__(self, what: str, fix: str) -> None:
        self.what = what
        self.fix = fix
        self._entries: dict[K, V] = {}

    def add(self, key: K, value: V) -> Registration:
        """Register ``value`` under ``key`` (see the module docstring for the rule)."""
        if key in self._entries:
            taken = self._entries[key]
            if taken is value or taken == value:
                return Registration()  # the first registration owns the entry
            raise Conflict(
                f"{self.what} {repr(key)} is registered already with a different value: {self.fix}"
            )
        self._entries[key] = value
        return Registration(lambda: self._remove(key, value))

    def replace(self, key: K, value: V) -> Registration:
        """Register ``value`` under ``key`` whatever it held; the undo restores that."""
        missing = key not in self._entries
        previous = self._entries.get(key)
        self._entries[key] = value

        def undo() -> None:
            if self._entries.get(key) is not value:
                return
            if missing:
                del self._entries[key]
            else:
                self._entries[key] = previous  # type: ignore[assignment]  # held when not missing

        return Registration(undo)

    def get(self, key: K) -> V | None:
        """The value under ``key``, None where absence is normal."""
        return self._entries.get(key)

    def require(self, key: K, known: Callable[[], list[str]] | None = None) -> V:
        """The value under ``key``; an unknown key raises :class:`Unknown` naming the keys
        held (or ``known()``, for a registry whose keys are not what users type)."""
        if key in self._entries:
            return self._entries[key]
        names = known() if known is not None else [str(k) for k in self._entries]
        raise Unknown(f"no {self.what} {repr(key)}; the known ones: {', '.join(names)}")

    def keys(self) -> list[K]:
        return list(self._entries)

    def values(self) -> list[V]:
        return list(self._entries.values())

    def items(self) -> list[tuple[K, V]]:
        return list(self._entries.items())

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def _remove(self, key: K, value: V) -> None:
        if self._entries.get(key) is value:
            del self._entries[key]
