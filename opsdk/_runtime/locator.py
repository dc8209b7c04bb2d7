"""Find TorchAir: the one inside an installed torch_npu, or an offline copy.

On an NPU host ``import torch_npu`` works and its TorchAir is the real thing.
Everywhere else opsdk still runs TorchAir's *Python* code, taken from the
torch-npu wheel that matches the installed torch: the wheel is downloaded (never
installed: installing it without CANN breaks ``import torch``), only its Python
(:data:`_EXTRACTED`) is extracted into a per-user cache, and ``torch_npu/dynamo``
goes on ``sys.path`` so ``import torchair`` and ``import npugraph_ex`` work while
``torch_npu`` itself stays unimportable. :mod:`opsdk.offline.torchair` imports it;
:mod:`opsdk._runtime.npu.torch_npu` runs torch_npu's Python from it.

The cache entry keeps the wheel too, and a manifest (size, mtime and sha256 of every
extracted file, and of the bytecode opsdk compiled from it) in its marker, written
before the entry is published. Each process checks the entry against it once before
use (:func:`fetch`): a file whose size or mtime changed is hashed, so a damaged cache
is a :class:`CorruptCache` naming the file, not a ``SyntaxError`` deep inside TorchAir
nor stale code run from a damaged ``.pyc``; ``opsdk fetch-torchair`` repairs it from
the kept wheel.

``packaging`` (opsdk's ``tools`` extra) is imported where a wheel is read, never at
module level nor to describe the cache (:func:`locate`): the emulated device imports
this module, an op package imports with torch alone, and `opsdk doctor` runs so.
"""

from __future__ import annotations

import compileall
import contextlib
import fcntl
import hashlib
import importlib
import importlib.util
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from opsdk.errors import SetupError

ENV_CACHE_DIR = "OPSDK_CACHE_DIR"
ENV_WHEEL = "OPSDK_TORCH_NPU_WHEEL"
# A module registered as ``torch_npu`` that carries this attribute is an opsdk
# stand-in, not an installed torch_npu: its presence must not select "real" mode.
STANDIN_MARKER = "__opsdk_standin__"

_MARKER_FILE = "opsdk-torchair.json"
_DYNAMO = ("torch_npu", "dynamo")
# What the cache keeps of the wheel: TorchAir and npugraph_ex (``dynamo/``), the
# torch_npu Python they run on offline (``npu/`` and what it imports), and the
# real-op test bed: C++ headers (op-plugin's EXEC_NPU_CMD, acl, REG_OP macros), the
# codegen schemas and the Meta functions of torch_npu's own ops.
_EXTRACTED = (
    "torch_npu/dynamo/",
    "torch_npu/npu/",
    "torch_npu/utils/",
    "torch_npu/_init/",
    "torch_npu/_compat/",
    "torch_npu/_compiler/",
    "torch_npu/include/",
    "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml",
    "torch_npu/op_plugin/meta/_meta_registrations.py",
)
# Bumped whenever the entry's layout changes (what _EXTRACTED keeps, the marker's
# contents), so an older cache entry is fetched again.
_LAYOUT = 4
REPAIR = "opsdk fetch-torchair"
# pip's own platform tags find no wheel on e.g. macOS; the part opsdk uses is pure
# Python, so any platform's wheel of the right version carries it.
_FALLBACK_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_28_aarch64")
_PIP_TIMEOUT_S = 900
# A version's release segment (2.13.0 of 2.13.0rc1+cpu), after an optional leading v.
_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)")


class TorchairUnavailable(SetupError):
    """TorchAir can be neither imported from torch_npu nor fetched offline."""


class CorruptCache(TorchairUnavailable):
    """Files of the offline cache differ from the wheel they were extracted from."""

    def __init__(self, entry: Path, damaged: list[str]):
        more = f" and {len(damaged) - 1} more file(s)" if len(damaged) > 1 else ""
        self.where = f"{entry / damaged[0]}{more}"
        super().__init__(f"the TorchAir cache is corrupt: {self.where} (fix: {REPAIR})")


@dataclass(frozen=True)
class TorchairInfo:
    """Where TorchAir comes from in this process.

    ``path`` is the directory that holds the ``torchair`` package (the cache
    directory offline, whether or not it is filled yet); ``source`` names the
    wheel it was extracted from (offline) or the installed torch_npu (real);
    ``fetched`` says whether that directory is ready to import from.
    """

    mode: str
    path: Path
    torch_npu_version: str
    source: str | None
    fetched: bool


