"""``opsdk audit`` of a team's op library written without opsdk (audit_library/team_ops:
torch.library schemas, register_fake, TorchAir converters calling ge.custom_op), its GE
side from its CANN files (``--ir``: a REG_OP header, an OpDef source, msopgen JSON).
Two converters are planted wrong; their fixed twins make the library clean."""

import json
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

LIBRARY = Path(__file__).with_name("audit_library")
CHECKS = {"schema": 1, "fake": 3, "converter": 2}  # cells per op


def _verdicts(run) -> dict[str, dict[str, set[str]]]:
    found: dict[str, dict[str, set[str]]] = {}
    for r in run.report["results"]:
        found.setdefault(r["op"], {}).setdefault(r["column"], set()).add(r["status"])
    return found


def test_planted_converters_fail_against_the_cann_files_and_their_twins_pass(tmp_path, opsdk_cli):
    found = opsdk_cli("audit", LIBRARY / "team_ops", "--ir", LIBRARY / "cann", json_report=True)
    assert found.code == 1, found.stdout + found.stderr
    assert "audited 3 of 3 ops" in found.stdout
    verdicts = _verdicts(found)
    assert verdicts == {
        "team::scale_add": {"schema": {"pass"}, "fake": {"pass"}, "converter": {"pass"}},
        "team::swap_add": {"schema": {"pass"}, "fake": {"pass"}, "converter": {"fail"}},
        "team::team_rms": {"schema": {"pass"}, "fake": {"pass"}, "converter": {"fail"}},
    }
    [rms] = found.cells(op="team::team_rms", column="converter", shapes="static")
    assert "lacks attrs ['epsilon']" in rms["message"]
    [traced] = found.cells(op="team::team_rms", column="fake", shapes="static")
    assert "derived from the dtype rows of its CANN definition" in traced["message"]
    assert "op_host/team_rms.cpp" in rms["message"]  # the definition it was checked against
    [swap] = found.cells(op="team::swap_add", column="converter", shapes="static")
    assert "has inputs ['x2', 'x1']" in swap["message"] and "swap_add.json" in swap["message"]

    # The twins: the same library with both converters fixed is clean, each op in a child.
    fixed = tmp_path / "fixed"
    shutil.copytree(LIBRARY, fixed)
    source = fixed / "team_ops" / "__init__.py"
    text = source.read_text()
    text = text.replace(
        'outputs=["y"])\n\n\n@register',
        'outputs=["y"], attrs={"epsilon": ge.attr.Float(epsilon)})\n\n\n@register',
    )
    text = text.replace('inputs={"x2": x2, "x1": x1}', 'inputs={"x1": x1, "x2": x2}')
    source.write_text(text)
    # GE's own Data op, as CANN repositories' stub headers declare it (ops-nn's
    # common/stub): a graph's input nodes are checked against no REG_OP
    (fixed / "cann" / "stub_ops.h").write_text(
        "REG_OP(Data)\n    .INPUT(x, TensorType::ALL())\n    .OUTPUT(y, TensorType::ALL())\n"
        "    .ATTR(index, Int, 0)\n    .OP_END_FACTORY_REG(Data)\n"
    )
    # --isolate: each op's child reads the --ir files too
    clean = opsdk_cli(
        "audit", fixed / "team_ops", "--ir", fixed / "cann", "--isolate", json_report=True
    )
    assert clean.code == 0, clean.stdout + clean.stderr
    assert {r["status"] for r in clean.report["results"]} == {"pass"}
    assert len(clean.report["results"]) == 3 * sum(CHECKS.values())


def test_without_its_cann_files_the_converter_is_not_audited_and_says_why(opsdk_cli):
    run = opsdk_cli(
        "audit", LIBRARY / "team_ops", "--checks", "converter", "--shapes", "static",
        json_report=True,
    )  # fmt: skip
    assert run.code == 0, run.stdout + run.stderr  # nothing found, nothing passed
    assert {r["status"] for r in run.report["results"]} == {"skip"}
    assert "not audited: team::scale_add" in run.stdout
    assert "team::team_rms [converter-static]: skip: not audited: " in run.stdout  # why
    for r in run.report["results"]:
        assert "give its CANN definition with --ir" in r["message"], r["message"]


def test_a_wrong_ir_path_or_a_module_defining_no_op_is_refused_in_one_line(tmp_path, opsdk_cli):
    run = opsdk_cli("audit", LIBRARY / "team_ops", "--ir", LIBRARY / "no_such_folder")
    assert run.code == 2
    assert run.stderr.strip().splitlines() == [
        f"opsdk audit: error: --ir {LIBRARY / 'no_such_folder'}: no such file or folder"
    ]
    (tmp_path / "no_ops.py").write_text("import torch\n")
    run = opsdk_cli("audit", tmp_path / "no_ops.py")
    assert run.code == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("opsdk audit: error: no_ops defines no op at its import"), line


