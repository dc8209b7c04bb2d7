"""A fault is reported in the layer that names it, whichever column finds it.

Each op here is correct but for one fault, on the non-contiguous case opsdk adds
to its declared inputs: a kernel that raises is ``eager`` in ``eager`` and in
``opcheck`` (whose tests merely run the kernel first), with the kernel's file and
line; a kernel and a fake function that disagree on an output's layout are told
which one departs from the contract (outputs are contiguous), naming the output
and both layouts. In-process, AOT dispatch left to
``aot_eager`` (as in a full run), so nothing is compiled.
"""

import sys
import types
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from opsdk import harness, meta
from opsdk._runtime.device import ensure_npu
from opsdk.harness.core import run_scope
from opsdk.harness.failures import as_failure
from opsdk.inputs import F32, Support, declare_supported

NS = "opsdk_unit_layers"
ensure_npu()
_lib = torch.library.Library(NS, "DEF")


def _define(name, npu, reference, fake):
    _lib.define(f"{name}(Tensor x) -> Tensor")
    _lib.impl(name, npu, "PrivateUse1")
    _lib.impl(name, reference, "CPU")
    torch.library.register_fake(f"{NS}::{name}", fake, lib=_lib)
    op = getattr(torch.ops.opsdk_unit_layers, name).default
    declare_supported(op, [Support(F32(2, 3))])
    return op


def flattening_npu(x):
    return x.view(-1) * 2  # .view needs a contiguous input


FLATTENING = _define(
    "flattening", flattening_npu, lambda x: x.reshape(-1) * 2, lambda x: x.new_empty(x.numel())
)
PERMUTED_OUT = _define("permuted_out", lambda x: x * 2, lambda x: x * 2, meta.same_as)
PERMUTED_FAKE = _define(
    "permuted_fake", lambda x: (x * 2).contiguous(), lambda x: x * 2, torch.empty_like
)
CONTIGUOUS = _define("contiguous", lambda x: (x * 2).contiguous(), lambda x: x * 2, meta.same_as)


def _results(op, backends=("eager", "opcheck")):
    package = SimpleNamespace(__name__="layerpkg", __file__=__file__, OPS=(op,))
    cells = harness.cells(package, backends, ["static"])
    with run_scope.together({"opcheck", "aot_eager"}):
        return {cell.column: harness.run_cell(cell) for cell in cells}


def test_a_raising_kernel_is_eager_in_every_column_with_its_file_and_line():
    line = flattening_npu.__code__.co_firstlineno + 1
    for result in _results(FLATTENING).values():
        assert (result.status, result.layer) == ("fail", "eager"), result.describe()
        assert "non-contiguous" in result.message, result.message
        assert f"the npu kernel raised at {__file__}:{line} (flattening_npu)" in result.message
        assert "view size is not compatible" in result.message


def test_a_raising_reference_is_named():
    def flattening_reference(x):
        return x.view(-1) * 2

    _lib.define("ref_raises(Tensor x) -> Tensor")
    _lib.impl("ref_raises", flattening_npu, "PrivateUse1")
    _lib.impl("ref_raises", flattening_reference, "CPU")
    torch.library.register_fake(f"{NS}::ref_raises", lambda x: x.new_empty(x.numel()), lib=_lib)
    op = torch.ops.opsdk_unit_layers.ref_raises.default
    declare_supported(op, [Support(F32(2, 3))])
    result = _results(op, ["eager"])["eager"]
    assert (result.status, result.layer) == ("fail", "eager"), result.describe()
    assert "the CPU reference raised at" in result.message
    assert "(flattening_reference): RuntimeError: view size" in result.message


def test_a_kernel_returning_a_permuted_layout_is_eager_and_says_what_to_change():
    results = _results(PERMUTED_OUT)
    assert results["eager"].status == "pass", results["eager"].describe()  # values agree
    opcheck = results["opcheck"]
    assert (opcheck.status, opcheck.layer) == ("fail", "eager"), opcheck.describe()
    assert (
        "test_faketensor: output 0 (sizes [2, 3]): the npu kernel returned strides (1, 2) "
        "(not contiguous), the fake function strides (3, 1) (contiguous)"
    ) in opcheck.message
    assert opcheck.message.endswith("end the npu kernel with .contiguous()"), opcheck.message


def test_a_fake_keeping_the_input_layout_is_fake_and_says_what_to_change():
    results = _results(PERMUTED_FAKE)
    assert results["eager"].status == "pass", results["eager"].describe()
    opcheck = results["opcheck"]
    assert (opcheck.status, opcheck.layer) == ("fail", "fake"), opcheck.describe()
    assert "the fake function strides (1, 2) (not contiguous)" in opcheck.message
    assert "memory_format=torch.contiguous_format" in opcheck.message