def expected_torch_npu_version() -> str:
    """torch-npu releases track torch versions: torch 2.13.0+cpu -> torch-npu 2.13.0 (the
    release segment, ``packaging``'s base version of torch's, read without it: `opsdk
    doctor` runs with torch alone)."""
    from opsdk._versions import torch_version

    found = _RELEASE.match(torch_version().strip().lower())
    if found is None:
        raise ValueError(f"torch's version {torch_version()!r} has no release number")
    return found[1]


def cache_root() -> Path:
    """``$OPSDK_CACHE_DIR``, else ``opsdk/`` in the user's cache directory."""
    configured = os.environ.get(ENV_CACHE_DIR)
    return Path(configured).expanduser() if configured else user_cache_dir() / "opsdk"


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME`` when it is an absolute path (the XDG rule), else ``~/.cache``, with
    ``~`` the first of ``$HOME`` and the password database's home that is an absolute path
    other than ``/`` (an empty ``HOME`` is no home, and ``/.cache`` no cache); with no home
    at all, ``.opsdk-cache/`` in the current directory (never a shared temporary directory:
    the caches hold code that is run)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg)
    home = _home()
    return home / ".cache" if home else Path.cwd() / ".opsdk-cache"


def _home() -> Path | None:
    """``$HOME``, else the password database's home: the first that is an absolute path
    other than ``/``."""
    home = os.environ.get("HOME", "")
    if not _a_home(home):
        try:
            home = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:  # a uid without an entry (some containers)
            return None
    return Path(home) if _a_home(home) else None


def _a_home(path: str) -> bool:
    return os.path.isabs(path) and bool(path.strip("/"))


def _cache_entry(version: str) -> Path:
    return cache_root() / f"torch_npu-{version}"


def _dynamo_dir(entry: Path) -> Path:
    return entry.joinpath(*_DYNAMO)


def _read_marker(entry: Path) -> dict | None:
    """The metadata of the cache entry, or None when there is none of this layout (entries
    are published whole, so one with a marker is complete)."""
    try:
        meta = json.loads((entry / _MARKER_FILE).read_text())
    except (OSError, ValueError):
        return None
    return meta if meta.get("layout") == _LAYOUT else None


def _installed_torch_npu():
    """The imported torch_npu module when a working one is installed, else None.

    ``import torch_npu`` is attempted only when the package is found: importing it
    without CANN fails, and a stand-in registered under that
    name is recognised by :data:`STANDIN_MARKER`.
    """
    module = sys.modules.get("torch_npu")
    if module is not None:
        return None if getattr(module, STANDIN_MARKER, False) else module
    if importlib.util.find_spec("torch_npu") is None:
        return None
    try:
        return importlib.import_module("torch_npu")
    except Exception:  # any failure means "no usable torch_npu here"
        return None


def locate() -> TorchairInfo:
    """Describe where TorchAir would come from, without downloading anything."""
    torch_npu = _installed_torch_npu()
    if torch_npu is not None:
        version = str(getattr(torch_npu, "__version__", "unknown"))
        return TorchairInfo(
            mode="real",
            path=Path(torch_npu.__file__).parent.joinpath("dynamo"),
            torch_npu_version=version,
            source=f"torch_npu {version} (installed)",
            fetched=True,
        )
    version = expected_torch_npu_version()
    entry = _cache_entry(version)
    meta = _read_marker(entry)
    return TorchairInfo(
        mode="offline",
        path=_dynamo_dir(entry),
        torch_npu_version=version,
        source=meta.get("wheel") if meta else None,
        fetched=meta is not None,
    )


def torch_npu_file(relpath: str) -> Path:
    """A file of torch_npu named by its path inside the package (``include/acl/acl_base.h``):
    the installed torch_npu's on a host, else the offline cache's, fetched on first use.
    Only what :data:`_EXTRACTED` keeps is there offline."""
    if f"torch_npu/{relpath}".startswith(_EXTRACTED):
        info = locate()
        root = info.path.parent if info.mode == "real" else fetch().parent
        return root / relpath
    raise ValueError(f"torch_npu/{relpath} is not among the files opsdk keeps: {_EXTRACTED}")