# What a team's converter module imports (the planted libraries below start with it).
_IMPORTS = """
import torch
from torchair import ge, register_fx_node_ge_converter
from torchair._ge_concrete_graph.ge_converter.converter_utils import (
    F16,
    F32,
    Support,
    declare_supported,
)
"""

_ROWS = (
    _IMPORTS
    + """
_lib = torch.library.Library("rows", "DEF")
_lib.define("rms(Tensor x, Tensor gamma) -> (Tensor, Tensor)")


@torch.library.register_fake("rows::rms")
def _rms_fake(x, gamma):
    return torch.empty_like(x), x.new_empty(x.shape[:-1] + (1,))  # rstd: x's dtype, not float


@declare_supported([Support(F32(4, 8), F32(8)), Support(F16(4, 8), F16(8))])
@register_fx_node_ge_converter(torch.ops.rows.rms.default)
def _convert_rms(x, gamma, meta_outputs=None):
    return ge.custom_op("RowsRms", inputs={"x": x, "gamma": gamma}, outputs=["y", "rstd"])
"""
)

_ROWS_PROTO = """REG_OP(RowsRms)
    .INPUT(x, TensorType({DT_FLOAT, DT_FLOAT16}))
    .INPUT(gamma, TensorType({DT_FLOAT, DT_FLOAT16}))
    .OUTPUT(y, TensorType({DT_FLOAT, DT_FLOAT16}))
    .OUTPUT(rstd, TensorType({DT_FLOAT}))
    .OP_END_FACTORY_REG(RowsRms)
"""


