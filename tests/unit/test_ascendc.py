"""The ``ascendc`` column: where it finds an op's AscendC sources, what it does not run."""

from pathlib import Path

import pytest

from opsdk.cann.kernel import sources

ENTRY = (
    'extern "C" __global__ __aicore__ void {name}(GM_ADDR x, GM_ADDR z, GM_ADDR workspace, '
    "GM_ADDR tiling) {{ {body} }}\n"
)
TILING = (
    "IMPL_OP_OPTILING({op}).Tiling(Tiling{op});\nstatic int Tiling{op}(void*) {{ return 0; }}\n"
)


def _project(root: Path, body: str = "", tiling: str = "") -> Path:
    (root / "op_kernel" / "arch35").mkdir(parents=True)
    (root / "op_host").mkdir()
    (root / "op_kernel" / "other.cpp").write_text(ENTRY.format(name="other_op", body=""))
    (root / "op_kernel" / "scale_x.cpp").write_text(ENTRY.format(name="scale_x", body=body))
    (root / "op_kernel" / "arch35" / "row_sum.cpp").write_text(
        ENTRY.format(name="row_sum", body="")
    )
    (root / "op_host" / "scale_x_tiling.cpp").write_text(TILING.format(op="ScaleX") + tiling)
    return root


def test_an_op_types_kernel_is_the_entry_named_after_it_in_snake_case(tmp_path):
    found = sources.find("ScaleX", _project(tmp_path))
    assert found.entry.name == "scale_x" and found.entry.params == ("x", "z", "workspace", "tiling")
    assert found.tiling.function.name == "TilingScaleX" and found.root == tmp_path
    assert sources.unmodelled(found) is None
    arch35 = sources.find("RowSum", tmp_path)
    assert "row_sum.cpp is an arch35 (MicroAPI/SIMT) kernel" in sources.unmodelled(arch35)
    assert sources.find("ScaleX", tmp_path / "op_host") is None  # no op_kernel: no sources


def test_the_cube_unit_communication_and_matmul_tiling_are_said_not_modelled(tmp_path):
    cube = sources.find("ScaleX", _project(tmp_path / "cube", "Matmul<A, B, C> mm;"))
    assert "uses the cube unit (Matmul)" in sources.unmodelled(cube)
    hccl = sources.find("ScaleX", _project(tmp_path / "hccl", "Hccl hccl;"))
    assert "uses communication (hccl/mc2)" in sources.unmodelled(hccl)
    host = sources.find(
        "ScaleX", _project(tmp_path / "mm", tiling="matmul_tiling::MatmulApiTiling t;")
    )
    assert "scale_x_tiling.cpp its tiling uses matmul_tiling" in sources.unmodelled(host)
    parsed = sources.find(
        "ScaleX", _project(tmp_path / "json", tiling="auto j = nlohmann::json::parse(s);")
    )
    assert "reads the compile info JSON CANN's op compiler writes" in sources.unmodelled(parsed)


def test_a_packages_copy_sits_beside_its_cann_infer_folder(tmp_path):
    assert sources.project_of(tmp_path / "op" / "cann_infer") == tmp_path / "op" / "cann_kernel"


def _scale_x(root: Path, **ir):
    """The engine on the planted ScaleX project (``ir``: the IrDef's other fields)."""
    from opsdk.cann.kernel.op import AscendcOp
    from opsdk.irdef import Input as IrInput
    from opsdk.irdef import IrDef, Output

    return AscendcOp(
        IrDef("ScaleX", (IrInput("x"),), (Output("z"),), **ir), sources.find("ScaleX", root)
    )


def _tiled(key: int):
    from opsdk.cann import tiling

    return tiling.TilingRun("ScaleX", tiling.Case((), ()), 0, tiling_key=key)


