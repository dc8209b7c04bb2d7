"""The audit check contract in code: every registered check's module is a
:class:`opsdk.audit.CheckModule`, held to it by mypy (the ``MODULES`` tuple mypy reads) and
at run time (:meth:`Check.checker`); a check is looked up typed (:func:`check_named`)."""

import ast
import types
from pathlib import Path

import pytest

import opsdk.audit
from opsdk.audit import AUDIT_SUITE, Check, CheckModule, check_named
from opsdk.harness import columns


def _modules_mypy_checks() -> list[str]:
    """The names in ``opsdk/audit/__init__.py``'s ``MODULES`` tuple (a type-checking block:
    not there at run time)."""
    tree = ast.parse(Path(opsdk.audit.__file__).read_text())
    (annotated,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "MODULES"
    ]
    return [element.id for element in annotated.value.elts]


def test_every_registered_check_is_a_check_module_mypy_holds_to_the_contract():
    names = columns.names(AUDIT_SUITE)
    assert _modules_mypy_checks() == list(names)
    for name in names:
        assert isinstance(check_named(name).checker(), CheckModule)


def test_a_check_module_without_check_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(Check, "implementation", lambda self: types.ModuleType("checks.empty"))
    with pytest.raises(TypeError, match=r"checks.empty defines no check\(library, op, shapes\)"):
        Check("empty", ("static",)).checker()


def test_a_check_is_looked_up_typed():
    assert check_named("fake") is columns.judge("fake", AUDIT_SUITE)
    with pytest.raises(LookupError, match="no audit check 'eager'"):
        check_named("eager")  # a column, not a check
