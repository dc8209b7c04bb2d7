"""Where a command will write (``--json``, ``--report``, ``--markdown``, ``--dump``, ``--out``),
checked before it does any work.

A path that cannot be written must cost one line naming the flag and the fix, not a
traceback after the whole matrix ran (losing its results), nor a cell blamed on the op.
Missing parent folders are created, as ``mkdir -p`` would: ``--report out/r.html``
makes ``out/``. Each check writes for real (opens the file for appending, or creates and
removes it) because permission bits do not tell: root passes them, yet a read-only
mount or /sys refuses root too.
"""

from __future__ import annotations

import os
from pathlib import Path

from opsdk.errors import OpsdkError

__all__ = ["check"]

_FIX = "choose a writable location"


def check(
    files: dict[str, tuple[Path | None, str]], folders: dict[str, Path | None] | None = None
) -> None:
    """Make sure each output can be written: ``files`` maps a flag to its path (None when
    not given) and an example file name, ``folders`` a flag to its folder (or None)."""
    outputs = {flag: (Path(path), example) for flag, (path, example) in files.items() if path}
    outputs |= {flag: (Path(path), None) for flag, path in (folders or {}).items() if path}
    seen: dict[str, str] = {}
    for flag, (path, _) in outputs.items():
        other = seen.setdefault(os.path.abspath(path), flag)
        if other != flag:
            raise OpsdkError(f"{other} and {flag} both write {path}: give each its own path")
    for flag, (path, example) in outputs.items():
        try:
            if example is None:
                _folder(flag, path)
            else:
                _file(flag, path, example)
        except OSError as err:
            raise OpsdkError(
                f"{flag} {path}: cannot write there ({err.strerror}); {_FIX}"
            ) from None


def _file(flag: str, path: Path, example: str) -> None:
    if path.is_dir():
        raise OpsdkError(f"{flag} {path}: is a folder; give a file path, e.g. {path / example}")
    _make(flag, path, path.parent)
    if path.exists():  # opened to append nothing: the file stays as it is until the run ends
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))  # a FIFO: no hang
    else:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        path.unlink()


def _folder(flag: str, path: Path) -> None:
    _make(flag, path, path)
    probe = path / f".opsdk-probe-{os.getpid()}"
    os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    probe.unlink()


def _make(flag: str, path: Path, folder: Path) -> None:
    """Create ``folder`` (``path`` or its parent) and its missing parents."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # a file where a folder must be
        blocker = next(p for p in (folder, *folder.parents) if p.exists() and not p.is_dir())
        raise OpsdkError(
            f"{flag} {path}: {blocker} is a file, not a folder; choose another path"
        ) from None
    except OSError as err:
        raise OpsdkError(
            f"{flag} {path}: cannot create the folder {folder} ({err.strerror}); {_FIX}"
        ) from None
