"""Input specs: the cases the harness derives from them, and the checks they enable."""

import pytest
import torch

from opsdk.errors import SpecError
from opsdk.harness.inputs import cases, tensors_of
from opsdk.runtime.inputs import BF16, BOOL, F16, F32, I32, Support, declare_supported
from opsdk.runtime.spec import parse

_LIB = torch.library.Library("t_inputs", "FRAGMENT")
_LIB.define("scaled(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor")
_LIB.define("plain(Tensor x, int n) -> Tensor")
SCALED = torch.ops.t_inputs.scaled.default
SPEC = parse(str(SCALED._schema), validate=False)
PLAIN = parse(str(torch.ops.t_inputs.plain.default._schema), validate=False)

declare_supported(
    SCALED,
    [
        Support(F32(2, 3), F32(2, 3)),
        Support(F16(2, 3), F16(2, 3), alpha=0.5),
        Support(BF16(4, 3), BF16(3)),
        Support(I32(2, 3, value_range=(5, 7)), I32(2, 3)),
        Support(BOOL(2, 1), BOOL(2, 1)),
        Support(F32(), F32()),
        Support(F32(0, 3), F32(0, 3)),
        Support(F32(2, 128, static_dims=(1,)), F32(128, static_dims=(0,))),
    ],
    tolerances={torch.float16: (0.1, 0.1)},
)


def _shapes(case):
    return [[tuple(t.shape) for t in tensors_of(call.args)] for call in case.calls]


def test_each_declared_case_has_its_dtypes_sizes_values_and_scalars():
    found = cases(SPEC, "static", "eager")
    labels = [c.label for c in found]
    assert labels[0] == "F32(2, 3), F32(2, 3)" and labels[-1].startswith("non-contiguous F32")
    dtypes = [tuple(t.dtype for t in tensors_of(c.calls[0].args)) for c in found]
    assert dtypes[:5] == [
        (torch.float32,) * 2,
        (torch.float16,) * 2,
        (torch.bfloat16,) * 2,
        (torch.int32,) * 2,
        (torch.bool,) * 2,
    ]
    assert _shapes(found[2])[0] == [(4, 3), (3,)]  # broadcasting as declared
    assert found[1].calls[0].kwargs == {"alpha": 0.5} and found[0].calls[0].kwargs == {}
    ints = found[3].calls[0].args[0]
    assert int(ints.min()) >= 5 and int(ints.max()) < 7  # the declared value range
    assert _shapes(found[5])[0] == [(), ()] and _shapes(found[6])[0] == [(0, 3), (0, 3)]
    assert all(c.tolerances == {torch.float16: (0.1, 0.1)} for c in found)
    # static mode: one shape per case, fresh values per call
    assert all(len(set(map(tuple, _shapes(c)))) == 1 for c in found)
    first = found[0].calls
    assert not torch.equal(first[0].args[0], first[1].args[0])


def test_non_contiguous_case_keeps_sizes_and_values_in_a_strided_layout():
    strided = cases(SPEC, "static", "eager")[-1]
    x = strided.calls[0].args[0]
    assert x.shape == (2, 3) and not x.is_contiguous()
    assert not x.clone().is_contiguous(), "a copy must keep the layout to reach the kernel"


def test_dynamic_mode_grows_sizes_but_keeps_0_1_and_equal_sizes_equal():
    by_label = {c.label: c for c in cases(SPEC, "dynamic", "eager")}
    assert _shapes(by_label["F32(2, 3), F32(2, 3)"]) == [
        [(2, 3), (2, 3)],
        [(5, 7), (5, 7)],  # 3 = 2 + 1 no longer holds: each size moves by its own amount
        [(8, 11), (8, 11)],
    ]
    assert _shapes(by_label["BOOL(2, 1), BOOL(2, 1)"])[2] == [(8, 1), (8, 1)]
    assert _shapes(by_label["F32(0, 3), F32(0, 3)"])[1] == [(0, 7), (0, 7)]
    assert _shapes(by_label["BF16(4, 3), BF16(3)"])[1] == [(9, 7), (7,)]
    fixed = by_label["F32(2, 128, static_dims=(1,)), F32(128, static_dims=(0,))"]
    assert _shapes(fixed) == [[(2, 128), (128,)], [(5, 128), (128,)], [(8, 128), (128,)]]
    assert not F32(4, static_dims=(0,)).varies and F32(4).varies


def test_columns_leave_out_the_edge_cases_they_cannot_test():
    def labels(shapes, backend):
        return {c.label for c in cases(SPEC, shapes, backend)}

    every = labels("static", "eager")
    assert labels("dynamic", "eager") == labels("dynamic", "opcheck") == every
    assert labels("static", "aot_eager") == every
    # Dynamo specializes sizes 0 and 1: nothing dynamic left in an all-0-dim case
    assert labels("dynamic", "aot_eager") == every - {"F32(), F32()"}
    # TorchAir folds an op with an empty output into a Const: no op node to check
    assert labels("static", "ge") == every - {"F32(0, 3), F32(0, 3)"}
    assert labels("dynamic", "npugraph_ex") == every - {"F32(), F32()"}


