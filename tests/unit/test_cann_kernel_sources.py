"""cann.kernel without a compiler: a kernel's entry and template tiling key read from its
source, the kernel-side tiling struct generated from a TilingLayout, the translation unit's
dtype macros, a launch's parameters checked before any process starts, finding lines."""

import struct
from pathlib import Path

import pytest
from kernel_twin import PROJECTS, SCALE_LAYOUT, TilingRun

from opsdk.cann import kernel
from opsdk.cann.kernel import sources
from opsdk.cann.kernel.build import translation_unit
from opsdk.cann.kernel.run import _finding
from opsdk.cann.tiling import Field, TilingLayout
from opsdk.errors import SpecError


def test_an_entry_is_read_with_its_gm_parameters():
    entry = kernel.entry_of(PROJECTS / "planted" / "op_kernel" / "planted.cpp")
    assert (entry.name, entry.params, entry.template) == (
        "planted",
        ("x", "y", "z", "workspace", "tiling"),
        (),
    )


def test_a_template_entry_and_a_commented_out_one(tmp_path):
    source = tmp_path / "op.cpp"
    source.write_text(
        '// extern "C" __global__ __aicore__ void old(GM_ADDR a, GM_ADDR tiling) {}\n'
        "template <uint32_t MODE, bool FAST>\n"
        "__global__ __aicore__ void op(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,\n"
        "                              GM_ADDR tiling) {}\n"
    )
    entry = kernel.entry_of(source)
    assert (entry.name, entry.params, entry.template) == (
        "op",
        ("x", "y", "workspace", "tiling"),
        ("MODE", "FAST"),
    )


def test_a_source_without_an_entry_is_refused(tmp_path):
    (tmp_path / "helper.cpp").write_text("int helper() { return 0; }\n")
    with pytest.raises(SpecError, match="no `__global__ __aicore__ void` entry"):
        kernel.entry_of(tmp_path / "helper.cpp")


def test_a_tiling_key_is_unpacked_into_template_arguments_in_declaration_order(tmp_path):
    header = tmp_path / "op_tiling_key.h"
    header.write_text(
        "ASCENDC_TPL_ARGS_DECL(Op, ASCENDC_TPL_UINT_DECL(MODE, 2, ASCENDC_TPL_UI_LIST, 0, 1, 2),\n"
        "    ASCENDC_TPL_BOOL_DECL(FAST, 0, 1), );\n"
    )
    entry = kernel.Entry(tmp_path / "op.cpp", "op", ("x", "workspace", "tiling"), ("MODE", "FAST"))
    (tmp_path / "op.cpp").write_text("")
    assert kernel.template_args(entry, 0b110, [header]) == (2, 1)
    assert kernel.template_args(entry, 0b001, [header]) == (1, 0)
    lonely = kernel.Entry(entry.source, "op", entry.params, ("ONLY",))
    with pytest.raises(SpecError, match="no ASCENDC_TPL_ARGS_DECL"):
        kernel.template_args(lonely, 1, [header])


def test_the_kernel_side_tiling_struct_sits_every_field_at_its_offset():
    layout = TilingLayout(
        "Gappy",
        (Field("a", "uint8_t", 1, 0), Field("b", "uint64_t", 1, 8), Field("c", "float", 3, 16)),
        32,
    )
    text = kernel.tiling_header(layout)
    body = text[text.index("struct Gappy") :]
    assert body.index("uint8_t a;") < body.index("opsdk_pad1[7];") < body.index("uint64_t b;")
    assert "float c[3];" in body and "opsdk_tail[4];" in body
    assert "static_assert(sizeof(Gappy) == 32);" in body
    assert "#define GET_TILING_DATA(var, tiling) Gappy var;" in text


def test_a_nested_struct_is_declared_before_the_struct_using_it():
    text = kernel.tiling_header(SCALE_LAYOUT)
    assert text.index("struct ScaleSplit") < text.index("struct ScaleTilingData")
    assert "ScaleSplit split;" in text


def test_the_op_s_other_tiling_classes_are_declared_and_get_tiling_data_reads_the_key_s():
    """A kernel's other keys' branches name the classes the op registers for them
    (``GET_TILING_DATA_WITH_STRUCT(Other, ...)``): each declared once, the key's read."""
    other = TilingLayout("WideTilingData", (Field("width", "uint64_t", 1, 0),), 8)
    text = kernel.tiling_header(SCALE_LAYOUT, (other, SCALE_LAYOUT))
    assert text.count("struct WideTilingData {") == text.count("struct ScaleTilingData {") == 1
    assert "#define GET_TILING_DATA(var, tiling) ScaleTilingData var;" in text


