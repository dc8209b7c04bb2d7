"""The audit's ``ascendc`` check: how a run is judged (no values compared: an audit runs
no library kernel) and where the ``--ir`` paths' kernels are found. The runs themselves
compile: tests/e2e/test_audit_kernel.py."""

from types import SimpleNamespace

from opsdk.audit import kernels
from opsdk.audit.checks import ascendc
from opsdk.cann import kernel, tiling
from opsdk.cann.kernel.op import Ran
from opsdk.irdef import Input, IrDef, Output

ENGINE = SimpleNamespace(
    sources=SimpleNamespace(root="proj"), ir=IrDef("TailAdd", (Input("x"),), (Output("z"),))
)
META = ("the Meta function", " (lib.py:9), as TorchAir traced it,")
PARAMS = {"a": "x", "sum": "z"}


def _ran(status=0, findings=(), launched=()) -> Ran:
    tiled = tiling.TilingRun("TailAdd", tiling.Case((), ()), status, findings=findings)
    launch = None if status != 0 or findings else kernel.Launch({}, tuple(launched))
    return Ran(tiled, launch, PARAMS)


def _write(buffer: str) -> kernel.Finding:
    what = f"GM write of 32 B at offset 32 of {buffer} (60 B): 4 B past its end"
    return kernel.Finding("gm-out-of-bounds", 1, "op_kernel/k.h", 47, 1, what, "F32(3, 5)")


def test_a_tiling_refusal_is_a_finding_on_a_declared_case_only():
    crash = tiling.Finding("crash", "SIGSEGV", "c", "tiling.cpp:3")
    for ran in (_ran(status=1), _ran(status=None, findings=(crash,))):
        defect, said = ascendc._judged(ran, ENGINE, META, certain=True)
        assert defect and said[0].startswith("the op's TilingFunc (in proj): "), said
        assert said[0].endswith("fix it in op_host/"), said
        defect, said = ascendc._judged(ran, ENGINE, META, certain=False)
        assert not defect, said  # a derived case the op may never take: a note
        assert said[0].startswith("its TilingFunc on a case the library does not declare: ")


def test_a_write_past_an_output_names_what_sized_it_and_the_kernel():
    defect, [said] = ascendc._judged(_ran(launched=[_write("sum")]), ENGINE, META, certain=False)
    assert defect  # the tiling took the case: whatever the case, the kernel's fault is certain
    assert said.startswith("the kernel writes past output z, which the Meta function (lib.py:9)")
    assert "gm-out-of-bounds in block 1 of case F32(3, 5) at op_kernel/k.h:47" in said, said
    assert "the Meta function and the kernel (in proj) disagree: fix whichever" in said, said
    defect, [said] = ascendc._judged(_ran(launched=[_write("a")]), ENGINE, META, certain=True)
    assert defect and said.startswith("the op's kernel (in proj): gm-out-of-bounds"), said
    assert said.endswith("fix the AscendC kernel in op_kernel/"), said
    assert ascendc._judged(_ran(), ENGINE, META, certain=True) == (False, [])  # ran clean


def test_the_ir_paths_kernels_are_found_by_file_name_and_the_check_needs_them(tmp_path):
    for op in ("norm/rms_norm", "math/add"):
        (tmp_path / op / "op_kernel" / "arch35").mkdir(parents=True)
    (tmp_path / "norm/rms_norm/op_kernel/rms_norm.cpp").write_text("")
    (tmp_path / "norm/rms_norm/op_kernel/arch35/rms_norm.cpp").write_text("")
    (tmp_path / "math/add/op_kernel/add.cpp").write_text("")
    found = kernels.op_folders((tmp_path,))
    assert found == {"rms_norm": (tmp_path / "norm/rms_norm",), "add": (tmp_path / "math/add",)}
    library = SimpleNamespace(infer_roots=(tmp_path,))
    assert not kernels.applies(library)  # kernels, but no C++ inference to read a node with
    assert kernels.op_folders((tmp_path / "none",)) == {}


def test_what_a_kernel_does_on_made_integers_is_a_note_not_a_finding():
    """Made integer inputs are zeros, maybe no value the op takes (a count it divides by):
    a crash on them is said, never a finding; on given or float inputs it is one."""
    crashed = kernel.Finding("crash", -1, "?", 0, 1, "the kernel crashed (signal 8: SIGFPE)")
    said = {}
    for made in (("group_index",), ()):
        run = ascendc._Run(None, {})
        ran = Ran(_ran().tiled, kernel.Launch({}, (crashed,)), PARAMS, made)
        run.engines["T"] = SimpleNamespace(run=lambda case, ran=ran: ran, **vars(ENGINE))
        assert run.one("T", None, "lowered", "at", META, certain=True)  # it launched
        said[made] = run.found, run.notes
    found, [note] = said["group_index",]
    assert not found and note.startswith("at: the op's kernel (in proj): crash in block -1")
    assert note.endswith("(not a finding: on made zeros as group_index, no values the op's)")
    found, notes = said[()]
    assert not notes and found[0].startswith("at: the op's kernel (in proj): crash in block -1")


def test_the_engine_names_the_inputs_whose_integers_it_made(tmp_path, monkeypatch):
    from opsdk.cann import infer
    from opsdk.cann.kernel import sources
    from opsdk.cann.kernel.op import AscendcOp

    (tmp_path / "op_kernel").mkdir()
    (tmp_path / "op_host").mkdir()
    (tmp_path / "op_kernel" / "k.cpp").write_text(
        'extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR idx, GM_ADDR z, '
        "GM_ADDR workspace, GM_ADDR tiling) {}\n"
    )
    (tmp_path / "op_host" / "k_tiling.cpp").write_text(
        "IMPL_OP_OPTILING(K).Tiling(TilingK);\nstatic int TilingK(void*) { return 0; }\n"
    )
    ir = IrDef("K", (Input("x"), Input("idx")), (Output("z"),))
    engine = AscendcOp(ir, sources.find("K", tmp_path))
    tiled = tiling.TilingRun("K", tiling.Case((), ()), 0, block_dim=1)
    launched = []
    engine._tiling = SimpleNamespace(run=lambda source, case: tiled)
    launcher = SimpleNamespace(launch=lambda *a, **k: launched.append(a) or kernel.Launch({}, ()))
    monkeypatch.setattr(engine, "_kernel", lambda dtypes, tiled: launcher)
    f32, i32 = infer.Given(0, (4,)), infer.Given(3, (4,))
    case = tiling.Case(((f32,), (i32,)), (f32,))
    assert engine.run(case).made_integers == ("idx",)
    assert launched[-1][0]["idx"] == bytes(16)  # zeros: a valid index of any dim
    assert engine.run(case, {"idx": bytes(range(16))}).made_integers == ()  # given: a verdict


def test_an_own_test_of_an_empty_tensor_is_not_run():
    from opsdk.cann import infer

    full, empty = infer.Given(0, (1, 128)), infer.Given(0, (1, 128, 0))
    assert ascendc._filled(tiling.Case(((full,), ()), (full,)))  # an absent optional: fine
    assert not ascendc._filled(tiling.Case(((full,), (empty,)), (full,)))
