"""The tiling twin without a compiler: where a project's TilingFuncs are, the chip table,
and how a run's reply is judged (a library whose answers are given, as the entry writes
them). The compiled runs are tests/e2e/test_tiling.py's."""

from pathlib import Path

import pytest

from opsdk.cann import tiling
from opsdk.cann.infer import Crashed, Given, Unlinked, resources
from opsdk.cann.infer.build import _dtypes_header
from opsdk.errors import SpecError

PROJECT = Path(__file__).parents[1] / "e2e" / "tiling_project"
X = Given(1, (8, 64))
CASE = tiling.Case(((X,),), (X,), (2.0,))


def test_the_project_s_tilings_are_found_with_their_functions_and_sources():
    found = tiling.find_all(PROJECT)
    assert sorted(found) == [
        "RowScale",
        "RowScaleAllRows",
        "RowScaleClass",
        "RowScaleCrash",
        "RowScaleLong",
        "RowScaleRefuse",
    ]
    source = found["RowScaleAllRows"]
    assert source.function.name == "TilingRowScaleAllRows"
    text = source.function.file.read_text().splitlines()
    assert "TilingRowScaleAllRows(gert::TilingContext" in text[source.function.line - 1]
    assert source.parse.name == "TilingPrepareRowScale"
    host = PROJECT / "op_host"  # the registering file first, then its folder's other tilings
    assert source.sources == (host / "row_scale_tiling.cpp", host / "row_scale_class_tiling.cpp")


def test_a_chip_s_resources_come_from_one_table_and_an_unknown_chip_is_refused():
    chip = resources("ascend910b")
    assert (chip.aiv, chip.aic, chip.ub, chip.soc) == (48, 24, 196608, "Ascend910B")
    with pytest.raises(SpecError, match="'ascend999'.*use one of ascend910b"):
        resources("ascend999")


def test_the_entry_knows_each_dtype_s_size_from_its_name():
    header = _dtypes_header()
    assert "case ge::DT_FLOAT16: return 2;" in header
    assert "case ge::DT_COMPLEX64: return 8;" in header
    assert "case ge::DT_BOOL: return 1;" in header
    assert "case ge::DT_INT4: return -1;" in header


class Answered(tiling.TilingLibrary):
    """A library whose entry's reply is given (or whose worker crashed, saying ``said``)."""

    def __init__(self, reply: str = "", said: tuple[str, ...] | None = None):
        super().__init__(Path("/nowhere.so"), PROJECT)
        self.reply, self.said = reply, said

    def _ask(self, op_type, request):
        if self.said is not None:
            raise Crashed("ended its process (exit 1)", "Tiling", self.said)
        return 0, self.reply


def reply(**values) -> str:
    """An entry's reply for a run that set ``values`` over a clean one's."""
    clean = dict(
        tiling="0",
        blockdim="8",
        key="3",
        schedule="0",
        atomic="0",
        blockdimat="op_host/row_scale_tiling.cpp:44",
        datasizeat="op_host/row_scale_tiling.cpp:53",
        workspaces="1024 16",
        capacity="16384",
        datasize="8",
        overrun="0",
        template="schMode=1 isHalf=1",
        data="0100000002000000",
    )
    clean.update(values)
    layout = "struct T 8\nfield a uint32_t 1 0 4\nfield b uint32_t 1 4 4\nend\n"
    return "".join(f"{k} {v}\n" for k, v in clean.items()) + layout


def run(text: str) -> tiling.TilingRun:
    source = tiling.find("RowScale", PROJECT)
    return Answered(text).run(source, CASE)


def test_a_clean_reply_is_read_into_a_run():
    result = run(reply())
    assert result.ok and (result.block_dim, result.tiling_key) == (8, 3)
    assert result.workspace_sizes == (1024, 16) and result.workspace == 1040
    assert result.data == bytes.fromhex("0100000002000000")
    assert result.template_args == (("schMode", 1), ("isHalf", 1))
    assert result.layout == tiling.TilingLayout(
        "T", (tiling.Field("a", "uint32_t", 1, 0), tiling.Field("b", "uint32_t", 1, 4)), 8
    )


