"""Reading a library's C++ registrations from text (opsdk.audit.repository.scan) and
which arguments its kernels' aclnn calls write (opsdk.audit.repository.writes): no
compiler, files written here."""

from pathlib import Path

from opsdk.audit.repository import scan, writes

WRAPPED = """
#include "utils.h"
// ops.def("commented(Tensor x) -> Tensor");
/* ops.def("blocked(Tensor x) -> Tensor"); */
#ifdef EXTRA_OPS
TORCH_LIBRARY_EXPAND(CONCAT(_C, _lib), ops)
{
    ops.def("extra(Tensor x) -> Tensor");
}
#else
TORCH_LIBRARY_EXPAND(CONCAT(_C, _lib), ops)
{
    ops.def(
        "joined(Tensor x, "
        "       str mode=\\"a\\") -> Tensor");
    ops.impl("joined", torch::kPrivateUse1, &lib::joined);
    ops.impl("joined", c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(lib::joined));
#if defined(EXTRA_OPS) || 0
    ops.def("also_extra(Tensor x) -> Tensor");
#endif
}
#endif
"""
UTILS = """
#pragma once
#define _CONCAT(A, B) A##B
#define CONCAT(A, B) _CONCAT(A, B)
#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
"""
META = """
TORCH_LIBRARY_IMPL(_C_lib, Meta, m) {
    m.impl("joined_pre", &meta::joined_meta);
}
"""


def _library(tmp_path: Path) -> Path:
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "binding.cpp").write_text(WRAPPED)
    (tmp_path / "csrc" / "utils.h").write_text(UTILS)
    (tmp_path / "csrc" / "meta.cpp").write_text(META)
    return tmp_path


def test_schemas_through_the_projects_macros_in_the_builds_branches(tmp_path):
    root = _library(tmp_path)
    found = scan.read(root)
    assert [(s.namespace, s.text, s.line) for s in found.schemas] == [
        ("_C_lib", 'joined(Tensor x, str mode="a") -> Tensor', 14)
    ]
    keys = [(r.name, r.key, r.function, r.line) for r in found.registrations]
    assert keys == [
        ("joined", "PrivateUse1", "joined", 16),
        ("joined", "CompositeExplicitAutograd", "joined", 17),
        ("joined_pre", "Meta", "joined_meta", 3),
    ]
    extra = scan.read(root, {"EXTRA_OPS": "1"})
    assert sorted(s.name for s in extra.schemas) == ["extra"]


def test_an_unevaluable_condition_is_false_and_an_include_guard_is_kept(tmp_path):
    (tmp_path / "a.h").write_text(
        "#ifndef A_H\n#define A_H\n#if __has_include(<x.h>)\nTORCH_LIBRARY(n, m) {\n"
        '  m.def("hidden() -> ()");\n}\n#endif\nTORCH_LIBRARY_FRAGMENT(n, m) {\n'
        '  m.def("seen() -> ()", [](){});\n}\n#endif\n'
    )
    [seen] = scan.read(tmp_path).schemas
    assert (seen.name, seen.kernel) == ("seen", "<lambda>")


KERNEL = """
void store(const at::Tensor &x, const at::Tensor &cache, int64_t n)
{
    EXEC_NPU_CMD(aclnnStore, x, n, cache);
}
void meta_only(const at::Tensor &x, at::Tensor &y)
{
    EXEC_NPU_CMD(aclnnUnknown, x, y);
}
void by_hand(const at::Tensor &x, at::Tensor &y)
{
    EXEC_NPU_CMD(aclnnByHand, y, x);
}
"""
OPDEF = """
class Store : public OpDef {
    explicit Store(const char *name) : OpDef(name) {
        this->Input("x");
        this->Attr("n").Int();
        this->Output("cache");
    }
};
OP_ADD(Store);
"""
ACLNN = """
aclnnStatus aclnnByHandGetWorkspaceSize(const aclTensor *out, const aclTensor *in,
                                        uint64_t *workspaceSize, aclOpExecutor **executor)
{
    L2_DFX_PHASE_1(aclnnByHand, DFX_IN(in), DFX_OUT(out));
}
"""


