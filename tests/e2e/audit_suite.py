"""``opsdk audit``: torch_npu's library read from the wheel, each check against a planted
defect and its correct twin, and the CLI's reports and exit codes."""

from __future__ import annotations

import dataclasses

import pytest

pytestmark = pytest.mark.slow


def test_the_wheel_converts_142_overloads_each_with_schema_and_meta(wheel):
    converted = wheel.converted()
    names = {c.qualname for c in converted}
    assert len(names) == len(converted) == 142
    assert "npu::npu_grouped_matmul.List" in names  # registered by a call, not a decorator
    for c in converted:
        name = c.name if c.overload == "default" else f"{c.name}.{c.overload}"
        assert wheel.schema(name), name
        assert wheel.meta_line(c.name), c.name
    assert ("npu_add_rms_norm_v2_functional", "npu_add_rms_norm_v2", (0, 1)) in [
        p[:3] for p in wheel.reinplace_pairs()
    ]


# --- Each check against a planted defect and its correct twin --------------------------------

import torch  # noqa: E402

from opsdk._runtime.inputs import F32, Support, declare_supported  # noqa: E402
from opsdk.audit.checks import ge_node  # noqa: E402
from opsdk.harness.cell import CellFailure  # noqa: E402

_LIB = torch.library.Library("audit_t", "DEF")
_SCHEMAS = {
    "specializes": "specializes(Tensor x) -> Tensor",
    "symbolic": "symbolic(Tensor x) -> Tensor",
    "new_for_alias": "new_for_alias(Tensor(a!) x) -> Tensor(a!)",
    "returns_alias": "returns_alias(Tensor(a!) x) -> Tensor(a!)",
    "pair_": "pair_(Tensor(a!) x, Tensor y) -> Tensor",
    "pair_functional": "pair_functional(Tensor x, Tensor y) -> (Tensor, Tensor)",
    "kwonly": "kwonly(Tensor x, *, int k=1) -> Tensor",
    "on_cpu": "on_cpu(Tensor x) -> Tensor",
    "needs_ints": "needs_ints(Tensor x) -> Tensor",
    "no_meta": "no_meta(Tensor x) -> Tensor",  # defined without a Meta function
    "feeds_n": "feeds_n(Tensor x, SymInt n) -> Tensor",
    "bakes_n": "bakes_n(Tensor x, SymInt n) -> Tensor",
    "crashes": "crashes(Tensor x) -> Tensor",
    "sparse_out": "sparse_out(Tensor x) -> Tensor",
}
_METAS = {
    "specializes": lambda x: x.new_empty((int(x.shape[0]), x.shape[1])),  # int(): a guard
    "symbolic": lambda x: x.new_empty(x.shape),
    "new_for_alias": lambda x: x.new_empty(x.shape),  # a new tensor for an aliased return
    "returns_alias": lambda x: x,
    "pair_": lambda x, y: x.new_empty(x.shape),
    "pair_functional": lambda x, y: (x.new_empty(x.shape), x.new_empty(x.shape)),
    "kwonly": lambda x, k=1: x.new_empty(x.shape),
    "on_cpu": lambda x: torch.empty(x.shape, device="cpu"),  # not the inputs' device
    "needs_ints": lambda x: _needs_ints(x),
    "feeds_n": lambda x, n: x.new_empty(x.shape),
    "bakes_n": lambda x, n: x.new_empty(x.shape),
    "crashes": lambda x: x.new_empty(x.shape),
    "sparse_out": lambda x: torch.sparse_coo_tensor(  # x its values: a view of x
        torch.empty((2, x.numel()), dtype=torch.long, device=x.device),
        x.reshape(-1),
        x.shape,
        check_invariants=False,
    ),
}
_ARGS = {  # each op's one case; (F32(2, 3),) unless given
    "pair_": (F32(2, 3), F32(2, 3)),
    "pair_functional": (F32(2, 3), F32(2, 3)),
    "feeds_n": (F32(2, 3), 3),
    "bakes_n": (F32(2, 3), 3),
}


