"""The converter helpers a generated converter calls, on TorchAir's own GE builders."""

import pytest

from opsdk.converters import int32_input, int64_input, scalar_input
from opsdk.offline.torchair import torchair_with_converters


@pytest.fixture(scope="module")
def ge():
    torchair_with_converters()
    from torchair import ge

    return ge


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(2, "DT_INT64"), (0.5, "DT_FLOAT"), ([1, 2], "DT_INT64"), ([1, 2.5], "DT_FLOAT")],
)
def test_a_scalar_or_scalar_list_is_a_const_of_its_own_type(ge, value, dtype):
    """A Scalar[] of ints is int64, as TorchAir's foreach converters pass one (not float)."""
    from torchair.ge._ge_graph import GeGraph

    with GeGraph(name="g"):
        const = scalar_input(value)
    assert const.node.type == "Const" and f"dtype={dtype}," in repr(const)


def test_a_symbolic_item_of_a_scalar_list_is_refused_with_the_fix(ge):
    from torchair.ge._ge_graph import Data, GeGraph

    with GeGraph(name="g"):
        symbolic = Data(index=0, dtype=ge.DataType.DT_INT64, shape=[], placement="CPU")
        with pytest.raises(TypeError, match=r"declare the list's values in specs.py"):
            scalar_input([1, symbolic])


@pytest.mark.parametrize(
    ("helper", "dtype"), [(int64_input, "DT_INT64"), (int32_input, "DT_INT32")]
)
def test_a_symint_is_an_int_input_of_the_type_asked(ge, helper, dtype):
    """A concrete value a Const, a symbolic one (TorchAir's int64 host Data) cast unless it
    is already of the type; None stays None (an absent optional input)."""
    from torchair.ge._ge_graph import Data, GeGraph

    with GeGraph(name="g"):
        const = helper([2, 3])
        symbolic = Data(index=0, dtype=ge.DataType.DT_INT64, shape=[], placement="CPU")
        symbolic._ge_dtype = ge.DataType.DT_INT64  # what TorchAir's set_meta gives a SymInt
        fed = helper(symbolic)
    assert const.node.type == "Const" and f"dtype={dtype}," in repr(const)
    assert (fed is symbolic) == (dtype == "DT_INT64")
    assert fed is symbolic or fed.node.type == "Cast"
    assert helper(None) is None
