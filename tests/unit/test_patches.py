"""opsdk._runtime.patches: every patch of a private torch/TorchAir/torch_npu API says
what it patches, why, and which release it was checked against."""

from __future__ import annotations

import inspect
import re

import pytest

from opsdk._runtime import patches

_CHECKED = re.compile(r"Checked against (torch|torch-npu) \d+\.\d+\.\d+")


def _problems(fn) -> list[str]:
    doc = inspect.getdoc(fn) or ""
    problems = []
    if not _CHECKED.search(doc):
        problems.append("declares no 'Checked against torch[-npu] X.Y.Z'")
    if "Why" not in doc and "why" not in doc:
        problems.append("does not say why")
    return problems


def _patches():
    return [
        (name, fn)
        for name, fn in inspect.getmembers(patches, inspect.isfunction)
        if fn.__module__ == patches.__name__ and not name.startswith("_")
    ]


def test_the_patch_list_is_the_public_surface():
    assert sorted(name for name, _ in _patches()) == sorted(patches.__all__)
    assert len(patches.__all__) >= 3


@pytest.mark.parametrize("name", patches.__all__)
def test_each_patch_declares_why_and_its_checked_version(name):
    assert _problems(getattr(patches, name)) == []


def test_the_check_fails_a_patch_without_a_version():
    def undocumented():
        """Replace torch.something. Why: because."""

    assert _problems(undocumented) == ["declares no 'Checked against torch[-npu] X.Y.Z'"]
