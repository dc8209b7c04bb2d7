"""The offline TorchAir cache (:mod:`opsdk._runtime.locator`), built from a small fake
torch-npu wheel: what it keeps, its manifest checked on use, by ``opsdk doctor`` and by
``opsdk fetch-torchair`` (which repairs it), and what it says when it cannot be built."""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import json
import marshal
import os
import sys
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from opsdk import cli
from opsdk._runtime import locator
from opsdk.errors import SetupError

VERSION = locator.expected_torch_npu_version()
TORCHAIR_INIT = "torch_npu/dynamo/torchair/__init__.py"
NPUGRAPH_EX_INIT = "torch_npu/dynamo/npugraph_ex/__init__.py"
META = "torch_npu/op_plugin/meta/_meta_registrations.py"
PYTHON = (TORCHAIR_INIT, NPUGRAPH_EX_INIT, META)  # the Python the cache keeps
BYTECODE = Path(importlib.util.cache_from_source("m.py")).name.partition(".")[2]
_OUT = {"capture_output": True, "text": True, "check": True}


def _fake_wheel(directory, version=VERSION):
    """A wheel shaped like torch-npu's: the dynamo tree, a native library, other packages."""
    wheel = directory / f"torch_npu-{version}-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch_npu/__init__.py", "raise ImportError('needs CANN')\n")
        zf.writestr(TORCHAIR_INIT, "MARK = 'fake torchair'\n")
        zf.writestr("torch_npu/dynamo/torchair/core/_torchair.so", b"\x7fELF")
        zf.writestr(NPUGRAPH_EX_INIT, "")
        zf.writestr("torch_npu/include/acl/acl_base.h", "#pragma once\n")
        zf.writestr(META, "META = 1\n")
        zf.writestr("torch_npu/op_plugin/ops/other.py", "")
        zf.writestr(f"torch_npu-{version}.dist-info/METADATA", "Name: torch-npu\n")
    return wheel


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory; each test is a fresh process to the once-per-process check."""
    root = tmp_path / "cache"
    monkeypatch.setenv(locator.ENV_CACHE_DIR, str(root))
    monkeypatch.delenv(locator.ENV_WHEEL, raising=False)
    monkeypatch.setattr(locator, "_verified", set())
    return root


@pytest.fixture
def fetched(cache, tmp_path, monkeypatch):
    """A cache entry built from the fake wheel, which is then gone: a repair can use only
    the wheel the entry keeps (a download would fail the test)."""
    monkeypatch.setenv(locator.ENV_WHEEL, str(_fake_wheel(tmp_path)))
    locator.fetch()
    monkeypatch.delenv(locator.ENV_WHEEL)
    monkeypatch.setattr(locator, "_pip_download", _no_download)
    monkeypatch.setattr(locator, "_verified", set())  # the next fetch is a new process's
    return cache / f"torch_npu-{VERSION}"


def _no_download(version, dest):
    raise AssertionError("the cache should have been rebuilt from the wheel it keeps")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:5])


def _pyc(name: str) -> Path:
    return Path(importlib.util.cache_from_source(name))


def test_fetch_extracts_only_the_python_dynamo_tree(cache, tmp_path, monkeypatch):
    wheel = _fake_wheel(tmp_path)
    monkeypatch.setenv(locator.ENV_WHEEL, str(wheel))
    assert not locator.locate().fetched
    path = locator.fetch()
    entry = cache / f"torch_npu-{VERSION}"
    assert path == entry / "torch_npu" / "dynamo"
    assert (path / "torchair" / "__init__.py").read_text() == "MARK = 'fake torchair'\n"
    assert (path / "npugraph_ex" / "__init__.py").is_file()
    assert not (path / "torchair" / "core" / "_torchair.so").exists()
    assert not (entry / "torch_npu" / "__init__.py").exists()
    assert locator.torch_npu_file("include/acl/acl_base.h").read_text() == "#pragma once\n"
    assert locator.torch_npu_file("op_plugin/meta/_meta_registrations.py").is_file()
    assert not (entry / "torch_npu" / "op_plugin" / "ops").exists()
    with pytest.raises(ValueError, match="not among the files opsdk keeps"):
        locator.torch_npu_file("op_plugin/ops/other.py")
    meta = json.loads((entry / "opsdk-torchair.json").read_text())
    assert meta["wheel"] == wheel.name and meta["version"] == VERSION
    assert meta["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert (entry / wheel.name).read_bytes() == wheel.read_bytes()  # kept for repairs
    init = entry / TORCHAIR_INIT
    assert meta["files"][TORCHAIR_INIT] == [
        init.stat().st_size,
        init.stat().st_mtime_ns,
        hashlib.sha256(init.read_bytes()).hexdigest(),
    ]
    extracted = {TORCHAIR_INIT, NPUGRAPH_EX_INIT, META, "torch_npu/include/acl/acl_base.h"}
    compiled = {_pyc(name).as_posix() for name in PYTHON}  # and the bytecode of its Python
    assert set(meta["files"]) == extracted | compiled  # every file kept, and only those
    assert [p.name for p in cache.iterdir()] == [entry.name]  # no staging left behind
    info = locator.locate()
    assert info.fetched and info.source == wheel.name and info.path == path


def test_a_cache_entry_of_an_older_layout_is_fetched_again(fetched, tmp_path, monkeypatch):
    monkeypatch.setenv(locator.ENV_WHEEL, str(_fake_wheel(tmp_path)))
    marker = fetched / "opsdk-torchair.json"
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "layout": 1}))
    (fetched / "torch_npu" / "include" / "acl" / "acl_base.h").unlink()
    assert not locator.locate().fetched
    locator.fetch()
    assert (fetched / "torch_npu" / "include" / "acl" / "acl_base.h").is_file()


def test_fetch_reuses_an_intact_cache_unless_forced(fetched):
    extra = fetched / "torch_npu" / "dynamo" / "left_by_a_user.txt"
    extra.write_text("")  # a file the manifest does not list is no damage
    assert locator.fetch() == fetched / "torch_npu" / "dynamo"
    assert extra.exists()
    locator.fetch(force=True)
    assert not extra.exists()


def test_fetch_byte_compiles_the_kept_python_once(fetched):
    """Processes that cannot write __pycache__ still import TorchAir (and torch_npu's own
    Python outside dynamo/) from bytecode; deleted bytecode is no damage (Python compiles
    the source): it is compiled again on the next use, and recorded again."""
    marker = fetched / "opsdk-torchair.json"
    pycs = [fetched / _pyc(name) for name in (TORCHAIR_INIT, META)]
    assert all(pyc.is_file() for pyc in pycs)
    assert json.loads(marker.read_text())["bytecode"] == [BYTECODE]
    for pyc in pycs:
        pyc.unlink()
    locator.verify(deep=True)
    locator.fetch()
    assert all(pyc.is_file() for pyc in pycs)
    assert json.loads(marker.read_text())["bytecode"] == [BYTECODE]
    locator.verify(deep=True)
    assert _pyc(TORCHAIR_INIT).as_posix() in json.loads(marker.read_text())["files"]
    assert not [p.name for p in fetched.iterdir() if p.name.startswith(".")]  # no scratch left


def test_wheel_of_another_version_is_refused(cache, tmp_path, monkeypatch):
    monkeypatch.setenv(locator.ENV_WHEEL, str(_fake_wheel(tmp_path, "2.1.0")))
    with pytest.raises(locator.TorchairUnavailable, match="is torch-npu 2.1.0") as err:
        locator.fetch()
    assert "\n" not in str(err.value)
    assert not (cache / f"torch_npu-{VERSION}").exists()


@pytest.mark.parametrize("damage", ["truncated", "deleted"])
def test_a_damaged_cache_is_a_setup_error_naming_the_file_and_the_fix(fetched, damage):
    init = fetched / TORCHAIR_INIT
    _truncate(init) if damage == "truncated" else init.unlink()
    with pytest.raises(SetupError) as err:
        locator.fetch()
    assert str(err.value) == (f"the TorchAir cache is corrupt: {init} (fix: opsdk fetch-torchair)")


def test_the_cache_is_checked_once_per_process(fetched):
    locator.fetch()
    _truncate(fetched / TORCHAIR_INIT)
    locator.fetch()  # what this process imports was checked already


def test_a_touched_file_is_hashed_once_and_gets_its_mtime_back(fetched):
    """A copy that kept contents but not mtimes costs one hash per file, not one per run,
    and the bytecode stays valid: Python checks a .pyc against its source's mtime, and
    would otherwise write a new one, which the manifest would then call corrupt."""
    marker = fetched / "opsdk-torchair.json"
    init = fetched / TORCHAIR_INIT
    recorded = json.loads(marker.read_text())["files"][TORCHAIR_INIT][1]
    os.utime(init, ns=(1, 1))
    locator.verify()
    assert init.stat().st_mtime_ns == recorded
    pyc = (fetched / _pyc(TORCHAIR_INIT)).read_bytes()
    assert int.from_bytes(pyc[8:12], "little") == recorded // 10**9  # the header matches


def test_only_the_deep_check_sees_a_change_that_kept_size_and_mtime(fetched):
    """The on-use check trusts size and mtime (0.03 s, not 0.1-0.3 s for hashing every
    file); doctor and fetch-torchair hash every file."""
    init = fetched / TORCHAIR_INIT
    stat = init.stat()
    init.write_text(init.read_text().upper())
    os.utime(init, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    locator.verify()
    with pytest.raises(locator.CorruptCache, match="__init__.py"):
        locator.verify(deep=True)


@pytest.mark.parametrize(
    "torch", ["2.13.0+cpu", "2.13.0", "2.13.0rc1", "2.13.0.dev20260101+cu128", "2.13.0.post1"]
)
def test_the_torch_npu_version_is_torchs_release_read_without_packaging(monkeypatch, torch):
    """`packaging`'s base version, without `packaging`: `opsdk doctor` runs with torch alone."""
    from packaging.version import Version

    from opsdk import _versions

    monkeypatch.setattr(_versions, "torch_version", lambda: torch)
    assert locator.expected_torch_npu_version() == Version(torch).base_version


