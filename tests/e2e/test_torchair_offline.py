"""TorchAir's real Python code, offline: the locator, the ``_torchair`` stand-in and
the GE reference executor, proved through ``torch.compile`` with TorchAir's own
backend (``max-autotune``: FX -> GE IR -> our GE session) on CPU tensors."""

from __future__ import annotations

import dataclasses
import shutil
import signal
from pathlib import Path

import pytest
import torch

from opsdk._runtime import irdef
from opsdk._runtime import locator as torchair_locator
from opsdk.offline import ge as offline_ge
from opsdk.offline.ge import proto as ge_proto
from opsdk.offline.ge import standin as torchair_standin
from opsdk.offline.torchair import import_torchair, torchair_config

# --- Test ops: out-of-place with an attr, in-place, and one with no GE IR -------------------


@torch.library.custom_op("opsdk_test::ta_add", mutates_args=())
def ta_add(x: torch.Tensor, y: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    return x + alpha * y


@ta_add.register_fake
def _(x, y, alpha=1.0):
    return torch.empty_like(x)


@torch.library.custom_op("opsdk_test::ta_add_inplace", mutates_args={"x"})
def ta_add_inplace(x: torch.Tensor, y: torch.Tensor) -> None:
    x.add_(y)


@ta_add_inplace.register_fake
def _(x, y):
    return None


@torch.library.custom_op("opsdk_test::ta_no_ir", mutates_args=())
def ta_no_ir(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@ta_no_ir.register_fake
def _(x):
    return torch.empty_like(x)


# CANN's own names (torch_npu style): `self` is CANN's `x`, `epsilon` its `eps`; `mode` is
# consumed by the converter, which picks one GE op per mode.
_LIB = torch.library.Library("opsdk_test", "FRAGMENT")
_LIB.define(
    "ta_norm(Tensor self, Tensor gamma, float epsilon=1e-6, str mode='mul') -> (Tensor, Tensor)"
)
_LIB.define("ta_update(Tensor self, Tensor index, Tensor src) -> Tensor")
_LIB.define(
    "ta_update_(Tensor(a!) self, Tensor index, Tensor src) -> Tensor(a!)", tags=torch.Tag.inplace
)


def _ta_norm(self, gamma, epsilon=1e-6, mode="mul"):
    rstd = torch.rsqrt(self.pow(2).mean(-1, keepdim=True) + epsilon)
    return (self * rstd * gamma if mode == "mul" else self * rstd + gamma), rstd


def _ta_update_(self, index, src):
    return self.index_copy_(0, index, src)


_LIB.impl("ta_norm", _ta_norm, "CPU")
_LIB.impl("ta_update_", _ta_update_, "CPU")
_LIB.impl("ta_update", lambda self, index, src: _ta_update_(self.clone(), index, src), "CPU")
_LIB._register_fake(
    "ta_norm",
    lambda self, gamma, epsilon=1e-6, mode="mul": (
        torch.empty_like(self),
        self.new_empty((*self.shape[:-1], 1)),
    ),
)
_LIB._register_fake("ta_update_", lambda self, index, src: self)
_LIB._register_fake("ta_update", lambda self, index, src: torch.empty_like(self))
TA_NORM_IRS = [
    irdef.IrDef(
        op_type,
        inputs=[irdef.Input("x"), irdef.Input("gamma")],
        outputs=[irdef.Output("y"), irdef.Output("rstd")],
        attrs=[irdef.Attr("eps", "VT_FLOAT", 1e-6)],
        torch_op="opsdk_test::ta_norm",
        arg_names={"self": "x", "epsilon": "eps"},
        fixed_args={"mode": mode},
    )
    for op_type, mode in (("TaRmsNorm", "mul"), ("TaRmsNormAdd", "add"))
]
# One GE op (a ref output `var`) serves the in-place op and, behind a TensorMove, its
# functional partner.
TA_UPDATE_IR = irdef.IrDef(
    "TaScatterUpdate",
    inputs=[irdef.Input("var"), irdef.Input("indices"), irdef.Input("updates")],
    outputs=[irdef.Output("var")],
    attrs=[irdef.Attr("use_locking", "VT_BOOL", False)],
    torch_op="opsdk_test::ta_update_",
    arg_names={"self": "var", "index": "indices", "src": "updates"},
)

TA_ADD_IR = irdef.IrDef(
    "TaAdd",
    inputs=[irdef.Input("x"), irdef.Input("y")],
    outputs=[irdef.Output("z")],
    attrs=[irdef.Attr("alpha", "VT_FLOAT")],
    torch_op="opsdk_test::ta_add",
)
TA_ADD_INPLACE_IR = irdef.IrDef(
    "TaAddInplace",
    inputs=[irdef.Input("x"), irdef.Input("y")],
    outputs=[irdef.Output("x")],
    torch_op="opsdk_test::ta_add_inplace",
)


@pytest.fixture(scope="module")
def torchair():
    try:
        module = import_torchair()
    except torchair_locator.TorchairUnavailable as err:
        pytest.skip(f"TorchAir could not be fetched: {err}")
    irdef.register(TA_ADD_IR)
    irdef.register(TA_ADD_INPLACE_IR)
    for ir in (*TA_NORM_IRS, TA_UPDATE_IR):
        irdef.register(ir)
    ge = module.ge

    @module.register_fx_node_ge_converter(torch.ops.opsdk_test.ta_norm.default)
    def _ta_norm(self, gamma, epsilon=1e-6, mode="mul", meta_outputs=None):
        return ge.custom_op(
            "TaRmsNorm" if mode == "mul" else "TaRmsNormAdd",
            inputs={"x": self, "gamma": gamma},
            outputs=["y", "rstd"],
            attrs={"eps": ge.attr.Float(epsilon)},
        )

    def update(var, index, src):
        return ge.custom_op(
            "TaScatterUpdate",
            inputs={"var": var, "indices": index, "updates": src},
            outputs=["var"],
        )

    @module.register_fx_node_ge_converter(torch.ops.opsdk_test.ta_update.default)
    def _ta_update(self, index, src, meta_outputs=None):
        return update(ge.TensorMove(self), index, src)

    @module.register_fx_node_ge_converter(torch.ops.opsdk_test.ta_update_.default)
    def _ta_update_(self, index, src, meta_outputs=None):
        return update(self, index, src)

    @module.register_fx_node_ge_converter(torch.ops.opsdk_test.ta_add.default)
    def _ta_add(x, y, alpha=1.0, meta_outputs=None):
        return ge.custom_op(
            "TaAdd", inputs={"x": x, "y": y}, outputs=["z"], attrs={"alpha": ge.attr.Float(alpha)}
        )

    @module.register_fx_node_ge_converter(torch.ops.opsdk_test.ta_add_inplace.default)
    def _ta_add_inplace(x, y, meta_outputs=None):
        ge.custom_op("TaAddInplace", inputs={"x": x, "y": y}, outputs=["x"])

    @module.register_fx_node_ge_converter(torch.ops.opsdk_test.ta_no_ir.default)
    def _ta_no_ir(x, meta_outputs=None):
        return ge.custom_op("TaNoIr", inputs={"x": x}, outputs=["y"])

    return module


@pytest.fixture
def compile_ge(torchair):
    """torch.compile through TorchAir in GE mode; each test starts with fresh Dynamo
    caches and an empty record of loaded GE graphs."""
    torch._dynamo.reset()
    torchair_standin.clear_loaded_graphs()
    # As the ge column configures it: offline, no fusions into torch.ops.npu.* kernels.
    backend = torchair.get_npu_backend(compiler_config=torchair_config("max-autotune"))

    def compile_(fn, dynamic=False):
        return torch.compile(fn, backend=backend, dynamic=dynamic, fullgraph=True)

    yield compile_
    torch._dynamo.reset()


def _aten_graph(x, y, w):
    a = (x + y * 2).view(-1, 2).transpose(0, 1)  # [2, 2n]
    b = torch.cat([a, a - 1], dim=1)  # [2, 4n]
    return torch.matmul(b.t(), w).unsqueeze(0) / 3


def _aten_inputs(n):
    return torch.randn(n, 4), torch.randn(n, 4), torch.randn(2, 5)


def test_torchair_is_the_offline_copy(torchair):
    info = torchair_locator.locate()
    assert info.mode == "offline" and info.fetched
    assert info.torch_npu_version == torch.__version__.split("+")[0]
    assert torchair.__file__.startswith(str(info.path))
    # TorchAir's GE-finalizing handlers swallow Ctrl-C/SIGTERM; offline they are undone.
    for sig in (signal.SIGINT, signal.SIGTERM):
        assert getattr(signal.getsignal(sig), "__module__", None) != "torchair.core._backend"


def test_aten_graph_matches_eager_static(compile_ge):
    args = _aten_inputs(3)
    torch.testing.assert_close(compile_ge(_aten_graph)(*args), _aten_graph(*args))
    (graph,) = torchair_standin.loaded_graphs()
    ops = set(graph.op_types())
    assert {"Data", "Add", "Mul", "Reshape", "Transpose", "ConcatV2", "MatMul", "NetOutput"} <= ops
    assert graph.compiled and graph.runs == 1


def test_aten_graph_dynamic_shapes_do_not_recompile(compile_ge):
    compiled = compile_ge(_aten_graph, dynamic=True)
    for n in (3, 5, 8):
        args = _aten_inputs(n)
        torch.testing.assert_close(compiled(*args), _aten_graph(*args))
    (graph,) = torchair_standin.loaded_graphs()
    assert graph.runs == 3
    data_shapes = [list(op.output_desc[0].shape.dim) for op in graph.graph.op if op.type == "Data"]
    assert any(-1 in shape for shape in data_shapes)


_X, _Y = torch.randn(3, 4), torch.randn(3, 4)
_INTS = torch.randint(1, 5, (3, 4))

# (aten function, inputs, GE op types TorchAir's converters lower it to)
ATEN_CASES = {
    "unary": (lambda a: a.neg().exp().abs().sqrt().rsqrt().relu().tanh(), (_X,), {"Rsqrt", "Tanh"}),
    "rounding": (lambda a: a.ceil() + a.floor() + (a * 3).round(), (_X,), {"Ceil", "Round"}),
    "trig": (lambda a: a.sin() + a.cos() + a.erf() + a.sigmoid(), (_X,), {"Sin", "Erf"}),
    "log_sign": (lambda a: a.abs().log() + a.sign() + a.reciprocal(), (_X,), {"Log", "Sign"}),
    "int_div_mod": (
        lambda a, b: torch.floor_divide(a, b) + torch.remainder(a, b),
        (_INTS * 7, _INTS),
        {"FloorDiv", "FloorMod"},
    ),
    "compare": (
        lambda a, b: torch.stack([a == b, a >= b, a < b, a <= b, a != b, a > b]),
        (_X, torch.where(_X > 0, _X, _Y)),
        {"Equal", "GreaterEqual", "Less", "LessEqual", "NotEqual", "Greater", "Pack"},
    ),
    "logical": (
        lambda a, b: torch.logical_and(a > 0, b > 0) | torch.logical_not(a > b),
        (_X, _Y),
        {"LogicalAnd", "LogicalOr", "LogicalNot"},
    ),
    "where_max_min": (
        lambda a, b: torch.where(a > b, a, b) + torch.maximum(a, b) * torch.minimum(a, b),
        (_X, _Y),
        {"SelectV2", "Maximum", "Minimum"},
    ),
    "leaky_clamp": (
        lambda a: torch.nn.functional.leaky_relu(a, 0.2).clamp(-0.5, 0.5),
        (_X,),
        {"LeakyRelu", "ClipByValueV2"},
    ),
    "creation": (
        lambda a: (
            torch.ones_like(a) + torch.zeros_like(a) + torch.full((3, 4), 2.0) + torch.arange(4)
        ),
        (_X,),
        {"OnesLike", "ZerosLike", "Fill", "Range"},
    ),
    "scalar_ops": (lambda a, b: (2 - a) + a.add(b, alpha=0.5) + a**2, (_X, _Y), {"Sxpy", "AxpyV2"}),
    "bf16_cast": (lambda a: (a.to(torch.bfloat16) * 3).float(), (_X,), {"Muls", "Cast"}),
    "indexing": (
        lambda a: a[torch.tensor([2, 0])].sum(0) + a[1] + a[:, 1:3].sum(1, keepdim=True).mean(0),
        (_X,),
        {"IndexByTensor", "GatherV2", "StridedSliceV2", "ReduceSum", "ReduceMean"},
    ),
    "layout": (
        lambda a: a.repeat(2, 1).view(4, 6).permute(1, 0)[None].squeeze(0).expand(2, 6, 4),
        (_X,),
        {"Tile", "Reshape", "Transpose", "Unsqueeze", "Squeeze", "BroadcastTo"},
    ),
    "split_cat_softmax": (
        lambda a: torch.cat([t.softmax(0) for t in a.split([1, 3], dim=1)], dim=1),
        (_X,),
        {"SplitV", "SoftmaxV2", "ConcatV2"},
    ),
    "matmuls": (
        lambda a, b: torch.addmm(b[0, :3], a, b.t()) + torch.bmm(a[None], b.t()[None])[0],
        (_X, _Y),
        {"MatMulV2", "BatchMatMul"},
    ),
}


@pytest.mark.parametrize("case", sorted(ATEN_CASES))
def test_aten_converters_run_on_the_reference_executor(compile_ge, case):
    fn, args, ge_ops = ATEN_CASES[case]
    torch.testing.assert_close(compile_ge(fn)(*args), fn(*args))
    (graph,) = torchair_standin.loaded_graphs()
    assert ge_ops <= set(graph.op_types())


def test_symint_inputs(compile_ge):
    """A SymInt reaches GE as a host Data node of shape [] fed a [1] int64 tensor."""

    def fn(x, n):
        return x * n + x.shape[0], x.sum() * n

    compiled = compile_ge(fn, dynamic=True)
    for n, rows in ((3, 2), (5, 7), (4, 9)):
        x = torch.randn(rows, 3)
        for got, want in zip(compiled(x, n), fn(x, n), strict=True):
            torch.testing.assert_close(got, want)
    (graph,) = torchair_standin.loaded_graphs()
    assert graph.runs == 3
    scalars = [op for op in graph.graph.op if op.type == "Data" and not op.output_desc[0].shape.dim]
    assert scalars and scalars[0].output_desc[0].device_type == "CPU"


@pytest.mark.parametrize("dynamic", [False, True])
def test_custom_op_out_of_place(compile_ge, dynamic):
    def fn(x, y):
        return torch.ops.opsdk_test.ta_add(x, y, 2.5) * 2

    compiled = compile_ge(fn, dynamic=dynamic)
    for n in (2, 3):
        x, y = torch.randn(n, 3), torch.randn(n, 3)
        torch.testing.assert_close(compiled(x, y), (x + 2.5 * y) * 2)
    node = next(op for op in torchair_standin.loaded_graphs()[-1].graph.op if op.type == "TaAdd")
    assert [d.name for d in node.input_desc] == ["x", "y"]
    assert node.attr["alpha"].f == 2.5


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("reuse", [False, True], ids=["mutate-only", "mutate-then-use"])
def test_custom_op_in_place_mutates_callers_tensor(compile_ge, dynamic, reuse):
    def fn(x, y):
        torch.ops.opsdk_test.ta_add_inplace(x, y)
        if reuse:
            return x * 2

    compiled = compile_ge(fn, dynamic=dynamic)
    for n in (2, 4):
        x, y = torch.randn(n, 3), torch.randn(n, 3)
        expected = x + y
        out = compiled(x, y)
        torch.testing.assert_close(x, expected)
        if reuse:
            torch.testing.assert_close(out, expected * 2)
    graph = torchair_standin.loaded_graphs()[-1]
    assert "TensorMove" in graph.op_types() and "TaAddInplace" in graph.op_types()


def test_op_without_ir_def_fails_clearly(compile_ge):
    compiled = compile_ge(lambda x: torch.ops.opsdk_test.ta_no_ir(x))
    with pytest.raises(Exception, match="No AscendIR TaNoIr was found to be registered"):
        compiled(torch.randn(2))
    assert "TaNoIr" in torchair_standin.missing_ir_defs()
    assert torchair_standin.get_registered_ir_def("TaNoIr") == ("ERROR", [], [], [])


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("mode", ["mul", "add"])
def test_ir_with_cann_names_binds_through_arg_names_and_fixed_args(compile_ge, dynamic, mode):
    def fn(x, gamma):
        return torch.ops.opsdk_test.ta_norm(x, gamma, 0.5, mode)

    compiled = compile_ge(fn, dynamic=dynamic)
    for n in (2, 3):
        x, gamma = torch.randn(n, 4), torch.randn(4)
        for got, want in zip(compiled(x, gamma), _ta_norm(x, gamma, 0.5, mode), strict=True):
            torch.testing.assert_close(got, want)
    op_type = {"mul": "TaRmsNorm", "add": "TaRmsNormAdd"}[mode]
    (node,) = [op for op in torchair_standin.loaded_graphs()[-1].graph.op if op.type == op_type]
    assert [d.name for d in node.input_desc] == ["x", "gamma"]
    assert node.attr["eps"].f == 0.5


@pytest.mark.parametrize("inplace", [False, True], ids=["functional", "inplace"])
def test_torch_npu_inplace_pair_runs_through_one_ge_op(compile_ge, inplace):
    """`ta_update_(Tensor(a!) self, ...) -> Tensor(a!)` and its functional partner both
    lower to the GE op bound to the in-place op."""
    op = torch.ops.opsdk_test.ta_update_ if inplace else torch.ops.opsdk_test.ta_update
    compiled = compile_ge(lambda x, i, u: op(x, i, u) * 2)
    x, index, src = torch.zeros(4, 2), torch.tensor([3, 1]), torch.randn(2, 2)
    expected_x = _ta_update_(x.clone(), index, src)
    before = x.clone()
    torch.testing.assert_close(compiled(x, index, src), expected_x * 2)
    torch.testing.assert_close(x, expected_x if inplace else before)
    assert "TaScatterUpdate" in torchair_standin.loaded_graphs()[-1].op_types()
    assert irdef.for_op("opsdk_test::ta_update") == [TA_UPDATE_IR]


def test_an_ir_input_no_torch_argument_maps_to_says_how_to_map_it(torchair):
    def build(ge):
        x = _data(ge, 0, [2, 4])
        return list(
            torchair.ge.custom_op("TaRmsNorm", inputs={"x": x, "gamma": x}, outputs=["y", "rstd"])
        )

    unmapped = dataclasses.replace(TA_NORM_IRS[0], op_type="TaRmsNormUnmapped", arg_names={})
    irdef.register(unmapped)

    def build_unmapped(ge):
        x = _data(ge, 0, [2, 4])
        return list(
            torchair.ge.custom_op(
                "TaRmsNormUnmapped", inputs={"x": x, "gamma": x}, outputs=["y", "rstd"]
            )
        )

    _session(torchair, build, [0, 0])
    with pytest.raises(offline_ge.GeGraphError, match=r"IR input 'x' .*arg_names=\{'self': 'x'\}"):
        _session(torchair, build_unmapped, [0, 0])


# --- Hand-built GE graphs, run through the stand-in's GE session ---------------------------


def _session(torchair, build, output_dtypes):
    """Build a graph with TorchAir's own GE API inside ``build(ge)`` and load it into a
    stand-in session, as TorchAir's TorchNpuGraph.load would."""
    from torchair._ge_concrete_graph import ge_apis
    from torchair.ge._ge_graph import GeGraph

    graph = GeGraph(name="hand_built")
    with graph:
        outputs = build(ge_apis)
        ge_apis.NetOutput(outputs)
    host_placements = [0] * sum(op.type == "Data" for op in graph._proto.op)
    session = torchair_standin.TorchNpuGraphBase("hand_built")
    session.load(graph.SerializeToString(), {}, host_placements, output_dtypes, 0)
    session.compile()
    return session


def _data(ge, index, shape, dtype=0):
    return ge.Data(index=index, dtype=dtype, shape=shape, placement="CPU", node_name=f"in{index}")


def test_unknown_ge_op_type_fails_naming_it(torchair):
    def build(ge):
        x = _data(ge, 0, [2])
        from torchair.ge._ge_graph import get_default_ge_graph

        op = get_default_ge_graph().op.add()
        op.type, op.name = "FancyOp", "fancy_node"
        op.input.append(x.tensor)
        op.input_desc.add().name = "x"
        op.output_desc.add().name = "y"
        return [x]

    with pytest.raises(offline_ge.GeGraphError, match="fancy_node.*GE op type FancyOp is unknown"):
        _session(torchair, build, [0])
    rejected = torchair_standin.loaded_graphs()[-1]
    assert rejected.error and "FancyOp" in rejected.error


def test_edge_to_missing_node_is_rejected_at_load(torchair):
    from torchair._ge_concrete_graph import ge_apis
    from torchair.ge._ge_graph import GeGraph

    graph = GeGraph(name="broken")
    with graph:
        ge_apis.NetOutput([ge_apis.Neg(_data(ge_apis, 0, [2]))])
    next(op for op in graph._proto.op if op.type == "Neg").input[0] = "ghost:0"
    session = torchair_standin.TorchNpuGraphBase("broken")
    with pytest.raises(offline_ge.GeGraphError, match="Neg.*'ghost:0' refers to no node"):
        session.load(graph.SerializeToString(), {}, [0], [0], 0)


def test_ge_ops_custom_converters_may_emit(torchair):
    """GE ops no aten converter emits but a hand-written converter may, built with
    TorchAir's own raw-op API, against torch references."""

    def build(ge):
        x, y, w, bias = (
            _data(ge, 0, [2, 3]),
            _data(ge, 1, [2, 3]),
            _data(ge, 2, [3, 4]),
            _data(ge, 3, [4]),
        )
        return [
            ge.Concat(0, [x, y], N=2),
            *ge.Split(1, ge.Concat(1, [x, y], N=2), num_split=2),
            ge.StridedSlice(x, [5, 1], [2, 3], [1, 2], begin_mask=1),
            ge.StridedSlice(x, [1, 0], [2, 3], [1, 1], shrink_axis_mask=1),
            ge.Slice(x, [0, 1], [-1, 2]),
            ge.BatchMatMulV2(
                ge.ExpandDims(x, 0),
                ge.ExpandDims(ge.Transpose(w, [1, 0]), 0),
                bias,
                None,
                adj_x2=True,
            ),
            ge.MatMulV2(ge.Transpose(x, [1, 0]), w, None, None, transpose_x1=True),
            ge.Axpy(x, y, alpha=0.5),
            ge.Div(x, y),
            ge.ReduceMax(x, [1], keep_dims=True),
        ]

    session = _session(torchair, build, [0] * 11)
    x, y, w, bias = torch.randn(2, 3), torch.randn(2, 3), torch.randn(3, 4), torch.randn(4)
    want = [
        torch.cat([x, y]),
        x,
        y,
        x[:, 1:3:2],
        x[1],
        x[:, 1:3],
        (x @ w + bias)[None],
        x @ w,
        x + 0.5 * y,
        x / y,
        x.amax(1, keepdim=True),
    ]
    for got, expected in zip(session.run(([x, y, w, bias], [], None)), want, strict=True):
        torch.testing.assert_close(got, expected)


def test_control_edges_order_execution(torchair):
    """A node listed before the Assign it depends on (control edge ``Assign:-1``)
    still runs after it; Assign writes through TensorMove's copy, not the input."""
    from torchair._ge_concrete_graph import ge_apis as ge
    from torchair.ge._ge_graph import GeGraph

    graph = GeGraph(name="ordered")
    with graph:
        x, value = _data(ge, 0, [2]), _data(ge, 1, [2])
        buf = ge.TensorMove(x)
        assign = ge.Assign(buf, value)
        neg = ge.Neg(buf, dependencies=[assign])
        ge.NoOp(dependencies=[neg])
        ge.NetOutput([neg])
    ops = list(graph._proto.op)
    ops.insert(ops.index(next(o for o in ops if o.type == "Assign")), ops.pop(ops.index(neg.node)))
    del graph._proto.op[:]
    graph._proto.op.extend(ops)
    types = [op.type for op in graph._proto.op]
    assert types.index("Neg") < types.index("Assign")
    session = torchair_standin.TorchNpuGraphBase("ordered")
    session.load(graph.SerializeToString(), {}, [0, 0], [0], 0)
    x, value = torch.tensor([1.0, 2.0]), torch.tensor([5.0, 6.0])
    (out,) = session.run(([x, value], [], None))
    torch.testing.assert_close(out, torch.tensor([-5.0, -6.0]))
    torch.testing.assert_close(x, torch.tensor([1.0, 2.0]))


def test_runtime_failure_names_the_node(torchair):
    session = _session(
        torchair, lambda ge: [ge.MatMul(_data(ge, 0, [-1, -1]), _data(ge, 1, [-1, -1]), None)], [0]
    )
    with pytest.raises(offline_ge.GeExecutionError, match=r"node MatMul \(MatMul\) failed"):
        session.run(([torch.randn(2, 3), torch.randn(2, 3)], [], None))


def test_input_that_contradicts_data_desc_is_rejected(torchair):
    session = _session(torchair, lambda ge: [ge.Neg(_data(ge, 0, [2, 3]))], [0])
    with pytest.raises(offline_ge.GeExecutionError, match=r"input 0 \(in0\).*expects"):
        session.run(([torch.randn(3, 2)], [], None))


def test_output_dtypes_contract_is_checked(torchair):
    session = _session(torchair, lambda ge: [ge.Neg(_data(ge, 0, [2]))], [1])  # float16 declared
    with pytest.raises(torchair_standin.GeSessionError, match="output 0 is torch.float32"):
        session.run(([torch.randn(2)], [], None))


def test_assigned_output_is_written_in_place_and_returned(torchair):
    session = _session(torchair, lambda ge: [ge.Neg(_data(ge, 0, [2]))], [0])
    x, target = torch.tensor([1.0, -2.0]), torch.zeros(2)
    (out,) = session.run(([x], [target], None))
    assert out is target
    torch.testing.assert_close(target, torch.tensor([-1.0, 2.0]))


@pytest.mark.parametrize("tensor_move", [True, False])
def test_ref_output_writes_into_its_input_like_ge(torchair, tensor_move):
    """An IR output named like an input is a GE ref output: the op writes into that
    input's memory. Behind a TensorMove that is a copy; straight on a Data node it is
    the caller's tensor (what TorchAir relies on when it drops redundant TensorMoves)."""

    def build(ge):
        x, y = _data(ge, 0, [2]), _data(ge, 1, [2])
        target = ge.TensorMove(x) if tensor_move else x
        return [torchair.ge.custom_op("TaAddInplace", inputs={"x": target, "y": y}, outputs=["x"])]

    session = _session(torchair, build, [0])
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])
    (out,) = session.run(([x, y], [], None))
    torch.testing.assert_close(out, torch.tensor([11.0, 22.0]))
    torch.testing.assert_close(x, torch.tensor([1.0, 2.0]) if tensor_move else out)
    assert out.data_ptr() != x.data_ptr()


