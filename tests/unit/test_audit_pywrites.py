"""A Python kernel's writes, seen by running it (:mod:`opsdk.audit.repository.pywrites`):
an input it writes that its schema does not mark ``(a!)`` is the ``registry`` check's
finding, naming the schema's and the kernel's file:line; its twin declaring the write
passes; a kernel that cannot run on CPU is not checked, said in a note."""

import textwrap

import pytest

from opsdk.harness.cell import CellFailure

_PLANTED = """
import torch

lib = torch.library.Library("audit_pyw", "DEF")
lib.define("scribble(Tensor x, Tensor y) -> Tensor")
lib.define("scribble_ok(Tensor(a!) x, Tensor y) -> Tensor")
lib.define("npu_only(Tensor x) -> Tensor")


def scribble(x, y):
    x.add_(y)
    return x * 2


def npu_only(x):
    raise RuntimeError("npu_only needs the npu")


lib.impl("scribble", scribble, "PrivateUse1")
lib.impl("scribble_ok", scribble, "CPU")
lib.impl("npu_only", npu_only, "CompositeExplicitAutograd")


@torch.library.custom_op("audit_pyw::bump", mutates_args=())
def bump(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    return x + 1


bump.register_fake(lambda x: torch.empty_like(x))
for name in ("scribble", "scribble_ok", "npu_only"):
    torch.library.register_fake(f"audit_pyw::{name}", lambda x, y=None: x * 1, lib=lib)
"""


def _line(text: str, needle: str) -> int:
    return next(i for i, t in enumerate(text.splitlines(), 1) if needle in t)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    from opsdk.audit import repository

    root = tmp_path_factory.mktemp("pywrites")
    (root / "audit_pyw_ops.py").write_text(textwrap.dedent(_PLANTED))
    library = repository.load(root, {})
    return {op.qualname.split("::")[-1]: op for op in library.ops}, library


def _check(planted, name):
    from opsdk.audit.checks import registry

    ops, library = planted
    return registry.check(library, ops[name], "static")


def test_an_undeclared_write_is_a_finding_naming_schema_and_kernel(planted):
    with pytest.raises(CellFailure) as failure:
        _check(planted, "scribble")
    message = str(failure.value)
    schema = _line(_PLANTED, '"scribble(')
    kernel = _line(_PLANTED, "def scribble(")
    assert f"audit_pyw_ops.py:{schema}" in message, message
    assert f"audit_pyw_ops.py:{kernel}" in message, message
    assert "writes x: its PrivateUse1 kernel" in message, message
    assert "mark it Tensor(a!) x" in message and "Tensor(a!) y" not in message, message


def test_a_custom_ops_undeclared_write_names_the_function_given(planted):
    """``custom_op`` registers a closure of torch's; the finding names the library's
    function (decorated: its first line) and the decorator as the schema's place."""
    with pytest.raises(CellFailure) as failure:
        _check(planted, "bump")
    message = str(failure.value)
    decorated = _line(_PLANTED, 'custom_op("audit_pyw::bump"')
    assert f"kernel (audit_pyw_ops.py:{decorated})" in message, message
    assert f"the schema (audit_pyw_ops.py:{decorated})" in message, message
    assert "writes x: its CompositeExplicitAutograd kernel" in message, message


def test_a_declared_write_passes(planted):
    assert _check(planted, "scribble_ok") == []


def test_a_kernel_that_raises_is_not_checked(planted):
    [note] = _check(planted, "npu_only")
    assert "not checked" in note and "npu_only needs the npu" in note, note
    assert f"audit_pyw_ops.py:{_line(_PLANTED, 'def npu_only(')}" in note, note


def test_the_cache_key_covers_the_python_the_audit_imported(planted):
    """An edited Python fake or kernel must be a new library to the audit's cache: the
    module the load imported is among the files its sources digest reads."""
    import sys
    from pathlib import Path

    from opsdk.audit import repository

    module = Path(sys.modules["audit_pyw_ops"].__file__)
    assert repository._imported_from(module.parent) == [module]
