"""Expected failures of an op package, declared in ``opsdk-waivers.toml`` beside it.

A waiver lets a known failure be tracked without failing the run: the cell is
reported ``xfail``. So that waivers do not outlive the bug they cover, a waived
cell that passes stays ``pass`` but says the waiver is stale, and that fails the
run (``opsdk check`` exits 1, the pytest item fails). The file is validated in
full before anything runs: a waiver that could never match (unknown op, column
or shape mode) is an error, not a silent no-op.

::

    [[waiver]]
    op = "myops::my_add"       # as reports name it, or just "my_add"
    column = "ge"              # a column (an audit's: a check), or "*"
    shapes = "dynamic"         # a shape mode, or "*"
    profile = "frozen_parameter"  # optional: an option profile, or "*" (the default)
    context = "view"           # optional: a usage context, or "*" (the default)
    reason = "GE dynamic shapes need CANN 8.1 (issue 42)"

``backend``, the older name of ``column``, is still read. A waiver without
``profile`` or ``context`` covers the plain cells and every option
profile or usage context of them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from opsdk.axes import SHAPE_MODES
from opsdk.errors import OpsdkError
from opsdk.harness import columns
from opsdk.harness.cell import OpUnderTest, Result
from opsdk.harness.variants import contexts, profiles

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

FILE_NAME = "opsdk-waivers.toml"
ANY = "*"
_KEYS = ("op", "column", "shapes", "reason")
_OLD_KEYS = {"backend": "column"}  # read as the key they were renamed to
# a waiver without one of these covers every profile / context, and the plain cells
_OPTIONAL = {"profile": ANY, "context": ANY}


class WaiverError(OpsdkError):
    """The waiver file cannot be read, or names something that does not exist."""


@dataclass(frozen=True)
class Waiver:
    op: str
    column: str
    shapes: str
    reason: str
    profile: str = ANY
    context: str = ANY

    def covers(
        self,
        op: OpUnderTest,
        column: str,
        shapes: str,
        profile: str | None,
        context: str | None = None,
    ) -> bool:
        return (
            self.op in (op.name, op.spec.name)
            and self.column in (ANY, column)
            and self.shapes in (ANY, shapes)
            and self.profile in (ANY, profile)
            and self.context in (ANY, context)
        )


def path_for(package) -> Path:
    """Where a package's waivers live: beside its directory, in the project root."""
    return Path(package.__file__).resolve().parent.parent / FILE_NAME


def load(package, ops: list[OpUnderTest]) -> list[Waiver]:
    """The package's waivers (none when it has no file), each checked against ``ops``."""
    path = path_for(package)
    if not path.is_file():
        return []
    return read(path, ops, columns.names())


def read(path: Path, ops: list[OpUnderTest], column_names) -> list[Waiver]:
    """The waivers in ``path``, each checked against ``ops`` and the columns
    ``column_names`` (``opsdk audit``'s are its checks)."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise WaiverError(f"{path}: {err}; fix the TOML") from None
    entries = data.get("waiver", [])
    if set(data) - {"waiver"} or not isinstance(entries, list):
        raise WaiverError(f"{path}: write each waiver as a [[waiver]] table ({', '.join(_KEYS)})")
    return [
        _parse(entry, f"{path}: waiver {i}", ops, column_names)
        for i, entry in enumerate(entries, 1)
    ]


def _parse(entry, where: str, ops: list[OpUnderTest], column_names) -> Waiver:
    if not isinstance(entry, dict):
        raise WaiverError(f"{where} is not a table: write it as [[waiver]] with {', '.join(_KEYS)}")
    entry = _renamed(entry)
    extra = sorted(set(entry) - set(_KEYS) - set(_OPTIONAL))
    given = {**_OPTIONAL, **entry}
    missing = [
        k for k in (*_KEYS, *_OPTIONAL) if not (isinstance(given.get(k), str) and given[k].strip())
    ]
    if extra or missing:
        raise WaiverError(
            f"{where} needs {', '.join(_KEYS)} as non-empty strings"
            + (f"; {', '.join(missing)} missing or empty" if missing else "")
            + (f"; unknown {', '.join(extra)}" if extra else "")
        )
    waiver = Waiver(**{k: given[k].strip() for k in (*_KEYS, *_OPTIONAL)})
    for key, choices in (
        ("column", column_names),
        ("shapes", SHAPE_MODES),
        ("profile", profiles.names()),
        ("context", contexts.names()),
    ):
        value = getattr(waiver, key)
        if value != ANY and value not in choices:
            raise WaiverError(
                f"{where}: unknown {key} {value!r}: choose from {', '.join(choices)} or {ANY!r}"
            )
    if not any(waiver.op in (op.name, op.spec.name) for op in ops):
        raise WaiverError(
            f"{where} names op {waiver.op!r}, which the package does not declare "
            f"(its ops: {', '.join(op.name for op in ops)}): fix or remove the waiver"
        )
    return waiver


def _renamed(entry: dict) -> dict:
    """``entry`` with an older key read as its new name, unless both are given (the older
    one is then an unknown key)."""
    return {
        (_OLD_KEYS[k] if k in _OLD_KEYS and _OLD_KEYS[k] not in entry else k): v
        for k, v in entry.items()
    }


def reason_for(
    waivers: list[Waiver],
    op: OpUnderTest,
    column: str,
    shapes: str,
    profile: str | None = None,
    context: str | None = None,
) -> str | None:
    """The reason of the first waiver covering the cell, if any."""
    return next((w.reason for w in waivers if w.covers(op, column, shapes, profile, context)), None)


def apply(result: Result, reason: str | None) -> Result:
    """A waived failure becomes ``xfail`` (layer and message kept); a waived pass says
    the waiver is stale. Skips and setup errors are left alone: they say nothing about
    the op, only about what this machine can run."""
    if reason is None or result.status == "skip" or result.layer == "setup":
        return result
    if result.status == "pass":
        return replace(
            result,
            waiver=reason,
            message=f"waived in {FILE_NAME} ({reason}) but it passes: remove the waiver",
        )
    return replace(result, status="xfail", waiver=reason)
