"""How a report output refused is seen, for the outputs' tests."""

import pytest

from opsdk import _outputs
from opsdk.errors import OpsdkError


def refused(files=None, folders=None) -> str:
    with pytest.raises(OpsdkError) as err:
        _outputs.check(files or {}, folders)
    message = str(err.value)
    assert "\n" not in message
    return message


def outputs_of(flag, path):
    """``_outputs.check``'s arguments for one flag: --dump and --out name folders."""
    if flag in ("--dump", "--out"):
        return {}, {flag: path}
    return {flag: (path, "report.json")}, None
