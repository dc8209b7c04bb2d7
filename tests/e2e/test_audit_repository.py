"""``opsdk audit DIR`` on op libraries as their repositories hold them: C++ schemas, C++
Meta registrations built against CPU torch, kernels calling aclnn. The planted library
(audit_repository/, its README lists the defects and twins) runs by default; the real
ones (vllm-ascend, sgl-kernel-npu at their pinned commits) are read from the public
mirrors at test time and skipped without them. The Meta builds are cached in opsdk's
cache directory: one compile per source set, shared by every test and run."""

import subprocess
from pathlib import Path

import mirrors
import pytest

PLANTED = Path(__file__).with_name("audit_repository")
CHEAP = ("--checks", "registry,schema,fake", "--shapes", "static")
TIDY_IR = PLANTED / "csrc" / "op_graph" / "tidy_proto.h"


def _failures(run) -> dict[tuple[str, str], str]:
    """(op's name, check) -> message of each failing cell."""
    return {
        (r["op"].split("::")[-1], r["column"]): r["message"]
        for r in run.report["results"]
        if r["status"] == "fail"
    }


def _at(stem: str, needle: str) -> str:
    """``csrc/STEM.cpp:LINE`` of the planted line holding ``needle``."""
    lines = (PLANTED / "csrc" / f"{stem}.cpp").read_text().splitlines()
    return f"csrc/{stem}.cpp:{next(i for i, t in enumerate(lines, 1) if needle in t)}"


def _py_at(needle: str) -> str:
    """``planted_py_ops.py:LINE`` of the planted Python line holding ``needle``."""
    lines = (PLANTED / "python" / "planted_py_ops.py").read_text().splitlines()
    return f"planted_py_ops.py:{next(i for i, t in enumerate(lines, 1) if needle in t)}"


@pytest.fixture(scope="module")
def planted(opsdk_cli_module):
    return opsdk_cli_module("audit", PLANTED, *CHEAP, "--ir", TIDY_IR, json_report=True)


def test_each_planted_defect_is_one_finding_naming_both_places(planted):
    assert planted.code == 1, planted.stdout + planted.stderr
    found = _failures(planted)
    assert set(found) == {
        ("stray", "registry"),
        ("stray_pre", "registry"),
        ("bare", "registry"),
        ("alias_out", "schema"),
        ("store", "registry"),
        ("touch", "registry"),
        ("scale_", "registry"),
        ("scale_", "schema"),
        ("broken", "registry"),
        ("py_write", "registry"),
    }, found
    both = {
        ("stray_pre", "registry"): [_at("binding_meta", '"stray_pre"'), _at("binding", '"stray(')],
        ("stray", "registry"): [_at("binding", '"stray('), _at("binding_meta", '"stray_pre"')],
        ("bare", "registry"): [_at("binding", '"bare('), _at("binding", 'impl("bare"')],
        ("alias_out", "schema"): [
            _at("binding_meta", "alias_out_meta("),
            _at("binding", '"alias_out('),
        ],
        ("touch", "registry"): [_at("binding", '"touch('), _at("binding", 'impl("touch"')],
        ("store", "registry"): [
            _at("binding", '"store('),
            _at("binding", "aclnnStore,"),
            "csrc/op_host/store_def.cpp:3",
        ],
        ("scale_", "registry"): [_at("binding", '"scale_('), _at("binding", 'impl("scale_"')],
        ("broken", "registry"): [_at("binding", '"broken('), "expected ident"],
        ("py_write", "registry"): [_py_at('"py_write('), _py_at("def accumulate(")],
    }
    for cell, places in both.items():
        assert all(p in found[cell] for p in places), (cell, found[cell])
    # an op without a Meta, or whose call torch.compile drops (nothing left to trace), is
    # the registry check's finding once, not the fake check's too
    for op in ("stray", "bare", "touch", "store"):
        [fake] = [
            r
            for r in planted.report["results"]
            if r["op"].endswith(f"::{op}") and r["column"] == "fake"
        ]
        assert fake["status"] == "skip" and "the registry check's finding" in fake["message"]