def test_doctor_says_the_cache_is_corrupt_and_fails(fetched, capsys):
    assert cli.main(["doctor"]) == 0
    assert capsys.readouterr().out.endswith("TorchAir cache: verified\n")
    _truncate(fetched / TORCHAIR_INIT)
    assert cli.main(["doctor"]) == 1
    assert capsys.readouterr().out.endswith(
        f"TorchAir cache: corrupt: {fetched / TORCHAIR_INIT} (fix: opsdk fetch-torchair)\n"
    )


def test_fetch_torchair_repairs_a_corrupt_cache_from_the_wheel_it_keeps(fetched, capsys):
    init = fetched / TORCHAIR_INIT
    text = init.read_text()
    _truncate(init)
    assert cli.main(["fetch-torchair"]) == 0
    out = capsys.readouterr().out
    assert f"repaired the TorchAir cache (was corrupt: {init})" in out
    assert init.read_text() == text
    locator.verify(deep=True)


def test_a_damaged_kept_wheel_is_downloaded_again(fetched, tmp_path, monkeypatch):
    meta = json.loads((fetched / "opsdk-torchair.json").read_text())
    _truncate(fetched / meta["wheel"])
    _truncate(fetched / TORCHAIR_INIT)
    downloads = []

    def download(version, dest):
        downloads.append(version)
        dest.mkdir(parents=True)
        return _fake_wheel(dest)

    monkeypatch.setattr(locator, "_pip_download", download)
    assert cli.main(["fetch-torchair"]) == 0
    assert downloads == [VERSION]
    locator.verify(deep=True)
    assert json.loads((fetched / "opsdk-torchair.json").read_text())["origin"] == "pypi"


