"""`opsdk audit` on a library that takes graph mode through npugraph_ex only (no
converter): its npugraph_ex check, capture and replay with the fake as the kernel, one
planted mistake per finding next to its correct twin, and no converter column."""

import pytest

# good/upd: the correct twins (a new tensor; a declared write, kept on every replay).
LIBRARY = """
import torch

_lib = torch.library.Library("npx", "DEF")
_lib.define("good(Tensor x) -> Tensor")
_lib.define("upd(Tensor(a!) x, Tensor y) -> ()")
_lib.define("item(Tensor x, Tensor n) -> Tensor")
_lib.define("lens(Tensor x, SymInt[] seq_lens) -> Tensor")
_lib.define("ret_(Tensor(a!) x, Tensor y) -> Tensor(a!)")


@torch.library.register_fake("npx::good", lib=_lib)
def _good(x):
    return torch.empty_like(x)


@torch.library.register_fake("npx::upd", lib=_lib)
def _upd(x, y):
    return None


@torch.library.register_fake("npx::item", lib=_lib)
def _item(x, n):
    return x.new_empty(int(n.sum().item()))  # a host read


@torch.library.register_fake("npx::lens", lib=_lib)
def _lens(x, seq_lens):
    return torch.empty_like(x)


@torch.library.register_fake("npx::ret_", lib=_lib)
def _ret(x, y):
    return x
"""


@pytest.fixture(scope="module")
def audited(opsdk_cli_module, tmp_path_factory):
    folder = tmp_path_factory.mktemp("npx")
    (folder / "npx_ops.py").write_text(LIBRARY)
    return opsdk_cli_module(
        "audit", folder / "npx_ops.py", "--shapes", "static", "--no-cache", json_report=True
    )


def _cell(run, op: str, check: str) -> dict:
    [cell] = run.cells(op=f"npx::{op}", column=check)
    return cell


def test_the_correct_twins_capture_once_and_replay_keeping_their_writes(audited):
    assert _cell(audited, "good", "npugraph_ex")["status"] == "pass"
    assert _cell(audited, "upd", "npugraph_ex")["status"] == "pass"
    lens = _cell(audited, "lens", "npugraph_ex")
    assert (
        lens["status"] == "pass" and "host argument seq_lens (SymInt[]) changes" in lens["message"]
    )


def test_a_host_read_in_the_fake_and_an_alias_return_are_findings(audited):
    item = _cell(audited, "item", "npugraph_ex")
    assert (item["status"], item["layer"]) == ("fail", "capture")
    line = LIBRARY.splitlines().index('@torch.library.register_fake("npx::item", lib=_lib)') + 1
    assert f"npx_ops.py:{line}) reads a tensor's value on the host" in item["message"]
    ret = _cell(audited, "ret_", "npugraph_ex")
    assert (ret["status"], ret["layer"]) == ("fail", "aot")
    assert "output has alias annotations" in ret["message"]


def test_without_converters_the_converter_column_is_said_once_and_torchair_is_quiet(audited):
    assert audited.code == 1
    assert not audited.cells(column="converter")
    line = "converter: not laid out: no op of npx_ops has a TorchAir converter"
    assert audited.stdout.count(line) == 1
    assert "ASCEND_HOME_PATH" not in audited.stdout + audited.stderr


def test_compiling_checks_build_guards_without_timing_them(tmp_path, monkeypatch):
    """Dynamo times each guard set it builds (a cache flush first: a third of a one-op
    compile) for a metric no check reads; the audit's cells skip it, as opsdk check's."""
    import torch._dynamo.guards as guards

    from opsdk.audit import library as audit_library
    from opsdk.audit import matrix

    module = tmp_path / "npx_timed.py"
    module.write_text(LIBRARY.replace('"npx', '"npx_timed'))
    library = audit_library.load(str(module))
    cells = [
        c for c in matrix.cells(library, ["fake", "npugraph_ex"], ["static"]) if "good" in c.op.name
    ]
    timed = []
    monkeypatch.setattr(guards, "profile_guard_manager", lambda *a: timed.append(a) or 0.0)
    results = matrix.run(library, cells)
    assert [r.status for r in results] == ["pass", "pass"], [r.describe() for r in results]
    assert not timed


def test_the_torch_npu_stand_in_is_found_as_an_installed_package():
    """A library asks ``importlib.util.find_spec("torch_npu")`` whether it runs on an NPU
    (sgl-kernel-npu's attentions): the stand-in answers as an installed torch_npu does."""
    import importlib.util

    from opsdk.offline.torchair import import_torchair_stack

    import_torchair_stack()
    spec = importlib.util.find_spec("torch_npu")
    assert spec is not None and spec.submodule_search_locations
    assert importlib.util.find_spec("torch_npu.utils").name == "torch_npu.utils"