def test_custom_node_that_contradicts_its_ir_is_rejected(torchair):
    def build(ge):
        x = _data(ge, 0, [2])
        return [torchair.ge.custom_op("TaAdd", inputs={"x": x, "w": x}, outputs=["z"])]

    with pytest.raises(offline_ge.GeGraphError, match="TaAdd.*required input 'y' of TaAdd"):
        _session(torchair, build, [0])


@pytest.mark.parametrize(
    "value",
    [
        torch.tensor([[1.5, -2.25, 3.0]], dtype=torch.float32),
        torch.tensor([0.5, -1.0], dtype=torch.float16),
        torch.tensor([3.0, -0.125], dtype=torch.bfloat16),
        torch.tensor([1e300, -2.0], dtype=torch.float64),
        torch.tensor([[7], [-8]], dtype=torch.int32),
        torch.tensor(2**40 + 3, dtype=torch.int64),
        torch.tensor([-5, 6], dtype=torch.int8),
        torch.tensor([200, 1], dtype=torch.uint8),
        torch.tensor([True, False, True]),
        torch.zeros(0, 3),
    ],
    ids=lambda t: f"{t.dtype}{list(t.shape)}",
)
def test_const_decoding(torchair, value):
    """Consts encoded by TorchAir's own ge.Const decode to the same tensor."""
    from torchair.ge._ge_graph import GeGraph

    with GeGraph(name="consts") as graph:
        torchair.ge.Const(value)
    (op,) = graph._proto.op
    decoded = offline_ge.decode_const(op.attr["value"].t)
    assert decoded.dtype == value.dtype
    torch.testing.assert_close(decoded, value)


