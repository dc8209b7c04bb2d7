"""A first test of the op, beside the conformance matrix the opsdk plugin adds (conftest.py).

The op on npu tensors must give what its CPU kernel, the reference, gives: checked here on
random float32 tensors and a sample or the default for each other argument, the case
``opsdk check`` runs for an op without specs. Grow it with the inputs your op is for.

Run it alone with pytest and its path, tests/test_my_cpp_add.py; ``pytest`` runs the matrix
too.
"""

import torch

from my_cpp_add import OP


def test_my_cpp_add_on_npu_matches_its_reference():
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    npu_x, npu_y = x.to("npu"), y.to("npu")
    expected = OP(x, y)
    got = OP(npu_x, npu_y)
    torch.testing.assert_close(got, expected, check_device=False)