def _unavailable(version: str, why: str) -> TorchairUnavailable:
    return TorchairUnavailable(
        f"cannot get TorchAir from torch-npu {version}: {why}; set {ENV_WHEEL}="
        f"/path/to/torch_npu-{version}-*.whl, or run `opsdk fetch-torchair` where PyPI is reachable"
    )


def _pip_download(version: str, dest: Path) -> Path:
    """Download (not install) the torch-npu wheel with the user's own pip setup
    (index mirrors in pip.conf apply)."""
    base = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        f"torch-npu=={version}",
        "-d",
        str(dest),
    ]
    pyver = f"{sys.version_info.major}.{sys.version_info.minor}"
    attempts = [base] + [
        base + ["--platform", platform, "--python-version", pyver, "--only-binary=:all:"]
        for platform in _FALLBACK_PLATFORMS
    ]
    for cmd in attempts:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise _unavailable(version, f"pip download timed out after {_PIP_TIMEOUT_S}s") from None
        wheels = sorted(dest.glob("torch_npu-*.whl"))
        if proc.returncode == 0 and wheels:
            return wheels[0]
        error = _pip_error(proc)
    raise _unavailable(version, f"pip: {error}")


def _pip_error(proc: subprocess.CompletedProcess) -> str:
    """The line of pip's output that says why it failed."""
    lines = [line.strip() for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    return (errors or lines or [f"exit status {proc.returncode}"])[-1]


def _wheel_version(wheel: Path) -> str:
    from packaging.utils import parse_wheel_filename

    return str(parse_wheel_filename(wheel.name)[1])


def _check_wheel(wheel: Path, version: str) -> None:
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    if not wheel.is_file():
        raise _unavailable(version, f"{wheel} does not exist")
    try:
        name, wheel_version, _, _ = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename:
        raise _unavailable(version, f"{wheel.name} is not a wheel file name") from None
    if name != "torch-npu":
        raise _unavailable(version, f"{wheel.name} is not a torch-npu wheel")
    if wheel_version.base_version != version:
        raise _unavailable(
            version,
            f"{wheel.name} is torch-npu {wheel_version} but the installed torch needs {version}",
        )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _extract(wheel: Path, staging: Path, version: str) -> list[str]:
    """Extract :data:`_EXTRACTED` minus native libraries (every ``.so`` there needs
    CANN, and leaving them out keeps an accidental import from loading one); return
    the names extracted."""
    prefix = "/".join(_DYNAMO) + "/"
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [
                m
                for m in zf.infolist()
                if m.filename.startswith(_EXTRACTED)
                and not m.is_dir()
                and not m.filename.endswith(".so")
            ]
            if prefix + "torchair/__init__.py" not in {m.filename for m in members}:
                raise _unavailable(version, f"{wheel.name} has no {prefix}torchair")
            for member in members:
                if ".." in Path(member.filename).parts:
                    raise _unavailable(
                        version, f"{wheel.name} has an unsafe path {member.filename}"
                    )
                zf.extract(member, staging)
    except zipfile.BadZipFile:
        raise _unavailable(version, f"{wheel.name} is not a valid zip archive") from None
    return [m.filename for m in members]


def _publish(staging: Path, entry: Path, scratch: Path, replace: bool) -> None:
    """Move a finished staging directory to ``entry`` with renames only, so a
    reader never sees a half-extracted cache. Unless ``replace``, a complete entry
    published meanwhile by a concurrent fetch (parallel test workers) is kept."""
    if entry.exists():
        if not replace and _read_marker(entry) is not None:
            return
        entry.rename(scratch / "previous")
    try:
        staging.rename(entry)
    except OSError:
        if _read_marker(entry) is None:
            raise


def fetch(force: bool = False) -> Path:
    """Make the offline TorchAir available and return the directory to put on
    ``sys.path`` (``.../torch_npu-<version>/torch_npu/dynamo``).

    An existing complete cache entry is reused unless ``force``, once it matches its
    manifest (:class:`CorruptCache` otherwise). A new entry is extracted from
    ``$OPSDK_TORCH_NPU_WHEEL`` when set, else from the wheel the entry keeps, else
    from a wheel ``pip download`` fetches.
    """
    version = expected_torch_npu_version()
    entry = _cache_entry(version)
    if not force and _read_marker(entry) is not None:
        _verify_once(entry)
        _ensure_bytecode(entry)
        return _dynamo_dir(entry)
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        _clean_stale_scratch(root)
        with _scratch(root) as scratch:
            wheel, origin = _wheel(version, entry, scratch)
            _check_wheel(wheel, version)
            staging = scratch / "staging"
            files = _extract(wheel, staging, version)
            shutil.copyfile(wheel, staging / wheel.name)
            meta = {
                "layout": _LAYOUT,
                "wheel": wheel.name,
                "version": _wheel_version(wheel),
                "sha256": _sha256(wheel),
                "origin": origin,
                "files": {name: _record(staging / name) for name in files},
            }
            (staging / _MARKER_FILE).write_text(json.dumps(meta))
            _publish(staging, entry, scratch, replace=force)
    except OSError as err:  # a full disk, a read-only or foreign directory: the machine's
        raise _cannot_write(root, err) from None
    _verify_once(entry)  # a concurrent fetch may have published its entry instead
    _ensure_bytecode(entry)
    return _dynamo_dir(entry)


# A fetch works in a scratch directory of the cache root named after its process and
# locked while it lives; a later fetch removes those whose process is gone, or that are
# older than any fetch lasts (opsdk before this layout named them without a process).
_SCRATCH = ".fetch-"
_STALE_SCRATCH_S = 3 * 3600


@contextlib.contextmanager
def _scratch(root: Path) -> Iterator[Path]:
    """A fresh scratch directory under ``root``, locked until it is removed on exit."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{_SCRATCH}{os.getpid()}-", dir=root))
    fd = os.open(scratch, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        os.close(fd)


def _clean_stale_scratch(root: Path) -> None:
    """Remove the scratch directories of fetches that died (a killed ``opsdk fetch-torchair``
    leaves its download): those no live fetch holds locked, whose process is gone or that
    are older than any fetch lasts. Best effort."""
    for scratch in root.glob(f"{_SCRATCH}*"):
        try:
            fd = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            pid, named, _ = scratch.name.removeprefix(_SCRATCH).partition("-")
            age = time.time() - os.fstat(fd).st_mtime
            if not _alive(int(pid) if named and pid.isdigit() else None) or age > _STALE_SCRATCH_S:
                shutil.rmtree(scratch, ignore_errors=True)
        except OSError:  # held by a live fetch (or no locks on this filesystem): kept
            pass
        finally:
            os.close(fd)


def _alive(pid: int | None) -> bool:
    """Whether process ``pid`` exists (None, an unknown one: assumed alive)."""
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _cannot_write(root: Path, err: OSError) -> TorchairUnavailable:
    """What a fetch that failed on a file says: which file, why, and how to get room."""
    name = err.filename and Path(err.filename)
    if name and not name.is_relative_to(root):  # the wheel $OPSDK_TORCH_NPU_WHEEL names
        return _unavailable(expected_torch_npu_version(), f"cannot read {name} ({err.strerror})")
    return TorchairUnavailable(
        f"cannot write the TorchAir cache directory {root} ({err.strerror}"
        f"{f': {name}' if name else ''}): make room or make it writable, or set "
        f"{ENV_CACHE_DIR} to a writable directory with 100 MB free"
    )


def _wheel(version: str, entry: Path, scratch: Path) -> tuple[Path, str]:
    """The wheel to extract and where it came from: ``$OPSDK_TORCH_NPU_WHEEL``, the
    wheel ``entry`` keeps when it is intact (a repair needs no network), or PyPI."""
    local = os.environ.get(ENV_WHEEL)
    if local:
        return Path(local).expanduser(), str(Path(local).expanduser().resolve())
    meta = _read_marker(entry)
    if meta is not None:
        kept = entry / meta["wheel"]
        if kept.is_file() and _sha256(kept) == meta["sha256"]:
            return kept, meta["origin"]
    return _pip_download(version, scratch / "download"), "pypi"


def _record(path: Path) -> list:
    """What the manifest keeps of a file: ``[size, mtime_ns, sha256]``."""
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, _sha256(path)]


def verify(deep: bool = False) -> None:
    """Raise :class:`CorruptCache` when files of this torch's offline cache entry are
    missing or differ from its manifest; nothing to check when it is not fetched.

    A file whose size and mtime are as recorded counts as intact unless ``deep``
    (every file hashed: what ``opsdk doctor`` and ``opsdk fetch-torchair`` do); one
    whose stat changed but whose hash did not gets its recorded mtime back, which keeps
    the bytecode compiled from it valid (Python would otherwise rewrite that ``.pyc``).
    A deleted ``.pyc`` is no damage (Python compiles the source): its kind of bytecode
    is compiled again (:func:`_ensure_bytecode`).
    """
    entry = _cache_entry(expected_torch_npu_version())
    meta = _read_marker(entry)
    if meta is None:
        return
    bad: list[str] = []
    gone: set[str] = set()
    for name, (size, mtime_ns, sha256) in meta["files"].items():
        path = entry / name
        try:
            stat = path.stat()
            if not deep and (stat.st_size, stat.st_mtime_ns) == (size, mtime_ns):
                continue
            if stat.st_size != size or _sha256(path) != sha256:
                bad.append(name)
            elif stat.st_mtime_ns != mtime_ns:
                _restore_mtime(path, stat.st_atime_ns, mtime_ns)
        except OSError as err:
            deleted_bytecode = isinstance(err, FileNotFoundError) and name.endswith(".pyc")
            (gone.add if deleted_bytecode else bad.append)(name)
    if bad:
        raise CorruptCache(entry, bad)
    if gone:
        files = {name: record for name, record in meta["files"].items() if name not in gone}
        bytecode = [
            kind
            for kind in meta.get("bytecode", [])
            if not any(name.endswith(f".{kind}") for name in gone)
        ]
        _write_marker(entry, {**meta, "files": files, "bytecode": bytecode})


def _restore_mtime(path: Path, atime_ns: int, mtime_ns: int) -> None:
    """Best effort: a cache that cannot be written has its file hashed on each use."""
    with contextlib.suppress(OSError):
        os.utime(path, ns=(atime_ns, mtime_ns))


_verified: set[Path] = set()


def _verify_once(entry: Path) -> None:
    """:func:`verify` ``entry`` once per process (about 0.03 s when nothing changed):
    what a run then imports is what the wheel holds."""
    if entry not in _verified:
        verify()
        _verified.add(entry)


def _ensure_bytecode(entry: Path) -> None:
    """Byte-compile the cached Python once per interpreter, as pip does on install, and
    add the ``.pyc`` files to the manifest.

    Otherwise every process that cannot write ``__pycache__`` (PYTHONDONTWRITEBYTECODE,
    a read-only CI cache) compiles TorchAir's sources again: 0.8 s of its 2.6 s import
    on 2 cores. The manifest covers the bytecode because Python checks only a ``.pyc``'s
    header (the source's mtime and size): one with a damaged body fails an import or runs
    stale code. Existing ``.pyc`` files are compiled again (``force``): their origin is
    unknown. Best effort: a cache that cannot be written still imports, only slower.
    The marker lists the kinds of bytecode (``cpython-311.pyc``, ``...opt-1.pyc``) the
    entry is compiled for; compiling under a lock keeps concurrent first uses from
    recording each other's files.
    """
    if sys.implementation.cache_tag is None or not os.access(entry, os.W_OK):
        return
    kind = Path(importlib.util.cache_from_source("m.py")).name.removeprefix("m.")
    meta = _read_marker(entry)
    if meta is None or kind in meta.get("bytecode", []):
        return
    with _locked(entry):
        meta = _read_marker(entry)
        if meta is None or kind in meta.get("bytecode", []):
            return
        compileall.compile_dir(entry / _DYNAMO[0], quiet=2, force=True)
        compiled = {}
        for name in (n for n in meta["files"] if n.endswith(".py")):
            pyc = Path(importlib.util.cache_from_source(str(entry / name)))
            if pyc.is_relative_to(entry) and pyc.is_file():  # not under sys.pycache_prefix
                compiled[pyc.relative_to(entry).as_posix()] = _record(pyc)
        bytecode = sorted({*meta.get("bytecode", []), kind})
        _write_marker(entry, {**meta, "files": {**meta["files"], **compiled}, "bytecode": bytecode})


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` itself (no lock file left in the entry)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write_marker(entry: Path, meta: dict) -> None:
    """Replace the marker of a published entry atomically; best effort."""
    scratch = entry / f".{_MARKER_FILE}.{uuid.uuid4().hex}"  # unique per writer
    try:
        scratch.write_text(json.dumps(meta))
        scratch.replace(entry / _MARKER_FILE)
    except OSError:
        scratch.unlink(missing_ok=True)