def test_each_parameter_dtype_becomes_the_kernel_s_dtype_macros():
    entry = kernel.Entry(Path("/p/op.cpp"), "op", ("x", "y", "workspace", "tiling"))
    unit = translation_unit(entry, {"x": "float16", "y": "bfloat16"}, (), None)
    assert unit.startswith('#include "kernel_operator.h"')  # the precompiled header first
    assert "#define DTYPE_X half" in unit and "#define ORIG_DTYPE_X DT_FLOAT16" in unit
    assert "#define DTYPE_Y bfloat16_t" in unit and "#define DT_FLOAT16 1" in unit
    assert "#define OPSDK_CALL(a) op(a[0], a[1], a[2], a[3])" in unit
    with pytest.raises(SpecError, match="complex64"):
        translation_unit(entry, {"x": "complex64"}, (), None)


def test_a_launch_names_the_entry_s_parameters_before_any_process_starts(tmp_path):
    entry = kernel.Entry(tmp_path / "op.cpp", "op", ("x", "y", "workspace", "tiling"))
    compiled = kernel.Kernel(kernel.Built(tmp_path / "absent.so", entry, 0.0))
    tiling = TilingRun(b"", 1, 0, (0,))
    with pytest.raises(SpecError, match="op takes x, y: no parameter z"):
        compiled.launch({"x": b"", "z": b""}, {"y": 4}, tiling)
    with pytest.raises(SpecError, match="give y"):
        compiled.launch({"x": b""}, {}, tiling)


def test_a_tensor_list_is_a_block_in_cann_s_layout_naming_its_tensors_buffers(tmp_path):
    """Per list: the pointer table's byte offset, per tensor (1 << 32 | dims) and its dims,
    then a slot per tensor holding its buffer's index (the launcher's GM address there);
    the tensors' buffers after the entry's parameters, named ``<param>[<i>]``."""
    entry = kernel.Entry(tmp_path / "op.cpp", "op", ("x", "y", "workspace", "tiling"))
    compiled = kernel.Kernel(kernel.Built(tmp_path / "absent.so", entry, 0.0))
    x = [kernel.Member((2, 3), b"a" * 24), kernel.Member((4,), b"b" * 16)]
    y = [kernel.Member((2, 3), 24), kernel.Member((4,), 16)]
    buffers, carried = compiled._buffers({"x": x}, {"y": y}, TilingRun(b"T", 1, 0, (0,)))
    assert [(b["name"], b["kind"], b["size"]) for b in buffers] == [
        ("x", "list", 64), ("y", "list", 64), ("workspace", "workspace", 0),
        ("tiling", "tiling", 1), ("x[0]", "input", 24), ("x[1]", "input", 16),
        ("y[0]", "output", 24), ("y[1]", "output", 16),
    ]  # fmt: skip
    header = (48, 1 << 32 | 2, 2, 3, 1 << 32 | 1, 4)
    assert struct.unpack("<8q", carried[0]) == (*header, 4, 5)
    assert struct.unpack("<8q", carried[1]) == (*header, 6, 7)
    assert carried[2:] == [b"T", b"a" * 24, b"b" * 16]


def test_a_finding_line_reads_back_with_its_case():
    found = _finding("finding\tub-overflow\t3\top_kernel/op.h\t42\t2\tInitBuffer of ...", "[8] f32")
    assert found == kernel.Finding(
        "ub-overflow", 3, "op_kernel/op.h", 42, 2, "InitBuffer of ...", "[8] f32"
    )
    assert str(found) == (
        "ub-overflow in block 3 of case [8] f32 at op_kernel/op.h:42: InitBuffer of ... (2 times)"
    )
    assert set(kernel.KINDS) >= {found.kind, "gm-out-of-bounds", "gm-write-race", "crash"}