def _needs_ints(x):
    """A Meta function that takes concrete sizes only (fails under symbolic ones)."""
    if not all(isinstance(d, int) for d in x.shape):
        raise RuntimeError("the sizes must be known")
    return x.new_empty(x.shape)


@pytest.fixture(scope="module")
def planted():
    """The synthetic library: each op with its Meta function, the stand-in kernel, one
    case and, for the ops the converter check lowers, a TorchAir converter, as the audit
    reads a library."""
    from opsdk._runtime.device import ensure_npu
    from opsdk.audit import meta_kernel
    from opsdk.audit.model import AuditOp, Library, defined_at

    ensure_npu()
    for name, text in _SCHEMAS.items():
        _LIB.define(text)
        if name in _METAS:
            _LIB.impl(name, _METAS[name], "Meta")
    _register_converters()
    ops = {}
    for name in _SCHEMAS:
        op = getattr(torch.ops.audit_t, name).default
        meta_kernel.register(_LIB, op)
        cases = [Support(*_ARGS.get(name, (F32(2, 3),)))]
        declare_supported(op, cases, non_contiguous=False)
        converter = defined_at(getattr(op, "_ge_converter", None))
        ops[name] = AuditOp(op, f"audit_t::{name}", None, converter, cases, "declared")
    return Library("audit_t", list(ops.values())), ops


def _register_converters():
    """feeds_n's converter passes its SymInt n on to GE as the host input TorchAir gives
    it; bakes_n's bakes the first call's value in (a Const), the seed rules' defect;
    crashes' raises."""
    from opsdk.converters import int64_input
    from opsdk.irdef import Input, IrDef, Output, register
    from opsdk.offline.torchair import torchair_with_converters

    torchair = torchair_with_converters()
    ops = torch.ops.audit_t
    for op_type, op in (("FeedsN", ops.feeds_n.default), ("BakesN", ops.bakes_n.default)):
        inputs = [Input("x"), Input("n")]
        register(IrDef(op_type, inputs=inputs, outputs=[Output("y")], torch_op=op.name()))

    @torchair.register_fx_node_ge_converter(ops.feeds_n.default)
    def _feeds_n(x, n, meta_outputs=None):
        inputs = {"x": x, "n": int64_input(n)}
        return torchair.ge.custom_op("FeedsN", inputs=inputs, outputs=["y"])

    @torchair.register_fx_node_ge_converter(ops.bakes_n.default)
    def _bakes_n(x, n, meta_outputs=None):
        inputs = {"x": x, "n": int64_input(3)}
        return torchair.ge.custom_op("BakesN", inputs=inputs, outputs=["y"])

    @torchair.register_fx_node_ge_converter(ops.crashes.default)
    def _crashes(x, meta_outputs=None):
        raise ValueError("planted: this converter raises")


def _fails(check, library, op, shapes, layer, words):
    with pytest.raises(CellFailure) as found:
        check(library, op, shapes)
    assert found.value.layer == layer, found.value
    assert words in str(found.value)


@pytest.mark.parametrize("shapes", ["dynamic"])
def test_fake_a_meta_that_specializes_a_size_recompiles(planted, shapes):
    from opsdk.audit.checks import fake

    library, ops = planted
    _fails(fake.check, library, ops["specializes"], shapes, "recompile", "recompiled")
    assert fake.check(library, ops["symbolic"], shapes) == []


def test_fake_a_meta_that_fails_under_symbolic_sizes(planted):
    from opsdk.audit.checks import fake

    library, ops = planted
    _fails(fake.check, library, ops["needs_ints"], "dynamic", "fake", "fails under dynamic")
    assert fake.check(library, ops["needs_ints"], "static") == []  # concrete sizes: fine
    assert fake.check(library, ops["symbolic"], "dynamic") == []  # the twin


def test_fake_an_output_off_the_inputs_device(planted):
    from opsdk.audit.checks import fake

    library, ops = planted
    _fails(fake.check, library, ops["on_cpu"], "static", "fake", "makes a tensor on cpu")
    assert fake.check(library, ops["symbolic"], "static") == []  # the twin