def test_the_twins_pass_and_a_file_that_does_not_build_leaves_its_ops_unchecked(planted):
    statuses = {}
    for r in planted.report["results"]:
        statuses.setdefault(r["op"].split("::")[-1], set()).add(r["status"])
    for twin in ("tidy", "fresh_out", "store_ok", "store_plain", "shift_", "py_write_ok"):
        assert statuses[twin] == {"pass"}, (twin, planted.stdout)
    [tidy] = [
        r for r in planted.report["results"] if r["op"] == "planted::tidy" and r["column"] == "fake"
    ]
    assert "derived from the dtype rows of its CANN definition (--ir)" in tidy["message"]
    for unchecked in ("late", "crashy"):  # their registry cells read text only
        assert statuses[unchecked] == {"pass", "skip"}, planted.stdout
    [late_fake] = [
        r["message"]
        for r in planted.report["results"]
        if r["op"] == "planted::late" and r["column"] == "fake" and r["shapes"] == "static"
    ]
    assert late_fake.startswith("not audited: csrc/late_meta.cpp:8:"), late_fake  # said once
    said = [line for line in planted.stdout.splitlines() if line.startswith("csrc/")]
    [late] = [line for line in said if line.startswith("csrc/late_meta.cpp:8:")]
    assert "late_shape_helper" in late
    [crash] = [line for line in said if line.startswith("csrc/crash_meta.cpp")]
    assert "crashed the process (signal 11)" in crash
    assert "never" not in statuses  # its #if branch is not the build's


@pytest.mark.slow
def test_vllm_ascend_defects_are_found_and_nothing_else(tmp_path_factory, opsdk_cli_module):
    root = mirrors.extract(
        tmp_path_factory, "vllm-project+vllm-ascend", "csrc", commit="182b75ea84"
    )
    run = opsdk_cli_module(
        "audit",
        root,
        "-D",
        "VLLM_ENABLE_ATB_AND_DIRECT_KERNELS",
        "--checks",
        "registry,schema",
        json_report=True,
        timeout=900,
    )
    assert "audited 56 of 56 ops" in run.stdout, run.stdout + run.stderr
    found = _failures(run)
    assert set(found) == {
        ("store_kv_block_pre", "registry"),  # a Meta for an op no schema defines
        ("store_kv_block_metadata", "registry"),  # 3 undeclared writes (marked: no Meta needed)
        ("swap_blocks_batch", "registry"),  # no Meta (bgmv_shrink, sgmv_shrink, swap_blocks
        # have none either, but write (a!) and return nothing: torch fakes them)
        ("compressor_metadata_out", "registry"),
        ("npu_causal_conv1d_custom", "registry"),  # writes `output`, undeclared
        # a tensor taken, `-> ()` marking no write: torch.compile drops the call (the first
        # three write caches or an output; the print prints nothing in graph mode)
        ("store_kv_block", "registry"),
        ("transpose_kv_cache_by_block", "registry"),
        ("batch_matmul_transpose", "registry"),
        ("device_print_tensor", "registry"),
        ("npu_causal_conv1d_custom", "schema"),  # alias returns
        ("mla_preprocess", "schema"),
        ("dispatch_ffn_combine", "schema"),
    }, found
    metadata = found[("store_kv_block_metadata", "registry")]
    assert "has no Meta" not in metadata  # one fix: mark the writes (torch then fakes it)
    assert "store_kv_block_metadata" in found[("store_kv_block_pre", "registry")]
    for written in ("group_len", "group_key_idx", "group_key_cache_idx"):
        assert f"writes {written}" in metadata
    assert "aclnn_store_kv_block_metadata.cpp:35" in metadata