def test_writes_by_opbuilds_order_or_the_aclnns_dfx_out_and_none_when_undefined(tmp_path):
    (tmp_path / "kernel.cpp").write_text(KERNEL)
    (tmp_path / "store_def.cpp").write_text(OPDEF)
    (tmp_path / "aclnn_by_hand.cpp").write_text(ACLNN)
    found = scan.read(tmp_path)
    [store] = writes.written(found, "store")
    assert (store.index, store.param, store.line) == (1, "cache", 4)
    assert store.rule_path.name == "store_def.cpp" and store.rule_line == 2
    assert writes.written(found, "meta_only") == []
    [by_hand] = writes.written(found, "by_hand")
    assert (by_hand.index, by_hand.param) == (1, "y") and "DFX_OUT" in by_hand.rule


def test_a_string_continued_by_backslash_newline_is_one_schema(tmp_path):
    (tmp_path / "r.cpp").write_text(
        'TORCH_LIBRARY(n, m) {\n    m.def("la(Tensor q, \\\n        Tensor k) -> Tensor");\n}\n'
    )
    [la] = scan.read(tmp_path).schemas
    assert (la.text, la.line) == ("la(Tensor q, Tensor k) -> Tensor", 2)


def test_lines_a_branch_leaves_out_keep_the_lines_after_them_in_place(tmp_path):
    """A left-out line continued by backslash-newline, a directive's and a plain one's,
    still counts its lines: a schema after them is named at its own line."""
    (tmp_path / "r.cpp").write_text(
        "#if 0\n#define X a \\\n  b\nint y = 1 + \\\n  2; // #x\n#endif\n"
        'TORCH_LIBRARY(n, m) {\n    m.def("after(Tensor x) -> Tensor");\n}\n'
    )
    [after] = scan.read(tmp_path).schemas
    assert (after.name, after.line) == ("after", 8)


def test_a_module_that_did_not_import_leaves_unchecked_only_the_ops_it_registers():
    """sgl-kernel-npu's attentions/lib.py names ``"la"`` in docstrings only: ``la``'s
    missing fake is a finding, not hidden behind the module's failed import; an op the
    module registers in a call (a decorator, ``lib.impl``, a schema) is not checked."""
    from types import SimpleNamespace

    from opsdk.audit import repository

    failed = {
        "lib.py: not imported": '"""Runs "la" on the npu."""\n'
        "@torch.library.register_fake('attn::ra')\ndef ra(x): ...\n"
        'lib.define("sa(Tensor x) -> Tensor")\n'
        "# see 'la'\n",
        "broken.py: not imported": "def f(:\n    impl('ta', kernel)\n",
    }

    def op(name):
        return SimpleNamespace(_schema=SimpleNamespace(name=f"attn::{name}"))

    assert repository._unimported(failed, op("la")) == ""
    for registered in ("ra", "sa"):
        assert repository._unimported(failed, op(registered)) == "lib.py: not imported"
    assert repository._unimported(failed, op("ta")) == "broken.py: not imported"


