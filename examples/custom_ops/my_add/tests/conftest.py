"""Tests of the op.

The conformance matrix needs no test code here: ``opsdk_package`` in
pyproject.toml turns on opsdk's pytest plugin (installed with the package's dev
extra: ``pip install -e ".[dev]"``), which adds one item per op,
column and shape mode, named like
``opsdk_examples::my_add[ge-dynamic]`` and marked by both
(``pytest -m ge``, ``pytest -m "dynamic and not npugraph_ex"``), running the
checks of ``opsdk check .``; ``pytest -n auto`` spreads them over processes.

Known failures are waived in ../opsdk-waivers.toml, which makes them xfail (and
fail again once they pass, so the waiver gets removed)::

    [[waiver]]
    op = "opsdk_examples::my_add"
    column = "ge"           # or "*"
    shapes = "dynamic"      # or "*"
    reason = "why, and the issue tracking it"

Fixtures for your own tests of the op go in this file, the tests beside it, as
test_my_add.py, a first one that runs the op on one input.
"""