def test_a_dtype_the_kernel_stand_in_cannot_take_is_not_run_naming_it(tmp_path):
    from opsdk.cann.kernel.op import NotRun
    from opsdk.harness.cell import CellSkipped
    from opsdk.harness.columns import ascendc

    said = "the kernel cannot be built: .*x has dtype 'complex64'"
    with pytest.raises(NotRun, match=said):
        _scale_x(_project(tmp_path))._kernel((("x", "complex64"), ("z", "complex64")), _tiled(0))
    with pytest.warns(UserWarning, match="ascendc: not run: why"), pytest.raises(CellSkipped):
        raise ascendc._not_run("why")  # the column's skip, said whole after the matrix


def test_the_tiling_keys_of_one_library_share_its_worker(tmp_path, monkeypatch):
    """An entry that is no template builds one library for every tiling key: one
    launcher (its worker process, started on the first launch) serves them all."""
    from opsdk.cann import kernel
    from opsdk.cann.kernel import op

    libraries = {0: tmp_path / "a.so", 2: tmp_path / "a.so", 3: tmp_path / "b.so"}

    def build(entry, dtypes, *, tiling_key, layout, layouts, include_dirs, root):
        return kernel.Built(libraries[tiling_key], entry, 0.0)

    monkeypatch.setattr(op, "build", build)
    engine = _scale_x(_project(tmp_path / "p"))
    dtypes = (("x", "float32"), ("z", "float32"))
    first, same, other = (engine._kernel(dtypes, _tiled(key)) for key in (0, 2, 3))
    assert first is same and other is not first
    assert other.built.library == tmp_path / "b.so"


def test_what_the_engine_does_not_run_yet_is_said(tmp_path):
    from opsdk.cann.kernel.op import AscendcOp, NotRun
    from opsdk.irdef import Input as IrInput
    from opsdk.irdef import IrDef, Output

    found = sources.find("ScaleX", _project(tmp_path))
    ir = IrDef("ScaleX", (IrInput("x"),), (Output("z"),))

    def said(ir, found=found, in_place=False) -> str | None:
        try:
            AscendcOp(ir, found, in_place=in_place)
        except NotRun as err:
            return str(err)
        return None

    assert said(ir) is None
    assert "in place" in said(ir, in_place=True)
    host = IrDef("ScaleX", (IrInput("x"), IrInput("k", value_depend=True)), (Output("z"),))
    assert "value-depend" in said(host)
    listed = IrDef("ScaleX", (IrInput("x", kind="dynamic"),), (Output("z"),))
    assert said(listed) is None  # a tensor list runs
    untiled = sources.AscendC(found.root, None, found.entry)
    assert "no TilingFunc of ScaleX" in said(ir, untiled)
    newer = IrDef("ScaleX", (IrInput("x"),), (Output("z"),), chips=("ascend950",))
    assert "built for ascend950 only" in said(newer)
    both = IrDef("ScaleX", (IrInput("x"),), (Output("z"),), chips=("ascend950", "ascend910b"))
    assert said(both) is None


def test_a_tensor_list_argument_is_a_dynamic_input_s_instances_and_the_kernel_s_list():
    """A ``Tensor[]`` argument: each tensor an instance of the dynamic input for the
    tiling, a member of the kernel's tensor list; a ``Tensor[]`` return likewise."""
    import torch

    from opsdk.cann import infer, kernel
    from opsdk.cann.kernel import op
    from opsdk.harness.columns import ascendc
    from opsdk.irdef import Input as IrInput
    from opsdk.irdef import IrDef, Output

    ir = IrDef(
        "ForeachScale",
        (IrInput("x", kind="dynamic"), IrInput("scale")),
        (Output("y", kind="dynamic"), Output("total")),
    )
    x, scale = [torch.ones(2, 3), torch.ones(5)], torch.ones(1)
    returned = ([t * 2 for t in x], torch.ones(1))
    outputs = ascendc._returned(ir, returned)
    assert list(outputs) == ["y", "total"] and len(outputs["y"]) == 2
    case = ascendc._tiling_case(ir, {"x": x, "scale": scale}, outputs, "ascend910b", "c")
    f32 = infer.Given(0, (2, 3)), infer.Given(0, (5,)), infer.Given(0, (1,))
    assert case.inputs == ((f32[0], f32[1]), (f32[2],))
    assert case.outputs == (f32[0], f32[1], f32[2])
    assert op._output(list(case.outputs[:2])) == [
        kernel.Member((2, 3), 24),
        kernel.Member((5,), 20),
    ]
    ones = torch.ones(1).numpy().tobytes()
    assert ascendc._bytes(scale) == ones and ascendc._bytes(x)[1] == torch.ones(5).numpy().tobytes()
    assert op._input(case.inputs[1], ones, dynamic=False) == ones
    made = op._input(case.inputs[0], None, dynamic=True)  # no data: normal floats, made
    assert [(m.shape, len(m.data)) for m in made] == [((2, 3), 24), ((5,), 20)]
    assert op._input((), None, dynamic=False) is None  # an absent optional input
    assert ascendc._bytes(torch.tensor(2.0)) == torch.tensor([2.0]).numpy().tobytes()  # 0-dim