@pytest.mark.slow
def test_sgl_kernel_npu_schemas_all_parse_and_its_missing_metas_are_found(
    tmp_path_factory, opsdk_cli_module
):
    root = mirrors.extract(
        tmp_path_factory, "sgl-project+sgl-kernel-npu", "csrc", commit="f425bdf1"
    )
    run = opsdk_cli_module(
        "audit",
        root,
        "-D",
        "SGL_KERNEL_ENABLE_A3_ONLY_OPS",
        "--checks",
        "registry",
        json_report=True,
    )
    assert run.code == 1, run.stdout + run.stderr  # findings, never 134
    assert "audited 37 of 37 ops" in run.stdout
    found = _failures(run)
    assert "attentions::la" in {r["op"] for r in run.report["results"]}  # backslash-newline
    assert ("compressor", "registry") in found and "Meta" in found[("compressor", "registry")]
    assert not [op for op, _ in found if op.startswith("sgl_kernel_npu_")]  # def(schema, fn)


@pytest.mark.slow
def test_mindspeed_python_library_npu_gmm_list_has_no_fake(tmp_path_factory, opsdk_cli_module):
    root = mirrors.extract(tmp_path_factory, "Ascend+MindSpeed", "mindspeed", commit="028de58c")
    run = opsdk_cli_module(
        "audit", root, "--checks", "registry,schema", json_report=True, timeout=900
    )
    assert "audited 10 of 10 ops" in run.stdout, run.stdout + run.stderr
    assert set(_failures(run)) == {("npu_gmm.List", "registry")}
    finding = _failures(run)[("npu_gmm.List", "registry")]
    assert "mindspeed/op_builder/gmm_builder.py:" in finding
    assert "its kernel is registered (mindspeed/ops/gmm.py:" in finding  # a Python kernel


def test_a_meta_file_is_built_once_per_set_of_sources_its_headers_included(tmp_path, monkeypatch):
    """The cache key covers the project headers the file includes: an edited header is a
    new build, the same sources are not compiled again (here a file failing at once: its
    failure is cached as a library would be)."""
    from opsdk.audit.repository import build

    monkeypatch.setenv("OPSDK_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "lib"
    (root / "csrc").mkdir(parents=True)
    (root / "csrc" / "shapes.h").write_text("#define RANK 2\n")
    source = root / "csrc" / "meta.cpp"
    source.write_text('#include "shapes.h"\nint rank() { return RANK + missing_rank; }\n')
    compiled = []
    run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: compiled.append(a) or run(*a, **k))
    for _ in range(2):
        with pytest.raises(build.MetaBuildFailure, match=r"csrc/meta.cpp:2: .*missing_rank"):
            build.build(source, root, {})
    assert len(compiled) == 1
    (root / "csrc" / "shapes.h").write_text("#define RANK 3\n")
    with pytest.raises(build.MetaBuildFailure):
        build.build(source, root, {})
    assert len(compiled) == 2


def test_a_meta_file_calling_a_function_of_another_file_is_one_link_line(tmp_path, monkeypatch):
    """It compiles (a shared library may leave symbols undefined) and its load fails: one
    line naming the file and the symbol, demangled, never a crash of the audit."""
    from opsdk.audit.repository import build

    monkeypatch.setenv("OPSDK_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "lib"
    (root / "csrc").mkdir(parents=True)
    source = root / "csrc" / "meta.cpp"
    source.write_text(
        "int rank_of(int dims);  // in another file\nint rank() { return rank_of(2); }\n"
    )
    built = build.build(source, root, {})
    for child in (True, False):  # its first load is a child's; a library known to load: here
        if not child:
            built.library.with_name(build._LOADS).touch()
        with pytest.raises(build.MetaBuildFailure) as failure:
            build.load(built, source, root)
        assert str(failure.value) == "csrc/meta.cpp: does not link: undefined symbol rank_of(int)"
        assert failure.value.symbol == "rank_of(int)"  # looked for in the repository's files