def test_both_dtype_numberings_resolve(torchair):
    """ge::DataType (attrs, output_dtypes) and the protobuf enum (tensor descs) number
    the same types differently; each resolves through TorchAir's own definitions."""
    from torchair._ge_concrete_graph.ge_ir_pb2 import DataType as ProtoDataType
    from torchair._ge_concrete_graph.ge_ir_pb2 import TensorDescriptor

    ge_dtype = torchair.ge.DataType
    assert (ge_dtype.DT_FLOAT, ProtoDataType.Value("DT_FLOAT")) == (0, 1)
    for name, dtype in ge_proto._TORCH_BY_NAME.items():
        assert offline_ge.torch_dtype_from_ge(getattr(ge_dtype, name)) == dtype
        desc = TensorDescriptor(dtype=ProtoDataType.Value(name))
        assert offline_ge.torch_dtype_from_proto(desc) == dtype


# --- Fetching the wheel (the cache itself: tests/unit/test_torchair_cache.py) -------------


def test_unreachable_index_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv(torchair_locator.ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(torchair_locator.ENV_WHEEL, raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    with pytest.raises(torchair_locator.TorchairUnavailable) as err:
        torchair_locator.fetch()
    message = str(err.value)
    assert "\n" not in message
    version = torchair_locator.expected_torch_npu_version()
    assert f"torch-npu {version}" in message and "pip: ERROR:" in message
    assert torchair_locator.ENV_WHEEL in message and "opsdk fetch-torchair" in message


def test_a_corrupt_cache_fails_the_graph_cells_in_layer_setup(
    scaffolds, opsdk_cli, tmp_path, monkeypatch
):
    """One truncated TorchAir file in a copy of the real cache: every ge and npugraph_ex
    cell is a setup error naming the file and the fix (it was `ge-exec: SyntaxError`)."""
    try:
        entry = torchair_locator.fetch().parents[1]
    except torchair_locator.TorchairUnavailable as err:
        pytest.skip(f"TorchAir not available offline: {err}")
    kept = shutil.ignore_patterns("*.whl", "__pycache__")  # what the check reads: 18 of 73 MB
    copy = Path(shutil.copytree(entry, tmp_path / "cache" / entry.name, ignore=kept))
    damaged = copy / "torch_npu/dynamo/torchair/_ge_concrete_graph/fx2ge_converter.py"
    damaged.write_bytes(damaged.read_bytes()[:3000])
    monkeypatch.setenv(torchair_locator.ENV_CACHE_DIR, str(tmp_path / "cache"))
    pkg = scaffolds.shared("my_add")
    run = opsdk_cli(
        "check", pkg, "--backend", "ge,npugraph_ex", "--shapes", "static", json_report=True
    )
    assert run.code == 1, run.stderr
    cells = run.cells()
    assert [(c["column"], c["status"], c["layer"]) for c in cells] == [
        ("ge", "error", "setup"),
        ("npugraph_ex", "error", "setup"),
    ]
    for cell in cells:
        assert cell["message"] == (
            f"the TorchAir cache is corrupt: {damaged} (fix: opsdk fetch-torchair)"
        )