def test_a_package_copies_the_project_and_the_repository_headers_its_tiling_includes(tmp_path):
    from opsdk.scaffold import cann_kernel

    repo = tmp_path / "repo"
    (repo / "common" / "inc" / "op_host").mkdir(parents=True)
    (repo / "common" / "inc" / "op_host" / "util.h").write_text("#pragma once\n")
    project = _project(repo / "experimental" / "scale_x", tiling='#include "op_host/util.h"\n')
    package = tmp_path / "pkg"
    assert cann_kernel.copy(project / "op_host" / "scale_x_def.cpp", "ScaleX", package)
    copy = package / sources.FOLDER
    assert (copy / "common" / "inc" / "op_host" / "util.h").is_file()
    found = sources.in_copy("ScaleX", copy)
    assert found.root == copy / "experimental" / "scale_x" and found.entry.name == "scale_x"
    assert found.tiling.sources == (found.root / "op_host" / "scale_x_tiling.cpp",)
    assert not cann_kernel.copy(project / "op_host" / "scale_x_def.cpp", "RowMax", package)


def test_a_package_copies_the_other_ops_kernel_headers_its_kernel_includes(tmp_path):
    from opsdk.scaffold import cann_kernel

    project = _project(tmp_path / "foreach" / "scale_x", body="")
    (project / "op_kernel" / "scale_x.h").write_text('#include "../foreach_utils/unary.h"\n')
    (tmp_path / "foreach" / "foreach_utils" / "op_kernel").mkdir(parents=True)
    (tmp_path / "foreach" / "foreach_utils" / "op_kernel" / "unary.h").write_text("")
    package = tmp_path / "pkg"
    assert cann_kernel.copy(project / "op_host" / "scale_x_def.cpp", "ScaleX", package)
    copy = package / sources.FOLDER
    assert (copy / "foreach_utils" / "op_kernel" / "unary.h").is_file()
    found = sources.in_copy("ScaleX", copy)
    assert found.root == copy / "scale_x"
    assert sources.sibling_kernels(found.entry) == {
        "foreach_utils": (copy / "foreach_utils" / "op_kernel").resolve()
    }


def test_an_absent_input_s_dtype_is_its_definition_row_s():
    """CANN builds a kernel per row of the definition, every input's DTYPE_ defined: an
    absent optional input's dtype is the one of the row the given tensors are of."""
    from opsdk._runtime import types
    from opsdk.cann import kernel

    rows = {"x": ("DT_FLOAT16", "DT_FLOAT"), "bias": ("DT_FLOAT16", "DT_FLOAT"), "k": ("DT_INT32",)}
    f32, f16, i32 = (types.DTYPES[d] for d in ("DT_FLOAT", "DT_FLOAT16", "DT_INT32"))
    given = {"x": "float32", "bias": None, "k": None, "undeclared": None}
    assert kernel.absent_dtypes(rows, given) == {"bias": f32, "k": i32}
    assert kernel.absent_dtypes(rows, {"x": "DT_FLOAT16", "bias": None}) == {"bias": f16}
    assert kernel.absent_dtypes(rows, {"x": "int8", "bias": None}) == {"bias": f16}  # no row