def test_another_op_s_kernel_headers_resolve_as_cann_s_build_lays_them_out(tmp_path):
    """``../foreach_utils/x.h`` from foreach_exp's kernel names foreach_utils' op_kernel
    (and what that includes as ``../<op>/``, transitively); an op folder absent is none."""
    family = tmp_path / "foreach"
    for op, text in {
        "foreach_exp": '#include "../foreach_utils/unary.h"\n#include "../gone/x.h"\n',
        "foreach_utils": '#include "../foreach_common/common.h"\n',
        "foreach_common": "",
    }.items():
        (family / op / "op_kernel").mkdir(parents=True)
        (
            family / op / "op_kernel" / ("unary.h" if op == "foreach_utils" else "common.h")
        ).write_text(text)
    source = family / "foreach_exp" / "op_kernel" / "foreach_exp.cpp"
    source.write_text(
        '#include "common.h"\n'
        'extern "C" __global__ __aicore__ void foreach_exp(GM_ADDR x, GM_ADDR w, GM_ADDR t) {}\n'
    )
    entry = kernel.entry_of(source)
    assert sources.sibling_kernels(entry) == {
        "foreach_utils": (family / "foreach_utils" / "op_kernel").resolve(),
        "foreach_common": (family / "foreach_common" / "op_kernel").resolve(),
    }
    (folder,) = sources.include_dirs(entry)
    assert (folder / ".." / "foreach_utils" / "unary.h").is_file()
    assert (folder / ".." / "foreach_common" / "common.h").is_file()


def test_a_kernel_including_no_other_op_needs_no_folder():
    entry = kernel.entry_of(PROJECTS / "planted" / "op_kernel" / "planted.cpp")
    assert sources.include_dirs(entry) == ()


def test_an_entry_under_another_chip_s_conditional_is_passed_over(tmp_path):
    """An arch35 template entry before the 910B one, under ``#if __CCE_AICORE__ == 310``:
    the 910B build's entry is the one after ``#else``; a branch on anything else is kept."""
    source = tmp_path / "op.cpp"
    source.write_text(
        "#if defined(__CCE_AICORE__) && __CCE_AICORE__ == 310\n"
        "template <uint32_t schMode>\n"
        "__global__ __aicore__ void op(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling) {}\n"
        "#else\n"
        "#if defined(ANY_OTHER)\n"
        "#endif\n"
        'extern "C" __global__ __aicore__ void op(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,\n'
        "                                         GM_ADDR tiling) {}\n"
        "#endif\n"
    )
    entry = kernel.entry_of(source)
    assert (entry.params, entry.template) == (("x", "y", "workspace", "tiling"), ())


def test_a_tiling_registered_in_another_op_s_folder_beside_it_is_the_op_s(tmp_path):
    """ops-nn registers GemmaRmsNorm's TilingFunc in rms_norm's op_host: the op's own
    op_host (absent or without it) is looked in first, then its siblings'."""
    for op, registered in (("base_norm", "BaseNorm"), ("other", "Unrelated")):
        (tmp_path / op / "op_host").mkdir(parents=True)
        (tmp_path / op / "op_host" / f"{op}_tiling.cpp").write_text(
            "static int T(void* c) { return 0; }\n"
            f"IMPL_OP_OPTILING({registered}).Tiling(T);\n"
            + ("IMPL_OP_OPTILING(ScaledNorm).Tiling(T);\n" if op == "base_norm" else "")
        )
    kernels = tmp_path / "scaled_norm" / "op_kernel"
    kernels.mkdir(parents=True)
    (kernels / "scaled_norm.cpp").write_text(
        'extern "C" __global__ __aicore__ void scaled_norm(GM_ADDR x, GM_ADDR workspace, '
        "GM_ADDR tiling) {}\n"
    )
    found = sources.find("ScaledNorm", tmp_path / "scaled_norm")
    assert found.tiling.sources[0] == tmp_path / "base_norm" / "op_host" / "base_norm_tiling.cpp"


_DEF = """#include "register/op_def_registry.h"
{include}
namespace ops {{
class Hist : public OpDef {{
public:
    explicit Hist(const char* name) : OpDef(name)
    {{
        this->Input("x").ParamType(REQUIRED).DataType({types});
        this->Output("y").ParamType(REQUIRED).DataType({{ge::DT_INT32}}).InitValue(0);
        this->AICore().AddConfig("ascend910b");
    }}
}};
OP_ADD(Hist);
}}  // namespace ops
"""


@pytest.mark.parametrize(
    ("include", "types", "expected"),
    [
        ("", "{ge::DT_FLOAT}", {"y": 0.0}),
        ('#include "../../utils/op_host/proto_utils.h"', "FloatTypes()", {}),
    ],
)
def test_the_outputs_the_runtime_fills_are_the_definition_s_init_values(
    tmp_path, include, types, expected
):
    """OpDef's ``.InitValue(0)``: the runtime zeroes y first; a definition whose headers
    the package's copy lacks says none (its outputs start as poison)."""
    (tmp_path / "op_host").mkdir()
    (tmp_path / "op_host" / "hist_def.cpp").write_text(_DEF.format(include=include, types=types))
    assert sources.filled(sources.AscendC(tmp_path, None, None), "Hist") == expected