def test_an_op_whose_call_torch_compile_drops_is_one_finding_and_its_traces_not_audited():
    """vllm-ascend's store_kv_block (``Tensor key_cache_in ... -> ()``, a Meta returning
    nothing): the call leaves an empty graph, which npugraph_ex replays at the first
    shape's sizes for every shape ("The size of tensor a (3) must match ... (7)"): the
    fake and npugraph_ex cells check nothing of it, and say whose finding it is."""
    from types import SimpleNamespace

    import pytest
    import torch

    from opsdk.audit import repository
    from opsdk.audit.checks import Undecided, fake
    from opsdk.audit.model import AuditOp, Source

    lib = torch.library.Library("t_dropped", "FRAGMENT")
    lib.define("touch(Tensor x, Tensor cache) -> ()")
    lib.define("store(Tensor x, Tensor(a!) cache) -> ()")
    lib.define("bare(Tensor x, Tensor cache) -> ()")  # no Meta either: marking writes fakes it
    for name in ("touch", "store"):
        torch.library.register_fake(f"t_dropped::{name}", lambda x, cache: None, lib=lib)
    registry = SimpleNamespace(registrations=[], schemas=[])
    found = {}
    for name in ("touch", "store", "bare"):
        op = getattr(torch.ops.t_dropped, name).default
        audit_op = AuditOp(op, f"t_dropped::{name}", None, None)
        audit_op.schema_at = Source("csrc/binding.cpp", 7)
        found[name] = (repository._findings(registry, op, audit_op, None, {}), audit_op)
    [finding], touch = found["touch"]
    assert "(csrc/binding.cpp:7) marks no argument written: torch.compile drops" in finding
    with pytest.raises(Undecided, match="drops its call.*the registry check's finding"):
        fake.check_has_fake(touch)
    assert found["store"][0] == [] and found["store"][1].untraceable == ""  # (a!): kept
    [bare], _ = found["bare"]  # one fix, not two: no "register a Meta" beside it
    assert "drops" in bare and "it needs no Meta" in bare and "has no Meta" not in bare
    # vllm-ascend's store_kv_block_metadata: a Meta registered as store_kv_block_pre (no
    # schema's) is not asked to be renamed beside the (a!) fix: marking alone is the fix
    lib.define("keep(Tensor x, Tensor cache) -> ()")
    stray = SimpleNamespace(
        key="Meta", namespace="t_dropped", name="keep_pre", path="m.cpp", line=3
    )
    registry = SimpleNamespace(registrations=[stray], schemas=[])
    op = torch.ops.t_dropped.keep.default
    audit_op = AuditOp(op, "t_dropped::keep", None, None)
    [keep] = repository._findings(registry, op, audit_op, lambda p, n: Source(p, n), {})
    assert "has no Meta" not in keep and "name it" not in keep
    assert "it needs no Meta; the Meta registered for 'keep_pre' (m.cpp:3) is not needed" in keep
    # vllm-ascend's store_kv_block has a Meta of its own: the stray one is not its
    own = SimpleNamespace(key="Meta", namespace="t_dropped", name="keep", path="m.cpp", line=4)
    registry = SimpleNamespace(registrations=[stray, own], schemas=[])
    [keep] = repository._findings(registry, op, audit_op, lambda p, n: Source(p, n), {})
    assert keep.endswith("it needs no Meta)")


def test_a_symbol_a_meta_file_misses_is_said_with_the_file_defining_it(tmp_path):
    """MC2's InferShape called a helper of another source file: the Meta file's line names
    where the repository defines it (its one definition), not only that it is missing."""
    from opsdk.audit import repository

    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "meta.cpp").write_text(
        "int rank_of(int dims);\nint r() { return rank_of(2); }\n"
    )
    (tmp_path / "csrc" / "rank.cpp").write_text(
        "// helpers\nint rank_of(int dims)\n{\n    return dims;\n}\n"
    )
    assert repository._defined_elsewhere("rank_of(int)", tmp_path) == (
        ", defined in csrc/rank.cpp:2, a file not built with it"
    )
    assert repository._defined_elsewhere("absent(int)", tmp_path) == ""
    assert repository._defined_elsewhere("", tmp_path) == ""


def test_the_schema_cell_of_an_op_with_no_meta_says_so_not_that_the_meta_refuses():
    """The trial's schema cells noted "the Meta function refuses case ..." for ops with
    no Meta at all: the note says there is nothing to hold the returns to, and whose
    finding that is."""
    import torch

    from opsdk.audit.checks import schema
    from opsdk.audit.model import AuditOp
    from opsdk.inputs import F32, Support

    lib = torch.library.Library("t_nometa", "FRAGMENT")  # noqa: TID251 - a test op
    lib.define("lone(Tensor x) -> Tensor")
    op = AuditOp(torch.ops.t_nometa.lone.default, "t_nometa::lone", None, None)
    op.cases = [Support(F32(2, 3))]
    [note] = schema.check_aliasing(op)
    assert note == (
        "returns' aliasing not checked: it has no fake (Meta) function (the fake check's finding)"
    )
    op.untraceable = "it has no Meta or fake function to trace (the registry check's finding)"
    assert schema.check_aliasing(op) == [f"returns' aliasing not checked: {op.untraceable}"]


