"""Where a command writes (``--json``, ``--report``, ``--markdown``, ``--dump``, ``--out``):
checked before it does any work, then written whole or not at all.

A path that cannot be written must cost one line naming the flag and the fix, not a
traceback after the whole matrix ran (losing its results), nor a cell blamed on the op.
Missing parent folders are created, as ``mkdir -p`` would: ``--report out/r.html``
makes ``out/``. Each check writes for real (opens the file for appending, or creates and
removes it) because permission bits do not tell: root passes them, yet a read-only
mount or /sys refuses root too. A path inside the sources under test (``--json
mypkg/kernels.py``) is refused: the run would overwrite what it checks.

What passed the check can still fail at the end (the disk filled up meanwhile):
:func:`write` then leaves the file that was there as it was and raises
:class:`~opsdk.errors.OutputError`, one line, exit 3.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from opsdk.errors import OpsdkError, OutputError

__all__ = ["check", "write"]

_FIX = "choose a writable location"
_FULL = (errno.ENOSPC, errno.EDQUOT)
_STREAMS = ("/dev/", "/proc/")  # /dev/stdout, /proc/self/fd/1: a stream, whatever is behind it


def check(
    files: dict[str, tuple[Path | None, str]],
    folders: dict[str, Path | None] | None = None,
    sources: tuple[Path, ...] = (),
) -> None:
    """Make sure each output can be written: ``files`` maps a flag to its path (None when
    not given) and an example file name, ``folders`` a flag to its folder (or None);
    none may be in ``sources`` (the package under test: folders, or a module's file)."""
    outputs = {flag: (Path(path), example) for flag, (path, example) in files.items() if path}
    outputs |= {flag: (Path(path), None) for flag, path in (folders or {}).items() if path}
    seen: dict[str, str] = {}
    for flag, (path, _) in outputs.items():
        other = seen.setdefault(os.path.abspath(path), flag)
        if other != flag:
            raise OpsdkError(f"{other} and {flag} both write {path}: give each its own path")
    for flag, (path, example) in outputs.items():
        _outside(flag, path, example, sources)
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


def _outside(flag: str, path: Path, example: str | None, sources: tuple[Path, ...]) -> None:
    """Refuse ``path`` when it is, or is inside, one of ``sources`` (symlinks followed)."""
    where = Path(os.path.realpath(path))
    for source in map(Path, sources):
        real = Path(os.path.realpath(source))
        if where == real or real in where.parents:
            instead = real.parent / example if example else real.parent
            raise OpsdkError(
                f"{flag} {path}: is inside the package under test ({real}): write it "
                f"outside, e.g. {instead}"
            )


def write(flag: str, path: Path, text: str, append: bool = False) -> None:
    """``text`` (UTF-8) written to ``flag``'s ``path``, whole or not at all, or added at its
    end with ``append``; a file the machine cannot take is an :class:`OutputError`."""
    try:
        (_append if append else _replace)(Path(path), text.encode())
    except OSError as err:
        kept = "; the file there is as it was" if Path(path).is_file() else ""
        fix = "free some space or choose another location" if err.errno in _FULL else _FIX
        raise OutputError(f"{flag} {path}: not written ({err.strerror}){kept}; {fix}") from None


def _replace(path: Path, data: bytes) -> None:
    """Write a temporary file beside ``path``, flush it to the disk, then rename it over
    ``path``: a full disk, a crash or a kill midway leaves the earlier file whole (a
    symlink's target is the file replaced). A path that is no regular file (/dev/null, a
    FIFO), or a stream of this process (/dev/stdout, which a rename would cut off from the
    file it writes to), is written straight."""
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        existing = None
    streams = os.path.abspath(path).startswith(_STREAMS)
    if existing is not None and (streams or not stat.S_ISREG(existing.st_mode)):
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        return
    target = Path(os.path.realpath(path)) if existing is not None else path
    temporary = target.with_name(f".{target.name[:64]}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask's mode
    try:
        try:
            if existing is not None:
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _append(path: Path, data: bytes) -> None:
    """Add ``data`` at the end of ``path`` (a shared log such as $GITHUB_STEP_SUMMARY, which
    cannot be replaced); a write cut short is cut off again: the file holds what it held."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        try:
            _write_all(fd, data)
        except BaseException:
            with contextlib.suppress(OSError):  # not a regular file: nothing to cut
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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
