"""`opsdk new --from-cann` writes specs its op's own InferShape accepts, static and dynamic.

The planted project (``held_specs_project``) defines an op whose C++ refuses what the
definition alone suggests: 2-D tensors (it takes 3-D), value axes of 2s (each dim once),
a one-value window attr (a pair), a grid whose last dim grows in dynamic mode (a pair,
-1 refused at compile time), a bias like x (one per x's last dim); its scale, a host
number, reaches the C++ as a 0-D tensor. The generated specs
pass the ``ge`` column's ``infer`` layer in every shape mode; the unheld guesses do not.
"""

import re
from pathlib import Path

import pytest

from opsdk import cann
from opsdk._runtime import inputs, spec
from opsdk.cann.specs import cases
from opsdk.scaffold import NewRequest, cann_infer, new
from opsdk.scaffold.cann_torch import pick, torch_side

SOURCE = Path(__file__).parent / "held_specs_project" / "op_host" / "held_def.cpp"
SCHEMA = (
    "e2e_held::held(Tensor x, Tensor grid, SymInt[] axes, Tensor? bias, Scalar scale, "
    "int[] window) -> Tensor"
)


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """The package ``opsdk new`` makes of the planted project, its reference written."""
    out = tmp_path_factory.mktemp("held")
    made = new(NewRequest("held", namespace="e2e_held", out=out, from_cann=SOURCE)).path
    kernels = made / "held" / "kernels.py"
    text, count = re.subn(
        r"raise ImplementMe\(__file__, \"held_reference\".*\)",
        "y = x.mean(1, keepdim=True) * grid[..., :1] * scale\n"
        "    return y if bias is None else y + bias",
        kernels.read_text(),
    )
    assert count == 1
    kernels.write_text(
        text.replace("from opsdk import ImplementMe, meta", "from opsdk import meta")
    )
    return made


@pytest.fixture(scope="module")
def held():
    """The planted op's torch side and its compiled InferShape (``accepts``)."""
    side = torch_side(pick(cann.read(SOURCE), "held", str(SOURCE)))
    found = cann_infer.find(SOURCE, side.ir.op_type)
    return side, cann_infer.acceptor(found, side.ir, side.op)


def test_the_specs_are_what_the_cpp_takes(package):
    specs = (package / "held" / "specs.py").read_text()
    grid = "F16(4, 4, 2, static_dims=(2,))"
    assert f"Support(F16(4, 4, 4), {grid}, [2, 1, 0], None, 1.0, [1, 1])" in specs
    assert f"Support(F16(4, 4, 4), {grid}, [2, 1, 0], F16(4), 1.0, [1, 1])" in specs  # bias
    assert "accepted no" not in specs and "accepted none" not in specs


def _taken(accepts, line: str) -> dict[str, bool]:
    """Whether the C++ takes the Support ``line`` as the ge column's cells hand it over:
    its declared sizes (static), grown ones (a dynamic run) and -1 at each growing dim
    (a dynamic compile)."""
    support = eval(line, vars(inputs))  # noqa: S307 - the generated specs' own line
    op = spec.parse(SCHEMA)
    given = op.by_name(support.args, support.kwargs)
    taken = {}
    for mode, sizes in (
        ("static", lambda t: t.sizes(0)),
        ("run", lambda t: t.sizes(1)),
        ("compile", _symbolic),
    ):
        shapes = {n: sizes(v) for n, v in given.items() if isinstance(v, inputs.TensorSpec)}
        values = {n: given[n] for n in ("axes", "scale", "window")}
        values = {n: v.at(0) if isinstance(v, inputs.ScalarSpec) else v for n, v in values.items()}
        dtypes = {n: "DT_FLOAT16" for n in shapes}
        taken[mode] = accepts(shapes, values, dtypes)
    return taken


def _symbolic(tensor: inputs.TensorSpec) -> tuple[int, ...]:
    """The sizes GE compiles a dynamic graph with: -1 at each dim that grows."""
    grown = zip(tensor.sizes(0), tensor.sizes(1), strict=True)
    return tuple(-1 if first != then else first for first, then in grown)


def test_each_generated_case_is_taken_static_and_dynamic_and_unheld_ones_are_not(held):
    side, accepts = held
    op = spec.parse(SCHEMA)
    for line in cases(op, side.ir, side.op, accepts):
        assert _taken(accepts, line.rsplit("\n", 1)[-1]) == dict.fromkeys(
            ("static", "run", "compile"), True
        ), line
    unheld = cases(op, side.ir, side.op, None)  # the guesses from the definition alone
    assert not any(all(_taken(accepts, line.rsplit("\n", 1)[-1]).values()) for line in unheld)


@pytest.mark.slow
def test_the_generated_specs_pass_the_infer_layer_in_every_shape_mode(opsdk_cli, package):
    run = opsdk_cli("check", package, "--backend", "ge", "--explore", "0", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    assert {r["status"] for r in run.report["results"]} == {"pass"}
    assert len(run.report["results"]) == 3