def test_fake_an_op_without_a_fake_function(planted):
    """No Meta function: torch.compile cannot trace the op, whatever its cases (the
    stand-in kernel on PrivateUse1 and CPU hides nothing)."""
    from opsdk.audit.checks import fake

    library, ops = planted
    _fails(fake.check, library, ops["no_meta"], "static", "fake", "has no fake (Meta) function")
    assert fake.check(library, ops["symbolic"], "static") == []  # the twin


def test_schema_an_aliased_return_the_meta_makes_new(planted):
    from opsdk.audit.checks import schema

    library, ops = planted
    _fails(schema.check, library, ops["new_for_alias"], "static", "schema", "returns a new tensor")
    assert schema.check(library, ops["returns_alias"], "static") == []


def test_a_sparse_result_is_neither_compared_nor_traced(planted):
    """npu_gather_backward's kind: a sparse result holds its input as its values by design
    (no alias finding), and Dynamo cannot trace it (its limit, not the Meta function's: a
    note); a dense result (the twin) is traced."""
    from opsdk.audit.checks import Undecided, fake, schema

    library, ops = planted
    assert schema.check(library, ops["sparse_out"], "static") == []
    with pytest.raises(Undecided, match="Dynamo cannot trace the call"):
        fake.check(library, ops["sparse_out"], "static")
    assert fake.check(library, ops["symbolic"], "static") == []


@pytest.mark.parametrize(
    ("functional", "mutated", "words"),
    [
        ("pair_functional", (1,), "writes arguments [1]"),
        ("pair_gone", (0,), "pair_gone has no schema"),
        ("symbolic", (0,), "symbolic returns 1 tensors"),  # pair_'s output and its x: 2
    ],
)
def test_schema_a_reinplace_pair_that_disagrees_with_its_schemas(
    planted, functional, mutated, words
):
    from opsdk.audit.checks import schema

    library, ops = planted
    wrong = dataclasses.replace(library, pairs=[(functional, "pair_", mutated, "here:1")])
    pairs = lambda lib, op, _: schema.check_pairs(lib, op)  # noqa: E731
    _fails(pairs, wrong, ops["pair_"], None, "schema", words)
    right = dataclasses.replace(library, pairs=[("pair_functional", "pair_", (0,), "here:1")])
    schema.check_pairs(right, ops["pair_"])  # its twin: no finding


def test_an_op_without_a_case_is_not_audited(planted):
    """No case (``no_case`` says why): each check says so rather than run the op's
    declared one; with its case the op is clean (the twin)."""
    from opsdk.audit.checks import Undecided, converter, fake, schema

    library, ops = planted
    caseless = dataclasses.replace(ops["feeds_n"], cases=[], no_case="planted: no case")
    for check in (schema.check, fake.check, converter.check):
        assert check(library, ops["feeds_n"], "static") == []
        with pytest.raises(Undecided, match="planted: no case"):
            check(library, caseless, "static")


def test_converter_a_symint_baked_into_the_graph(planted):
    """The seed rules, as the converter check applies them: in dynamic mode a SymInt
    reaches the GE op as the int64 host input TorchAir makes of it. bakes_n's Const of
    the first call's value is a finding; feeds_n (the twin) is clean, and a static graph
    bakes n in rightly."""
    from opsdk.audit.checks import converter

    library, ops = planted
    words = "argument n of audit_t::bakes_n is symbolic"
    _fails(converter.check, library, ops["bakes_n"], "dynamic", "ge-graph", words)
    assert converter.check(library, ops["feeds_n"], "dynamic") == []
    assert converter.check(library, ops["bakes_n"], "static") == []