def test_contiguous_outputs_pass_the_non_contiguous_case():
    for result in _results(CONTIGUOUS).values():
        assert result.status == "pass", result.describe()


def _fake_function_that_fails(x):
    raise AssertionError("fake wants 5 dims")


def test_a_fake_failure_under_dynamo_keeps_its_cause_and_place():
    from torch._dynamo.exc import TorchRuntimeError

    try:
        try:
            _fake_function_that_fails(None)
        except AssertionError as cause:
            raise TorchRuntimeError("RuntimeError when making fake tensor call") from cause
    except TorchRuntimeError as err:
        failure = as_failure(err, default_layer="aot")
    line = _fake_function_that_fails.__code__.co_firstlineno + 1
    assert failure.layer == "fake"
    assert (
        f"failed while tracing at {__file__}:{line} (_fake_function_that_fails): "
        "AssertionError: fake wants 5 dims;"
    ) in str(failure)


@pytest.mark.parametrize("device", ["npu", "cpu"])
def test_a_kernel_without_a_python_frame_has_no_place(device):
    from opsdk.harness.failures import kernel_failure

    failure = kernel_failure(RuntimeError("from C++"), device)
    which = {"npu": "the npu kernel", "cpu": "the CPU reference"}[device]
    assert str(failure).startswith(f"{which} raised: RuntimeError: from C++; ")


def test_meta_contiguous_lays_out_every_output_of_a_nest():
    permuted = torch.randn(3, 2).t()
    out = meta.contiguous((permuted, [permuted, None], 3))
    assert [t.is_contiguous() for t in (out[0], *out[1][:1])] == [True, True]
    assert out[1][1] is None and out[2] == 3


def test_a_reference_standing_in_for_an_attached_npu_kernel_returns_contiguous_outputs():
    from opsdk import attach

    lib = torch.library.Library(NS, "FRAGMENT")
    attach.define(lib, "scaled(Tensor x) -> Tensor")
    attach.define(lib, "scaled_(Tensor(a!) x) -> Tensor(a!)", tags=torch.Tag.inplace)
    assert attach.impl(lib, "scaled", lambda x: x * 2, "PrivateUse1")
    assert attach.impl(lib, "scaled_", lambda x: x.mul_(2), "PrivateUse1")
    x = torch.randn(3, 2, device="npu").t()
    assert torch.ops.opsdk_unit_layers.scaled(x).is_contiguous()
    assert torch.ops.opsdk_unit_layers.scaled_(x) is x  # written in place, returned as it is


def test_an_input_written_in_place_and_returned_keeps_its_layout_and_passes():
    _lib.define("doubled_(Tensor(a!) x) -> Tensor(a!)", tags=torch.Tag.inplace)
    _lib.impl("doubled_", lambda x: x.mul_(2), "PrivateUse1")
    _lib.impl("doubled_", lambda x: x.mul_(2), "CPU")
    torch.library.register_fake(f"{NS}::doubled_", lambda x: x, lib=_lib)
    op = torch.ops.opsdk_unit_layers.doubled_.default
    declare_supported(op, [Support(F32(2, 3))])
    for result in _results(op).values():
        assert result.status == "pass", result.describe()


def test_a_kernel_returning_its_input_is_schema_in_every_opcheck_cell():
    # In dynamic mode test_schema does not run; test_faketensor's alias check finds it.
    op = _define("returns_input", lambda x: x, lambda x: x, meta.same_as)
    for shapes in ("static", "dynamic"):
        package = SimpleNamespace(__name__="layerpkg", __file__=__file__, OPS=(op,))
        [cell] = harness.cells(package, ["opcheck"], [shapes])
        with run_scope.together({"opcheck"}):
            result = harness.run_cell(cell)
        assert (result.status, result.layer) == ("fail", "schema"), result.describe()
        assert "alias" in result.message, result.message


_KEPT: dict = {}


def _keeping_npu(x):
    """One output buffer per shape, kept in a global: the next call overwrites it."""
    out = _KEPT.setdefault(tuple(x.shape), torch.empty(x.shape, device=x.device))
    return torch.mul(x, 2, out=out)


def test_a_kernel_returning_a_kept_buffer_is_eager_and_says_what_to_change():
    op = _define("keeping", _keeping_npu, lambda x: x * 2, meta.same_as)
    result = _results(op, ["eager"])["eager"]
    assert (result.status, result.layer) == ("fail", "eager"), result.describe()
    assert "call 1 changed what call 0 returned" in result.message, result.message
    assert "return a new tensor each call" in result.message