def test_what_a_module_prints_while_imported_is_said_once_under_its_name(tmp_path, capfd):
    """sgl-kernel-npu's attentions logged "[MindIE-SD] [ERROR] ... doesn't exist" on the
    user's stderr while the audit imported it, beside its own "not imported" line: its
    prints are the audit's to say, attributed; a log of the error raised is said once."""
    import sys

    from opsdk.audit import repository

    (tmp_path / "noisy_lib").mkdir()
    (tmp_path / "noisy_lib" / "__init__.py").write_text(
        "import logging, os, sys\n"
        "# torch.library registers nothing here: the audit imports it for this word\n"
        "log = logging.getLogger('noisy_lib')\n"
        "log.addHandler(logging.StreamHandler(sys.__stderr__))  # pytest swaps sys.stderr\n"
        "log.error('[LIB] ERROR the plugin .so is missing')\n"
        "os.write(1, b'from C: loaded\\n')\n"
        "raise RuntimeError('the plugin .so is missing')\n"
    )
    said: list[str] = []
    try:
        failed = repository._import_python(tmp_path, said)
    finally:
        sys.modules.pop("noisy_lib", None)
    assert list(failed) == [
        "noisy_lib/__init__.py: not imported: RuntimeError: the plugin .so is missing"
    ]
    assert said == ["noisy_lib/__init__.py: printed while imported: from C: loaded"]
    out, err = capfd.readouterr()
    assert "loaded" not in out and "LIB" not in err


def test_a_skip_citing_the_registry_finding_says_it_when_that_check_is_not_run():
    """`--checks npugraph_ex` alone: vllm-ascend's store_kv_block cells said "(the registry
    check's finding)", a finding that run never showed; they say the finding itself then."""
    from types import SimpleNamespace

    import torch

    from opsdk.audit import matrix, repository
    from opsdk.audit.model import AuditOp, Library, Source

    lib = torch.library.Library("t_cited", "FRAGMENT")  # noqa: TID251 - a test op
    lib.define("store(Tensor x, Tensor cache) -> ()")
    op = torch.ops.t_cited.store.default
    audit_op = AuditOp(op, "t_cited::store", None, None, schema_at=Source("csrc/b.cpp", 3))
    registry = SimpleNamespace(registrations=[], schemas=[])
    audit_op.findings = repository._findings(registry, op, audit_op, None, {})
    library = Library("t_cited", [audit_op], from_sources=True)
    alone = matrix.run(library, matrix.cells(library, ["npugraph_ex"], ("static",)))
    both = matrix.run(library, matrix.cells(library, ["npugraph_ex", "registry"], ("static",)))
    assert "the registry check finds: t_cited::store returns nothing" in alone[0].message
    assert both[0].message.endswith("captures it (the registry check's finding)")


def test_a_finding_names_a_python_kernel_where_no_cpp_one_is_registered():
    """MindSpeed's npu_gmm.List: no Meta, its PrivateUse1 kernel a Python function
    (``@impl(AS_LIBRARY, "npu_gmm.List", "PrivateUse1")``): the finding names it too."""
    from types import SimpleNamespace

    import torch

    from opsdk.audit import repository
    from opsdk.audit.model import AuditOp, Source

    lib = torch.library.Library("t_pykernel", "FRAGMENT")  # noqa: TID251 - a test op
    lib.define("gmm.List(Tensor x, int[]? group_list=None) -> Tensor")
    op = torch.ops.t_pykernel.gmm.List
    audit_op = AuditOp(op, "t_pykernel::gmm.List", None, None, schema_at=Source("b.py", 92))
    audit_op.kernels = {"PrivateUse1": (print, False, Source("ops/gmm.py", 155))}
    registry = SimpleNamespace(registrations=[], schemas=[])
    [finding] = repository._findings(registry, op, audit_op, None, {})
    assert "(schema (b.py:92); its kernel is registered (ops/gmm.py:155))" in finding