@pytest.mark.parametrize(
    "values, kind, said, where",
    [
        (dict(blockdim="0"), "block_dim", "block dim 0", "row_scale_tiling.cpp:44"),
        (dict(blockdim="49"), "block_dim", "49 above the 48", "row_scale_tiling.cpp:44"),
        (dict(datasize="20000"), "data_overflow", "capacity 16384", "row_scale_tiling.cpp:53"),
        (dict(datasize="12"), "data_overflow", "than T (8 bytes)", "row_scale_tiling.cpp:53"),
        (dict(overrun="5"), "data_overflow", "wrote 5 bytes past", "row_scale_tiling.cpp:62"),
    ],
)
def test_what_a_tiling_set_is_judged_against_the_chip_and_its_data_class(values, kind, said, where):
    (finding,) = run(reply(**values)).findings
    assert finding.kind == kind and said in finding.message
    assert finding.where == f"{PROJECT}/op_host/{where}" and finding.case == str(CASE)


def test_a_failure_return_names_the_last_error_the_tiling_logged():
    text = "tiling 4294967295\nlog E op_host/row_scale_tiling.cpp:24 node: cols too wide\n"
    (finding,) = run(text).findings
    assert finding.kind == "failed" and finding.message.endswith("node: cols too wide")
    assert finding.where == f"{PROJECT}/op_host/row_scale_tiling.cpp:24"


def test_a_sanitizer_report_names_the_access_and_the_op_s_line():
    said = (
        "==1==ERROR: AddressSanitizer: stack-buffer-overflow on address 0x7ff",
        "READ of size 4 at 0x7ff thread T0",
        f"    #0 0x7f01 in Ops::Base::CeilDiv {tiling.INCLUDE}/opsdk_tiling.h:200",
        "    #1 0x7f02 in Tile op_host/row_scale_tiling.cpp:35",
        "    #2 0x7f03 in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58",
    )
    result = Answered(said=said).run(tiling.find("RowScale", PROJECT), CASE)
    (finding,) = result.findings
    assert result.status is None and finding.kind == "crash"
    assert "read of 4 bytes: stack-buffer-overflow in Tile" in finding.message
    assert finding.where == f"{PROJECT}/op_host/row_scale_tiling.cpp:35"


def test_a_library_that_does_not_load_is_said_not_a_finding():
    """A function the tiling calls defined in another source of the project (ops-transformer's
    shared tiling helpers): no tiling ran, so no finding; the caller says why."""

    class Unloaded(Answered):
        def _ask(self, op_type, request):
            raise Unlinked("Ops::Transformer::OpTiling::EnsureNotScalar(gert::Shape const&)")

    with pytest.raises(Unlinked, match="EnsureNotScalar"):
        Unloaded().run(tiling.find("RowScale", PROJECT), CASE)


def test_where_an_unlinked_function_is_defined_is_found_past_a_comment_s_frame_of_stars(
    tmp_path,
):
    """A kernel's comment framed by a line of ``*`` in a file naming the function (ops-nn's
    add_layer_norm_grad.cpp): the search for its definition took hours before."""
    import time

    from opsdk.cann.infer.call import _defining

    frame = "*" * 30
    (tmp_path / "kernel.cpp").write_text(f"/*\n * Helper: a call\n {frame}*/\nHelper(1);\n")
    (tmp_path / "helper.cpp").write_text("static const int* Helper(int x)\n{\n    return 0;\n}\n")
    start = time.perf_counter()
    assert _defining("Helper", tmp_path) == [tmp_path / "helper.cpp"]
    assert time.perf_counter() - start < 5


def test_the_workspace_for_updatable_is_the_largest_of_the_runs_that_succeeded():
    runs = [run(reply(workspaces="10 5")), run(reply(workspaces="40")), run("tiling 1\n")]
    assert tiling.workspace_size(runs) == 40
    assert tiling.workspace_size([]) == 0


def test_an_updatable_op_without_a_tiling_beside_its_definition_keeps_the_default(tmp_path):
    from types import SimpleNamespace

    from opsdk.scaffold import cann_tiling

    (tmp_path / "row_scale_def.cpp").write_text("// an OpDef, no tiling beside it\n")
    side = SimpleNamespace(ir=SimpleNamespace(op_type="RowScale"))
    assert cann_tiling.workspace(tmp_path / "row_scale_def.cpp", side) is None


def test_a_case_says_its_shapes_host_data_attrs_chip_and_core_limit():
    k = Given(9, (1,), (3).to_bytes(8, "little"))
    case = tiling.Case(((X,), (k,)), (X,), (-1,), core_limit=(4, 8))
    assert str(case) == (
        "inputs [8, 64], [1]=0300000000000000, attrs [-1] on ascend910b limited to (4, 8)"
    )
    assert str(tiling.Case(((X,),), (X,), label="the 8 x 64 case")) == "the 8 x 64 case"