def test_converter_raising_on_a_declared_case(planted):
    """A converter that raises on a case TorchAir declares it supports is a finding; on a
    derived case it proves nothing (the converter may refuse it by design), nor does a
    failure no frame of the converter's file raised (here its file unknown): notes."""
    from opsdk.audit.checks import Undecided, converter

    library, ops = planted
    crashes = ops["crashes"]
    _fails(converter.check, library, crashes, "static", "converter", "planted: this converter")
    for changed in ({"origin": "derived"}, {"converter": None}):
        with pytest.raises(Undecided, match="not lowered"):
            converter.check(library, dataclasses.replace(crashes, **changed), "static")


@pytest.fixture(scope="module")
def torch_npu_library(wheel):
    from opsdk.audit import library

    return library.load("torch_npu")


def _op(lib, qualname):
    [op] = [o for o in lib.ops if o.qualname == qualname]
    return op


def test_converter_a_python_default_that_is_not_the_schemas(torch_npu_library):
    """The real defect: npu_group_norm_silu's converter defaults eps to 1e-4, the schema
    to 1e-5; npu_rms_norm's converter and schema agree (the twin)."""
    from opsdk.audit.checks import converter

    lib = torch_npu_library
    _fails(
        converter.check,
        lib,
        _op(lib, "npu::npu_group_norm_silu"),
        "static",
        "converter",
        "eps at its schema default 1e-05 reaches GE as GroupNormSilu attr eps=0.0001 ",
    )
    assert converter.check(lib, _op(lib, "npu::npu_rms_norm"), "static") == []


def test_converter_a_node_without_a_required_attr(torch_npu_library):

    lib = torch_npu_library
    op, node = _rms_norm_node(lib)
    ge_node.check_node(lib, node, op)  # the twin: as TorchAir builds it
    required = dataclasses.replace(
        lib.reg_op("RmsNorm").ir,
        attrs=tuple(dataclasses.replace(a, default=None) for a in lib.reg_op("RmsNorm").ir.attrs),
    )
    del node.attr["epsilon"]
    planted = dataclasses.replace(
        lib, reg_op=lambda t: dataclasses.replace(lib.reg_op(t), ir=required)
    )
    with pytest.raises(CellFailure, match=r"lacks attrs \['epsilon'\]"):
        ge_node.check_node(planted, node, op)


def test_converter_an_attr_of_another_type(torch_npu_library):
    """RmsNorm's epsilon is Float in its REG_OP: a node carrying it as an int is a finding."""

    lib = torch_npu_library
    op, node = _rms_norm_node(lib)
    assert ge_node.check_node(lib, node, op) == []  # the twin: as TorchAir builds it
    node.attr["epsilon"].i = 1
    found = r"attr epsilon is Float in .* carries a 'i' value \(1\): build it with ge.attr.Float"
    with pytest.raises(CellFailure, match=found):
        ge_node.check_node(lib, node, op)


def _rms_norm_lowered(lib):
    """npu_rms_norm, the GE graph TorchAir builds for its first case, and its Meta outputs."""
    from opsdk.audit.checks import converter, fake_outputs

    op = _op(lib, "npu::npu_rms_norm")
    call = _first(op)
    return op, converter.lower(op.op, call, "static").graph, fake_outputs(op.op, call)[0]


def _rms_norm_node(lib):
    """npu_rms_norm and the RmsNorm node TorchAir builds for its first case."""
    from opsdk.audit.checks import converter

    op = _op(lib, "npu::npu_rms_norm")
    graph = converter.lower(op.op, _first(op), "static").graph
    [node] = [n for n in graph.op if n.type == "RmsNorm"]
    return op, node


def test_converter_a_node_without_a_required_input(torch_npu_library):
    """RmsNorm(x, gamma): gamma left unfed is a finding; an input name the REG_OP text
    lacks (TorchAir's GE API and its own REG_OP disagree) is a note."""

    lib = torch_npu_library
    op, node = _rms_norm_node(lib)
    assert ge_node.check_node(lib, node, op) == []  # the twin
    renamed = type(node)()
    renamed.CopyFrom(node)
    renamed.input_desc[1].name = "beta"
    [note] = ge_node.check_node(lib, renamed, op)
    assert "inputs ['beta']" in note and "cannot be decided offline" in note
    node.input[1] = ""
    with pytest.raises(CellFailure, match=r"required: \['x', 'gamma'\]"):
        ge_node.check_node(lib, node, op)