def test_without_a_declaration_one_float32_case_derived_from_the_schema():
    [case] = cases(PLAIN, "static", "ge")
    assert case.label == "" and case.tolerances == {}
    assert [(c.args[0].dtype, tuple(c.args[0].shape), c.args[1]) for c in case.calls] == [
        (torch.float32, (2, 3), 2)
    ] * 3


def test_vary_last_changes_scalars_on_the_last_call_only():
    [case] = cases(PLAIN, "static", "npugraph_ex", steps=(0, 0, 0), vary_last=True)
    assert [c.args[1] for c in case.calls] == [2, 2, 3]


@pytest.mark.parametrize(
    ("support", "complaint"),
    [
        (Support(F32(2), 3), "'y' is a tensor"),
        (Support(F32(2), F32(2), alpha=F32(1)), "'alpha' is not a tensor"),
        (Support(F32(2), F32(2), beta=1.0), "no argument 'beta'"),
        (Support(F32(2)), "give a value for 'y'"),
        (Support(F32(2), F32(2), F32(2), F32(2)), "4 positional values"),
    ],
)
def test_a_declaration_that_contradicts_the_schema_is_refused(support, complaint):
    with pytest.raises(SpecError, match=complaint):
        declare_supported(SCALED, [support])


def test_declaration_needs_an_overload_and_cases():
    with pytest.raises(SpecError, match="op overload"):
        declare_supported(torch.ops.t_inputs.scaled, [Support(F32(2), F32(2))])
    with pytest.raises(SpecError, match="non-empty list"):
        declare_supported(SCALED, [])
    with pytest.raises(SpecError, match="low < high"):
        F32(2, value_range=(1, 1))
    with pytest.raises(SpecError, match="static_dims"):
        F32(2, static_dims=(1,))


# ----- end to end: what the cases catch -------------------------------------------------

SPECS_PY = """
import torch
from opsdk.runtime.inputs import F16, F32, Support, declare_supported

declare_supported(
    torch.ops.{ns}.my_add.default,
    [Support(F32(2, 3), F32(2, 3)), Support(F16(2, 3), F16(2, 3))],{extra}
)
"""


def _package(scaffolds, tmp_path, kernel: str, extra: str = ""):
    ns = "specs_t"  # each `opsdk check` runs in its own process: tests can share it
    pkg = scaffolds.copy(tmp_path, "my_add", namespace=ns)
    (pkg / "my_add" / "specs.py").write_text(SPECS_PY.format(ns=ns, extra=extra))
    kernels = pkg / "my_add" / "kernels.py"
    text = kernels.read_text()
    old = "    return torch.add(x, y).contiguous()"
    assert old in text
    kernels.write_text(text.replace(old, kernel))
    return pkg


def test_tolerance_override_is_applied(scaffolds, tmp_path, opsdk_cli):
    off = "    return (torch.add(x, y) + 1e-3).contiguous()"
    strict = _package(scaffolds, tmp_path / "strict", off)
    run = opsdk_cli("check", strict, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["status"], cell["layer"]) == (1, "fail", "eager"), cell
    assert "case F32(2, 3), F32(2, 3): call 0: output" in cell["message"]

    loose = _package(
        scaffolds,
        tmp_path / "loose",
        off,
        extra="\n    tolerances={torch.float32: (0.0, 2e-3), torch.float16: (0.0, 2e-2)},",
    )
    run = opsdk_cli("check", loose, "--backend", "eager", "--shapes", "static", json_report=True)
    assert run.code == 0, run.stdout + run.stderr


def test_a_kernel_wrong_for_one_declared_dtype_fails_naming_the_case(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = _package(
        scaffolds,
        tmp_path,
        "    out = torch.sub(x, y) if x.dtype == torch.float16 else torch.add(x, y)\n"
        "    return out.contiguous()",
    )
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["layer"]) == (1, "eager"), cell
    assert cell["message"].startswith("case F16(2, 3), F16(2, 3): call 0: output")


def test_non_contiguous_case_catches_a_kernel_that_assumes_contiguous_memory(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = _package(scaffolds, tmp_path, "    return (x.view(-1) + y.view(-1)).view(x.shape)")
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["layer"]) == (1, "eager"), cell
    assert cell["message"].startswith("case non-contiguous F32(2, 3), F32(2, 3): ")
    assert "view" in cell["message"]


def test_the_api_is_importable_from_opsdk():
    import opsdk

    assert (opsdk.Support, opsdk.F32, opsdk.declare_supported) == (Support, F32, declare_supported)
    with pytest.raises(AttributeError):
        opsdk.F128  # noqa: B018