def test_the_engine_builds_the_kernel_with_an_absent_optional_input_s_dtype(tmp_path):
    """The build gets ``DTYPE_<NAME>`` of an input its case leaves out, by the IR's name
    and the kernel's own, as it does for a given one."""
    from opsdk.cann import infer
    from opsdk.irdef import Input as IrInput

    rows = ("DT_FLOAT16", "DT_FLOAT")
    engine = _scale_x(_project(tmp_path), dtypes={"x": rows, "z": rows})
    engine.ir = engine.ir.__class__(
        "ScaleX",
        (IrInput("x"), IrInput("bias", kind="optional")),
        engine.ir.outputs,
        dtypes={"x": rows, "bias": rows, "z": rows},
    )
    params = {"x": "x", "b": "bias", "z": "z"}
    x = infer.Given(1, (2,))  # float16
    dtypes = dict(engine._dtypes(params, {"x": (x,), "bias": ()}, {"z": x}))
    assert dtypes == {"x": "float16", "bias": "float16", "b": "float16", "z": "float16"}


def test_a_kernel_and_reference_mismatch_says_where_on_which_inputs_and_either_may_be_wrong():
    """The worst element (the furthest past its tolerance, a NaN first), both values, the
    tolerances; the inputs as the kernel got them; the reference named as registered."""
    import torch

    from opsdk.harness.columns import ascendc

    want = torch.tensor([[1.0, 2.5], [3.0, 4.0]])
    got = torch.tensor([[1.0, 2.0], [3.001, 4.0]])
    said = ascendc._differ(got, want, {})
    assert said.startswith("2 of 4 elements differ, the worst at index [0, 1]: kernel 2.0, "), said
    assert "reference 2.5 (float32 within rtol 1.3e-06, atol 1e-05;" in said, said
    assert ascendc._differ(got, want, {torch.float32: (0.0, 0.6)}) is None
    got[1, 1] = float("nan")
    assert "index [1, 1]: kernel nan, reference 4.0" in ascendc._differ(got, want, {})
    given = {"x": want, "bias": None, "xs": [want, want[0]], "alpha": 0.5}
    assert ascendc._inputs(given) == (
        "x float32[2, 2], bias absent, xs [float32[2, 2], float32[2]], alpha 0.5"
    )
    launched, params = {"z": ascendc._bytes(got)}, {"x": "x", "z": "z"}
    said = ascendc._compare(launched, {"z": want}, params, {})
    assert said.startswith("z: 3 of 4 elements differ, the worst at index [1, 1]"), said
    listed = ascendc._compare(
        {"z": (ascendc._bytes(want), launched["z"])}, {"z": [want] * 2}, params, {}
    )
    assert listed.startswith("z[1]: 3 of 4 elements"), listed  # a dynamic output's instance
    assert ascendc._compare({"z": ascendc._bytes(want)}, {"z": want}, params, {}) is None


def test_the_reference_a_mismatch_names_is_the_function_torch_runs_on_cpu():
    """Both ways an op's CPU kernel is registered: ``Library.impl`` (the scaffold's) and
    ``custom_op``'s ``register_kernel``."""
    import torch

    from opsdk.harness.columns import ascendc
    from opsdk.harness.variants.cases import Call

    lib = torch.library.Library("ascendc_test", "FRAGMENT")
    lib.define("twice(Tensor x) -> Tensor")

    def twice_reference(x):
        return x * 2

    lib.impl("twice", twice_reference, "CPU")

    @torch.library.custom_op("ascendc_test::thrice", mutates_args=())
    def thrice(x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def thrice_reference(x):
        return x * 3

    thrice.register_kernel("cpu", thrice_reference)
    call = Call([torch.ones(2)], {})
    said = ascendc._reference(torch.ops.ascendc_test.twice.default, call)
    assert said == "test_ascendc.py: twice_reference"
    said = ascendc._reference(torch.ops.ascendc_test.thrice.default, call)
    assert said == "test_ascendc.py: thrice_reference"