def test_converter_outputs_against_the_reg_op(torch_npu_library):
    """npu_rms_norm's Meta outputs (y, rstd) are RmsNorm's, of allowed dtypes (the twin);
    a REG_OP allowing rstd only float16, or declaring one output, makes it a finding."""
    lib = torch_npu_library
    op, graph, meta = _rms_norm_lowered(lib)
    ge_node.check_outputs(lib, op, graph, meta)
    real = lib.reg_op("RmsNorm")
    for planted, words in (
        (dataclasses.replace(real, dtypes={**real.dtypes, "rstd": ("DT_FLOAT16",)}),
         "allows only as DT_FLOAT16"),
        (dataclasses.replace(real, ir=dataclasses.replace(real.ir, outputs=real.ir.outputs[:1])),
         "returns more outputs than the GE op has"),
    ):  # fmt: skip
        narrowed = dataclasses.replace(
            lib, reg_op=lambda t, p=planted: p if t == "RmsNorm" else lib.reg_op(t)
        )
        with pytest.raises(CellFailure, match=words):
            ge_node.check_outputs(narrowed, op, graph, meta)


# RmsNorm as msopgen JSON: its rows, y's types given (x, gamma -> y, rstd)
_RMS_NORM_JSON = """[{"op": "RmsNorm",
  "input_desc": [{"name": "x", "param_type": "required", "type": ["float", "float16"],
                  "format": ["ND", "ND"]},
                 {"name": "gamma", "param_type": "required", "type": ["float", "float16"],
                  "format": ["ND", "ND"]}],
  "output_desc": [{"name": "y", "param_type": "required", "type": %s, "format": ["ND", "ND"]},
                  {"name": "rstd", "param_type": "required", "type": ["float", "float"],
                   "format": ["ND", "ND"]}]}]"""

# RmsNorm as a REG_OP whose y must have x's (and gamma's) dtype
_RMS_NORM_LINKED = """REG_OP(RmsNorm)
    .INPUT(x, "T")
    .INPUT(gamma, "T")
    .OUTPUT(y, "T")
    .OUTPUT(rstd, TensorType({DT_FLOAT}))
    .DATATYPE(T, TensorType({DT_FLOAT, DT_FLOAT16, DT_BF16}))
    .OP_END_FACTORY_REG(RmsNorm)"""


def _with_rms_norm(lib, text):
    """``lib`` with RmsNorm defined by ``text`` (its other ops as they are)."""
    from opsdk import cann

    [planted] = cann.read(text)
    return dataclasses.replace(lib, reg_op=lambda t: planted if t == "RmsNorm" else lib.reg_op(t))


def test_converter_outputs_one_row_with_the_inputs(torch_npu_library):
    """msopgen rows: npu_rms_norm's float inputs match the float row, so y must be float;
    its dtype in another row only (float16) is a finding, though each tensor allows it."""
    lib = torch_npu_library
    op, graph, meta = _rms_norm_lowered(lib)
    assert meta[0].dtype == torch.float32
    twin = _with_rms_norm(lib, _RMS_NORM_JSON % '["float", "float16"]')
    ge_node.check_outputs(twin, op, graph, meta)
    swapped = _with_rms_norm(lib, _RMS_NORM_JSON % '["float16", "float"]')
    words = r"output 0 \(y\) torch.float32.*supports only \(y DT_FLOAT16, rstd DT_FLOAT\)"
    with pytest.raises(CellFailure, match=words):
        ge_node.check_outputs(swapped, op, graph, meta)


def test_converter_an_output_sharing_its_inputs_datatype(torch_npu_library):
    """REG_OP y typed "T" as x: the Meta's y of x's dtype is clean; float16 for float x,
    though T allows float16, is a finding."""
    lib = torch_npu_library
    op, graph, meta = _rms_norm_lowered(lib)
    assert meta[0].dtype == torch.float32
    linked = _with_rms_norm(lib, _RMS_NORM_LINKED)
    ge_node.check_outputs(linked, op, graph, meta)  # the twin
    half = (torch.empty(meta[0].shape, dtype=torch.float16, device="meta"), meta[1])
    with pytest.raises(CellFailure, match="types it T as input x, fed DT_FLOAT"):
        ge_node.check_outputs(linked, op, graph, half)