def test_an_unwritable_cache_directory_is_named_with_its_fix(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    root = tmp_path / "file" / "cache"  # even root cannot create it
    monkeypatch.setenv(locator.ENV_CACHE_DIR, str(root))
    with pytest.raises(locator.TorchairUnavailable) as err:
        locator.fetch()
    message = str(err.value)
    assert f"cannot write the TorchAir cache directory {root}" in message
    assert locator.ENV_CACHE_DIR in message and locator.ENV_WHEEL not in message
    assert "\n" not in message


def test_a_fetch_keeps_the_entry_a_concurrent_fetch_published(cache, tmp_path, monkeypatch):
    """Parallel test workers fetch at once: each builds aside, and the one that publishes
    second keeps the first one's entry, which the other may be importing from."""
    monkeypatch.setenv(locator.ENV_WHEEL, str(_fake_wheel(tmp_path)))
    extract = locator._extract
    entry = cache / f"torch_npu-{VERSION}"

    def extract_while_another_worker_publishes(*args):
        names = extract(*args)
        monkeypatch.setattr(locator, "_extract", extract)
        locator.fetch()  # the other worker, done first
        (entry / "in-use").write_text("")
        return names

    monkeypatch.setattr(locator, "_extract", extract_while_another_worker_publishes)
    assert locator.fetch() == entry / "torch_npu" / "dynamo"
    assert (entry / "in-use").exists()
    assert sorted(p.name for p in cache.iterdir()) == [entry.name]
    locator.verify(deep=True)


def _stale_pyc(fetched) -> Path:
    """torchair's .pyc with its header intact (Python accepts it for the source) and the
    body of other code: what a damaged or half-restored cache can hold."""
    pyc = fetched / _pyc(TORCHAIR_INIT)
    stale = compile("MARK = 'stale code'\n", str(fetched / TORCHAIR_INIT), "exec")
    pyc.write_bytes(pyc.read_bytes()[:16] + marshal.dumps(stale))
    return pyc


def _import_torchair(path: Path, monkeypatch) -> str:
    """What the cached torchair's code says, imported as Python would (bytecode first);
    the module is gone again afterwards (a later test in this process imports the real one)."""
    monkeypatch.syspath_prepend(str(path))
    previous = sys.modules.pop("torchair", None)
    try:
        import torchair

        return torchair.MARK
    finally:
        sys.modules.pop("torchair", None)
        if previous is not None:
            sys.modules["torchair"] = previous


def test_a_stale_pyc_is_a_setup_error_before_anything_runs_it(fetched, monkeypatch):
    pyc = _stale_pyc(fetched)
    with pytest.raises(SetupError) as err:
        locator.fetch()
    assert str(err.value) == f"the TorchAir cache is corrupt: {pyc} (fix: opsdk fetch-torchair)"
    monkeypatch.setattr(locator, "_verified", set())
    assert cli.main(["fetch-torchair"]) == 0
    assert _import_torchair(locator.fetch(), monkeypatch) == "fake torchair"


def test_doctor_names_a_damaged_pyc_that_kept_size_and_mtime(fetched, capsys):
    pyc = fetched / _pyc(TORCHAIR_INIT)
    stat = pyc.stat()
    pyc.write_bytes(pyc.read_bytes()[:16] + b"\0" * (stat.st_size - 16))  # garbage body
    os.utime(pyc, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cli.main(["doctor"]) == 1
    assert capsys.readouterr().out.endswith(
        f"TorchAir cache: corrupt: {pyc} (fix: opsdk fetch-torchair)\n"
    )
    assert cli.main(["fetch-torchair"]) == 0
    assert f"(was corrupt: {pyc})" in capsys.readouterr().out
    locator.verify(deep=True)


def test_bytecode_of_an_entry_compiled_before_the_manifest_kept_it_is_compiled_again(
    fetched, monkeypatch
):
    """An entry whose .pyc files are not in its manifest (an opsdk that kept only the
    sources compiled it) does not trust them: they are compiled again and recorded."""
    marker = fetched / "opsdk-torchair.json"
    meta = json.loads(marker.read_text())
    meta["files"] = {name: rec for name, rec in meta["files"].items() if not name.endswith(".pyc")}
    meta["bytecode"] = [sys.implementation.cache_tag]  # what such an entry's marker says
    marker.write_text(json.dumps(meta))
    _stale_pyc(fetched)
    assert _import_torchair(locator.fetch(), monkeypatch) == "fake torchair"
    assert json.loads(marker.read_text())["bytecode"] == [sys.implementation.cache_tag, BYTECODE]
    locator.verify(deep=True)


def test_a_full_disk_while_fetching_is_a_setup_error_that_leaves_nothing(
    cache, tmp_path, monkeypatch
):
    """ENOSPC while extracting the wheel is the machine's failure (a SetupError: layer
    ``setup`` in a cell, never cached, never the op's), in one line with its fix."""
    monkeypatch.setenv(locator.ENV_WHEEL, str(_fake_wheel(tmp_path)))

    def full(wheel, staging, version):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(staging / TORCHAIR_INIT))

    monkeypatch.setattr(locator, "_extract", full)
    with pytest.raises(locator.TorchairUnavailable) as err:
        locator.fetch()
    message = str(err.value)
    assert message.startswith(f"cannot write the TorchAir cache directory {cache} (No space")
    assert locator.ENV_CACHE_DIR in message and "\n" not in message
    assert list(cache.iterdir()) == []  # no staging left behind


def test_a_fetch_removes_the_scratch_of_fetches_that_died_and_only_those(
    cache, tmp_path, monkeypatch, dead_pid
):
    """A killed `opsdk fetch-torchair` leaves its download in a ``.fetch-*`` directory: the
    next fetch removes those whose process is gone, or that are older than a fetch lasts
    (an older opsdk's, named without a process); never one a live fetch holds."""
    cache.mkdir()
    gone = cache / f".fetch-{dead_pid}-killed"
    old = cache / ".fetch-olderopsdk"
    recent = cache / ".fetch-anotherone"
    unlocked = cache / f".fetch-{os.getppid()}-reused"  # a live process, not fetching
    for scratch in (gone, old, recent, unlocked):
        (scratch / "download").mkdir(parents=True)
        (scratch / "download" / "torch_npu.whl").write_bytes(b"\0" * 1000)
    day_ago = time.time() - 24 * 3600
    os.utime(old, (day_ago, day_ago))
    monkeypatch.setenv(locator.ENV_WHEEL, str(_fake_wheel(tmp_path)))
    with locator._scratch(cache) as live:  # another process's fetch, under way
        locator.fetch()
        left = {p.name for p in cache.glob(".fetch-*")}
        assert left == {recent.name, unlocked.name, live.name}
    assert {p.name for p in cache.glob(".fetch-*")} == {recent.name, unlocked.name}


def test_the_caches_are_in_the_users_cache_directory_never_under_an_empty_home(
    tmp_path, monkeypatch
):
    """HOME='' put the TorchAir cache in /.cache/opsdk (and torch's default for the op
    libraries --style cpp builds in /.cache/torch_extensions)."""
    from opsdk._runtime import cpp_build

    monkeypatch.delenv(locator.ENV_CACHE_DIR, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    registered = tmp_path / "home"
    entry = SimpleNamespace(pw_dir=str(registered))
    monkeypatch.setattr(locator.pwd, "getpwuid", lambda uid: entry)
    monkeypatch.setenv("HOME", str(tmp_path / "set"))
    assert locator.cache_root() == tmp_path / "set" / ".cache" / "opsdk"
    for home in ("", "/", "relative"):
        monkeypatch.setenv("HOME", home)
        assert locator.cache_root() == registered / ".cache" / "opsdk"
        assert cpp_build.build_root() == registered / ".cache" / "torch_extensions" / "opsdk"
    entry.pw_dir = "/"
    assert locator.user_cache_dir() == tmp_path / ".opsdk-cache"  # no home at all
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not absolute: ignored (XDG)
    assert locator.user_cache_dir() == tmp_path / ".opsdk-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert locator.cache_root() == tmp_path / "xdg" / "opsdk"
    monkeypatch.setenv(locator.ENV_CACHE_DIR, str(tmp_path / "mine"))
    assert locator.cache_root() == tmp_path / "mine"


def test_a_report_describes_torchair_without_importing_or_fetching_it(cache, monkeypatch):
    """The report writer runs after the cells, whatever they met (a full disk, no network):
    it says where TorchAir and npugraph_ex are, or that they are not fetched."""
    from opsdk import report
    from opsdk.offline import torchair as bringup

    def refused(*args, **kwargs):
        raise AssertionError("a report must not import or fetch TorchAir")

    monkeypatch.setattr(locator, "fetch", refused)
    monkeypatch.setattr(bringup, "import_npugraph_ex", refused)
    environment = report.environment({"eager", "ge", "npugraph_ex", "fusion"})
    dynamo = cache / f"torch_npu-{VERSION}" / "torch_npu" / "dynamo"
    assert environment["torchair"] == f"offline (not fetched) at {dynamo}"
    assert environment["npugraph_ex"] == f"not fetched ({dynamo / 'npugraph_ex' / '__init__.py'})"
    assert environment["npugraph_ex_runs_on"] == "opsdk capture stand-in"
