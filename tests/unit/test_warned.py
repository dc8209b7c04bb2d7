"""Catching warnings keeps the filters code adds meanwhile: TorchAir's import, inside the
audit's loading of a library (``cann.warnings_said``), quiets its converters' import
failures offline; lost at the block's end, 123 of them landed in the first converter cell."""

import warnings

import pytest

from opsdk import cann
from opsdk._runtime.warned import caught
from opsdk.cann import CannWarning


@pytest.fixture(autouse=True)
def _filters_restored():
    with warnings.catch_warnings():
        yield


def _shown(message: str) -> bool:
    with warnings.catch_warnings(record=True) as heard:
        warnings.warn(message, UserWarning, stacklevel=1)
    return bool(heard)


def test_a_filter_added_while_said_outlives_the_block_and_the_always_does_not(capsys):
    with cann.warnings_said("opsdk audit"):
        warnings.filterwarnings("ignore", message="Failed to import torchair-test")
        warnings.warn("a definition repaired", CannWarning, stacklevel=1)
    assert capsys.readouterr().err == "opsdk audit: warning: a definition repaired\n"
    assert not _shown("Failed to import torchair-test.x")
    assert _shown("anything else")
    assert not any(f[0] == "always" and f[2] is CannWarning for f in warnings.filters)


def test_caught_records_and_keeps_an_added_filter():
    with caught(record=True) as heard:
        warnings.filterwarnings("ignore", message="quiet-after")
        warnings.warn("recorded", UserWarning, stacklevel=1)
    assert [str(w.message) for w in heard] == ["recorded"]
    assert not _shown("quiet-after")