def _first(op):
    from opsdk._runtime import spec
    from opsdk.audit.checks import first_call
    from opsdk.harness.variants.cases import cases

    return first_call(cases(spec.of(op.op), "static", "ge")[0])


# --- The command: reports, exit codes, cache, waivers, shards ---------------------------------

import json  # noqa: E402
import re  # noqa: E402

from opsdk import cli  # noqa: E402

_SILU = "npu::npu_group_norm_silu"  # the real eps defect
_RMS = "npu::npu_rms_norm"  # clean


def _audit(capsys, *argv) -> tuple[int, str]:
    code = cli.main(["audit", "torch_npu", *argv])
    return code, capsys.readouterr().out


def test_audit_command_reports_the_finding_and_exits_1(
    torch_npu_library, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the cell cache lives in the current directory
    monkeypatch.delenv("OPSDK_NO_CACHE")
    report, markdown = tmp_path / "a.json", tmp_path / "a.md"
    code, out = _audit(
        capsys, "-k", "group_norm_silu", "--json", str(report), "--markdown", str(markdown),
        "--report", str(tmp_path / "a.html"),
    )  # fmt: skip
    assert code == 1, out
    assert "[1/6] npu::npu_group_norm_silu [schema-static] ... pass" in out  # progress
    assert "audited 1 of 1 ops" in out
    results = {
        r["column"] + "-" + r["shapes"]: r for r in json.loads(report.read_text())["results"]
    }
    assert set(results) == {
        "schema-static", "fake-static", "fake-dynamic", "fake-mark_static",
        "converter-static", "converter-dynamic",
    }  # fmt: skip
    assert results["converter-static"]["status"] == "fail"
    assert "eps at its schema default 1e-05" in results["converter-static"]["message"]
    assert "converter-static" in markdown.read_text()
    assert markdown.read_text().startswith("## opsdk audit: 5 pass, 1 fail")  # not "conformance"
    assert "<h1>opsdk audit: 5 pass, 1 fail</h1>" in (tmp_path / "a.html").read_text()
    # Again: every cell from the cache, the same verdict.
    code, out = _audit(capsys, "-k", "group_norm_silu")
    assert code == 1 and "(6 cached)" in out, out
    # A waiver for the finding: xfail, exit 0; the waiver's check must exist.
    waivers = tmp_path / "w.toml"
    waivers.write_text(
        f'[[waiver]]\nop = "{_SILU}"\nbackend = "converter"\nshapes = "static"\n'
        'reason = "eps default: torch_npu issue"\n'
    )
    code, out = _audit(capsys, "-k", "group_norm_silu", "--waivers", str(waivers))
    assert code == 0 and "1 xfail" in out, out
    waivers.write_text(waivers.read_text().replace('"converter"', '"ge"'))
    assert cli.main(["audit", "torch_npu", "--waivers", str(waivers)]) == 2
    assert "unknown column 'ge': choose from schema, fake, converter" in capsys.readouterr().err


def test_audit_shards_merge_into_the_whole_audit(torch_npu_library, tmp_path, capsys):
    parts = []
    for i in (1, 2):
        parts.append(tmp_path / f"s{i}.json")
        code, out = _audit(
            capsys, "-k", "rms_norm", "--checks", "schema,converter", "--shapes", "static",
            "--no-cache", "--shard", f"{i}/2", "--json", str(parts[-1]),
        )  # fmt: skip
        assert code == 0, out
    merged_md = tmp_path / "m.md"
    code = cli.main(
        ["report", "merge", *map(str, parts), "--json", str(tmp_path / "m.json"),
         "--markdown", str(merged_md)]
    )  # fmt: skip
    assert merged_md.read_text().startswith("## opsdk audit: ")  # the shards' title kept
    merged = json.loads((tmp_path / "m.json").read_text())["results"]
    ops = {r["op"] for r in merged}
    assert code == 0 and _RMS in ops and len(merged) == 2 * len(ops)


def test_audit_refuses_what_it_cannot_audit_in_one_line(capsys):
    assert cli.main(["audit", "no_such_library"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'no_such_library' is neither a directory nor" in err
    assert cli.main(["audit", "torch_npu", "--timeout", "5"]) == 2
    assert "--timeout applies to --isolate" in capsys.readouterr().err


def test_converter_binds_every_schema_argument(planted):
    """A converter whose parameters swap two positional arguments, take fewer, or lack a
    keyword-only one is a finding; its twin binds them all."""
    from opsdk.audit.checks import converter

    _, ops = planted
    pair, kwonly = ops["pair_functional"], ops["kwonly"]  # (x, y); (x, *, k=1)

    def right(x, y, meta_outputs=None):
        return None

    def swapped(y, x, meta_outputs=None):
        return None

    def short(x, meta_outputs=None):
        return None

    def right_k(x, *, k=1, meta_outputs=None):
        return None

    def renamed(self, y, meta_outputs=None):
        return None

    inplace = ops["pair_"]  # (Tensor(a!) x, Tensor y): every argument passed by name
    planted_defects = (
        (pair, swapped, "receives positional argument 0 (x"),
        (pair, short, "takes 1 positional"),
        (kwonly, short, "has no parameter k"),
        (inplace, renamed, "has no parameter x: TorchAir converts the in-place op"),
    )
    for op, fn, words in planted_defects:
        op.op._ge_converter = fn
        with pytest.raises(CellFailure, match=re.escape(words)):
            converter.check_binding(op)
    for op, fn in ((pair, right), (kwonly, right_k), (inplace, right)):  # the twins
        op.op._ge_converter = fn
        converter.check_binding(op)
        del op.op._ge_converter


# --- CI's fixed subset of torch_npu (the whole sweep is bench/audit_sweep.py) ------------------

# op -> the checks with a finding (triaged in docs/audit-torch-npu-2.13.0.md); None: not
# audited. Different kinds: clean out-of-place and in-place ops and a reinplace pair, an op
# registered by a call, cases declared, derived and searched, and one finding of each kind.
SUBSET = {
    "npu::npu_rms_norm": set(),
    "npu::npu_swiglu": set(),
    "npu::npu_add_rms_norm_v2_functional": set(),
    "npu::npu_scatter_nd_update_": set(),
    "npu::npu_grouped_matmul.List": set(),
    "npu::npu_group_norm_silu": {"converter"},  # eps default
    "npu::npu_moe_gating_top_k_softmax_v2": {"converter"},  # calls the v1 GE API
    "npu::npu_rope_quant_kvcache": {"schema"},  # returns its caches, declared new
    "npu::npu_grouped_dynamic_block_quant": {"fake"},  # int() on a size: recompiles
    "npu::npu_fusion_attention_grad": {"converter"},  # no softmax_layout parameter
    "npu::scatter_update_": {"converter"},  # in-place: parameters not the schema's names
    "npu::npu_quant_conv2d": None,  # no case the Meta function takes was found
}


def test_the_ci_subset_of_torch_npu(torch_npu_library):
    from opsdk.audit import matrix
    from opsdk.axes import SHAPE_MODES

    lib = torch_npu_library
    cells = [c for c in matrix.cells(lib, None, SHAPE_MODES) if c.op.name in SUBSET]
    results = matrix.run(lib, cells)
    assert {r.op for r in results} == set(SUBSET)
    assert not [r.describe() for r in results if r.status == "error"]
    missing = matrix.not_audited(results)
    for op, expected in SUBSET.items():
        found = {r.column for r in results if r.op == op and r.status == "fail"}
        assert (op in missing) == (expected is None), (op, missing.get(op))
        assert found == (expected or set()), (op, [r.describe() for r in results if r.op == op])


def test_audit_isolate_runs_each_op_in_a_child(torch_npu_library, tmp_path, capsys):
    report = tmp_path / "iso.json"
    code, out = _audit(
        capsys, "-k", "npu_swiglu_backward", "--checks", "schema", "--isolate", "--no-cache",
        "--json", str(report),
    )  # fmt: skip
    assert code == 0, out
    assert "npu::npu_swiglu_backward [own process] ... pass" in out
    [result] = json.loads(report.read_text())["results"]
    assert result["status"] == "pass" and result["column"] == "schema"


def test_audit_an_op_package_a_converter_default_planted(tmp_path, opsdk_cli):
    """An op package is a target as for opsdk check: its fake function, converter and IR
    as registered, its cases (here derived). Its converter defaulting alpha to 2.0 where
    the schema says 1.0 is a finding, though 2.0 is the first other value the check tries
    (it changes no attr: the second, 3.0, finds it); as opsdk new wrote it (1.0), the
    twin, it is clean."""
    made = opsdk_cli(
        "new", "my_scale", "--schema", "my_scale(Tensor x, float alpha=1.0) -> Tensor",
        "--out", tmp_path,
    )  # fmt: skip
    assert made.code == 0, made.stderr
    package = tmp_path / "my_scale"
    fake = package / "my_scale" / "fake.py"
    fake.write_text(
        re.sub(r"raise ImplementMe\([^)]*\)", "return torch.empty_like(x)", fake.read_text())
    )
    clean = opsdk_cli("audit", package, json_report=True)
    assert clean.code == 0, clean.stdout + clean.stderr
    assert {r["status"] for r in clean.report["results"]} == {"pass"}
    converter = package / "my_scale" / "converter.py"
    converter.write_text(converter.read_text().replace("alpha: float = 1.0", "alpha: float = 2.0"))
    found = opsdk_cli("audit", package, "--checks", "converter", "--shapes", "static")
    assert found.code == 1, found.stdout + found.stderr
    assert "alpha at its schema default 1.0 reaches GE as MyScale attr alpha=2.0" in found.stdout


def test_ir_files_are_the_prototypes_torch_npu_is_checked_against(torch_npu_library, tmp_path):
    """``--ir``: TorchAir's own RmsNorm prototype, written as a header, is the twin (clean);
    the same header requiring one attr more makes npu_rms_norm's converter a finding that
    names the header."""
    from opsdk.audit import library, torch_npu
    from opsdk.audit.checks import converter

    header = tmp_path / "rms_norm_proto.h"
    real = torch_npu.prototype("RmsNorm")
    header.write_text(real)
    clean = library.load("torch_npu", ir=[tmp_path])
    assert clean.definition("RmsNorm") == f"its REG_OP ({header})"
    assert converter.check(clean, _op(clean, _RMS), "static") == []
    header.write_text(f"{real}\n.REQUIRED_ATTR(planted, Int)")
    planted = library.load("torch_npu", ir=[header])
    with pytest.raises(
        CellFailure, match=rf"lacks attrs \['planted'\], which its REG_OP \({header}\)"
    ):
        converter.check(planted, _op(planted, _RMS), "static")


def test_a_declared_case_is_bounded_by_its_largest_call(torch_npu_library):
    """A 40 MiB tensor of npu_rotary_mul's declared case takes 4.8 GiB by dynamic mode's
    third call: it is left out with the reason; a small one (its twin) is kept."""
    from torchair._ge_concrete_graph.supported_declaration import F32 as TorchairF32
    from torchair._ge_concrete_graph.supported_declaration import Support as TorchairSupport

    from opsdk.audit import cases

    big = TorchairSupport(TorchairF32(2, 8192, 5, 128))
    small = TorchairSupport(TorchairF32(2, 8, 5, 128))
    made, left = cases.from_torchair([big, small])
    assert [tuple(s.args[0].dims) for s in made] == [(2, 8, 5, 128)]
    assert "its tensors take 4922 MiB in its largest call" in left
