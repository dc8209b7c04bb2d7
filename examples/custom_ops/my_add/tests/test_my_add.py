"""Conformance of opsdk_examples::my_add: every cell of opsdk's matrix for this package.

Run ``pytest`` here, or ``opsdk check .`` for the same checks as a report.
"""

import pytest
from opsdk import harness

import my_add

CELLS = harness.cells(my_add, backends=harness.DEFAULT_BACKENDS)


@pytest.mark.parametrize("cell", CELLS, ids=harness.cell_id)
def test_conformance(cell):
    result = harness.run_cell(cell)
    assert result.status == "pass", result.describe()