def _raised_in(filename: str, message: str):
    """An AttributeError raised and caught in code of ``filename`` (no other frame on its
    traceback), wrapped as Dynamo wraps a backend's error, with TorchAir's note of the node
    it was converting."""
    from torch._dynamo.exc import BackendCompilerFailed

    source = (
        "def view_copy(size):\n"
        "    return size.symsize[0]\n"
        "def attempt():\n"
        "    try:\n"
        "        view_copy(())\n"
        "    except AttributeError as err:\n"
        "        return err\n"
    )
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    err = namespace["attempt"]()
    err.args = (f"{err}\n\nWhile executing %auto_functionalized_v2 : {message}",)
    return BackendCompilerFailed(lambda *a: None, err, None)


def test_a_conversion_failing_in_torchairs_own_code_does_not_send_the_user_to_converter_py(
    tmp_path, monkeypatch
):
    torchair = types.ModuleType("torchair")
    torchair.__file__ = str(tmp_path / "torchair" / "__init__.py")
    monkeypatch.setitem(sys.modules, "torchair", torchair)
    inside = str(tmp_path / "torchair" / "_ge_concrete_graph" / "auto_functionalized_v2.py")
    failure = as_failure(
        _raised_in(inside, "[...]"), default_layer="ge-exec", compile_layer="converter"
    )
    assert failure.layer == "converter"
    assert (
        f"TorchAir failed in its own code converting node %auto_functionalized_v2 at {inside}:2 "
        "(view_copy), with no frame of the op's converter on the stack: AttributeError: "
        "'tuple' object has no attribute 'symsize'; a TorchAir limitation"
    ) in str(failure)
    assert "fix converter.py" not in str(failure)
    # The same error raised in the op's own converter is the converter's to fix.
    mine = str(tmp_path / "my_op" / "converter.py")
    failure = as_failure(
        _raised_in(mine, "[...]"), default_layer="ge-exec", compile_layer="converter"
    )
    assert f"could not convert the graph at {mine}:2 (view_copy)" in str(failure)
    assert "fix converter.py" in str(failure)


def test_a_torch_guard_torchair_asked_for_on_a_data_dependent_size_is_torchairs(
    tmp_path, monkeypatch
):
    """TorchAir's ``0 in tensor.size()`` on an unbacked size fails in torch's guard code:
    the innermost frame past torch's is TorchAir's, and the message says what the guard
    was on (an OutputShapeDependOnCompute output), not "fix converter.py"."""
    from torch._dynamo.exc import BackendCompilerFailed

    torchair = types.ModuleType("torchair")
    torchair.__file__ = str(tmp_path / "torchair" / "__init__.py")
    monkeypatch.setitem(sys.modules, "torchair", torchair)
    in_torch = str(Path(torch.__file__).parent / "fx" / "experimental" / "symbolic_shapes.py")
    in_torchair = str(tmp_path / "torchair" / "_ge_concrete_graph" / "utils.py")
    namespace: dict = {}
    guard = "class GuardOnDataDependentSymNode(RuntimeError): pass\ndef guard():\n"
    exec(
        compile(guard + "    raise GuardOnDataDependentSymNode('u0')\n", in_torch, "exec"),
        namespace,
    )
    asking = (
        "def is_zero_element_tensor():\n"
        "    guard()\n"
        "def attempt():\n"
        "    try:\n"
        "        is_zero_element_tensor()\n"
        "    except RuntimeError as err:\n"
        "        return err\n"
    )
    exec(compile(asking, in_torchair, "exec"), namespace)
    raised = BackendCompilerFailed(lambda *a: None, namespace["attempt"](), None)
    failure = as_failure(raised, default_layer="ge-exec", compile_layer="converter")
    assert failure.layer == "converter"
    assert f"in its own code converting at {in_torchair}:2 (is_zero_element_tensor)" in str(failure)
    assert "depends on the op's data" in str(failure) and "fix converter.py" not in str(failure)


FAKE_NONE = _define("fake_none", lambda x: x * 2, lambda x: x * 2, lambda x: None)


def test_a_fake_returning_none_is_blamed_on_the_fake():
    """opcheck's test_faketensor skips a fake that returns None (torch compares outputs only
    when the fake returns something): the column passed it, and every compiled column failed
    in layer aot without naming the fake."""
    opcheck = _results(FAKE_NONE, ("opcheck",))["opcheck"]
    assert (opcheck.status, opcheck.layer) == ("fail", "fake"), opcheck.describe()
    assert f"the fake function registered at {__file__}:" in opcheck.message
    assert "returned None where the schema returns a Tensor: make it return" in opcheck.message
