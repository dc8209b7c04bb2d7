"""What TorchAir traced for a GE node's output, as the C++ inference is held to it
(``opsdk.harness.core.infer_nodes.traced``): a symbolic size is one dim, however many
commas its expression has."""

import pytest

from opsdk.harness.core import infer_nodes
from opsdk.offline.torchair import torchair_with_converters


@pytest.fixture(scope="module")
def desc():
    torchair_with_converters()
    from torchair._ge_concrete_graph.ge_ir_pb2 import TensorDescriptor

    def make(meta: str):
        made = TensorDescriptor()
        made.attr["_meta"].s = meta.encode()
        return made

    return make


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ("Tensor(dtype=torch.float16, shape=torch.Size([2, 3])", ((2, 3), "DT_FLOAT16")),
        (
            "Tensor(dtype=torch.float32, shape=torch.Size([s10, FloorToInt(IntTrueDiv(s10, 2))])",
            ((-1, -1), "DT_FLOAT"),
        ),
        ("Tensor(dtype=torch.int64, shape=torch.Size([Max(1, s0), 4])", ((-1, 4), "DT_INT64")),
        ("Tensor(dtype=torch.bfloat16, shape=torch.Size([])", ((), "DT_BF16")),
    ],
)
def test_a_symbolic_size_is_one_dim(desc, meta, expected):
    assert infer_nodes.traced(desc(meta)) == expected


def test_what_torchair_did_not_record_is_none(desc):
    assert infer_nodes.traced(desc("")) == (None, None)