def test_the_meta_functions_dtypes_are_checked_in_every_declared_case_not_the_first_alone(
    tmp_path, opsdk_cli
):
    (tmp_path / "rows_ops").mkdir()
    (tmp_path / "rows_ops" / "__init__.py").write_text(_ROWS)
    (tmp_path / "rows_proto.h").write_text(_ROWS_PROTO)
    run = opsdk_cli(
        "audit", tmp_path / "rows_ops", "--checks", "converter", "--shapes", "static",
        "--ir", tmp_path / "rows_proto.h", json_report=True,
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    [cell] = run.cells(op="rows::rms", column="converter", shapes="static")
    assert "gives output 1 dtype torch.float16; it is rstd" in cell["message"], cell["message"]


_PLANTED = (
    _IMPORTS
    + """
_lib = torch.library.Library("planted", "DEF")
for schema in (
    "drops(Tensor x, Tensor? scale=None) -> Tensor",
    "feeds(Tensor x, Tensor? scale=None) -> Tensor",
    "int_eps(Tensor x, float epsilon=1e-06) -> Tensor",
    "dim_default(Tensor x, int dim=-1) -> Tensor",
    "f16_only(Tensor x) -> Tensor",
    "half_rstd(Tensor x) -> (Tensor, Tensor)",
):
    _lib.define(schema)
    if not schema.startswith("half_rstd"):
        torch.library.register_fake(
            f"planted::{schema.split('(')[0]}", lambda x, *a, **k: torch.empty_like(x), lib=_lib
        )


@declare_supported([Support(F32(2, 4), scale=F32(4))])
@register_fx_node_ge_converter(torch.ops.planted.drops.default)
def _drops(x, scale=None, meta_outputs=None):  # scale given, never fed
    return ge.custom_op("Scaled", inputs={"x": x, "scale": None}, outputs=["y"])


@declare_supported([Support(F32(2, 4), scale=F32(4))])
@register_fx_node_ge_converter(torch.ops.planted.feeds.default)
def _feeds(x, scale=None, meta_outputs=None):
    return ge.custom_op("Scaled", inputs={"x": x, "scale": scale}, outputs=["y"])


@register_fx_node_ge_converter(torch.ops.planted.int_eps.default)
def _int_eps(x, epsilon: float = 1e-06, meta_outputs=None):
    attrs = {"epsilon": ge.attr.Int(epsilon)}  # a float schema argument
    return ge.custom_op("Eps", inputs={"x": x}, outputs=["y"], attrs=attrs)


@declare_supported([Support(F32(2, 4))])
@register_fx_node_ge_converter(torch.ops.planted.dim_default.default)
def _dim_default(x, dim: int = 0, meta_outputs=None):  # the schema says -1
    return ge.custom_op("Dim", inputs={"x": x}, outputs=["y"], attrs={"dim": ge.attr.Int(dim)})


@torch.library.register_fake("planted::half_rstd", lib=_lib)
def _half_rstd_fake(x):  # rstd of x's dtype: its definition's rows make it float
    return torch.empty_like(x), x.new_empty(x.shape[:-1] + (1,))


@register_fx_node_ge_converter(torch.ops.planted.half_rstd.default)
def _half_rstd(x, meta_outputs=None):  # declares no case: derived from the JSON's rows
    return ge.custom_op("HalfRstd", inputs={"x": x}, outputs=["y", "rstd"])


@declare_supported([Support(F32(2, 4))])
@register_fx_node_ge_converter(torch.ops.planted.f16_only.default)
def _f16_only(x, meta_outputs=None):
    return ge.custom_op("Half", inputs={"x": x}, outputs=["y"])
"""
)

_PLANTED_PROTOS = """REG_OP(Scaled)
    .INPUT(x, TensorType({DT_FLOAT}))
    .OPTIONAL_INPUT(scale, TensorType({DT_FLOAT}))
    .OUTPUT(y, TensorType({DT_FLOAT}))
    .OP_END_FACTORY_REG(Scaled)

REG_OP(Eps)
    .INPUT(x, TensorType({DT_FLOAT}))
    .OUTPUT(y, TensorType({DT_FLOAT}))
    .ATTR(epsilon, Float, 1e-06)
    .OP_END_FACTORY_REG(Eps)

REG_OP(Dim)
    .INPUT(x, TensorType({DT_FLOAT}))
    .OUTPUT(y, TensorType({DT_FLOAT}))
    .ATTR(dim, Int, -1)
    .OP_END_FACTORY_REG(Dim)
"""

_HALF = [
    {
        "op": "Half",
        "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
        "output_desc": [
            {"name": "y", "param_type": "required", "format": ["ND"], "type": ["fp16"]}
        ],
        "attr": [],
    },
    {
        "op": "HalfRstd",
        "input_desc": [
            {
                "name": "x",
                "param_type": "required",
                "format": ["ND", "ND"],
                "type": ["fp16", "bf16"],
            }
        ],
        "output_desc": [
            {
                "name": "y",
                "param_type": "required",
                "format": ["ND", "ND"],
                "type": ["fp16", "bf16"],
            },
            {
                "name": "rstd",
                "param_type": "required",
                "format": ["ND", "ND"],
                "type": ["float", "float"],
            },
        ],
        "attr": [],
    },
]


def test_planted_converter_mistakes_each_caught_and_an_unchecked_row_said(tmp_path, opsdk_cli):
    """A given optional input left unfed, an Int attr built of a float, a converter default
    (0) that is the first value tried for the schema's (-1), a Meta dtype outside the row
    of the case derived from the op's definition; a case outside every dtype row is a note
    on the pass. The twin feeding the optional input is clean."""
    (tmp_path / "planted_ops.py").write_text(_PLANTED)
    (tmp_path / "planted_proto.h").write_text(_PLANTED_PROTOS)
    (tmp_path / "half.json").write_text(json.dumps(_HALF))
    run = opsdk_cli(
        "audit", tmp_path / "planted_ops.py", "--checks", "converter", "--shapes", "static",
        "--ir", tmp_path / "planted_proto.h", "--ir", tmp_path / "half.json", json_report=True,
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    cells = {r["op"].split("::")[1]: r for r in run.report["results"]}
    assert cells["feeds"]["status"] == "pass", cells["feeds"]["message"]
    expected = {
        "drops": "the call gives scale, an optional input of GE node",
        "int_eps": "setting a GE attr: build the attr as the argument's type",
        "dim_default": "dim at its schema default -1 reaches GE as Dim attr dim=0",
        # its definition's first row (fp16), not a float32 case outside every row
        "half_rstd": "output 1 (rstd) torch.float16 of GE node",
    }
    for op, words in expected.items():
        assert cells[op]["status"] == "fail" and words in cells[op]["message"], cells[op]
    half = cells["f16_only"]
    assert (
        half["status"] == "pass" and "is fed x DT_FLOAT, no row its msopgen JSON" in half["message"]
    )


def test_several_targets_are_one_library_each_op_once(tmp_path, opsdk_cli):
    """Modules named as `python -c` imports them from the current directory; the second
    imports the first, whose op stays one."""
    fake = "torch.library.register_fake('multi::{0}', lambda x: torch.empty_like(x), lib=_lib)\n"
    (tmp_path / "multi_a.py").write_text(
        "import torch\n_lib = torch.library.Library('multi', 'FRAGMENT')\n"
        "_lib.define('one(Tensor x) -> Tensor')\n" + fake.format("one")
    )
    (tmp_path / "multi_b.py").write_text(
        "import torch\nimport multi_a\n_lib = torch.library.Library('multi', 'FRAGMENT')\n"
        "_lib.define('two(Tensor x) -> Tensor')\n" + fake.format("two")
    )
    run = opsdk_cli("audit", "multi_a", "multi_b", "--checks", "schema", json_report=True)
    assert run.code == 0, run.stderr
    assert [r["op"] for r in run.report["results"]] == ["multi::one", "multi::two"]
    assert "audited 2 of 2 ops" in run.stdout
