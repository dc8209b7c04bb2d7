"""The one table of schema types, and every table derived from it."""

import ast

import pytest
import torch

from opsdk._runtime import converters, irdef, locator, spec, types
from opsdk._runtime.spec import Arg
from opsdk.cann import cppsig, exports
from opsdk.errors import SpecError
from opsdk.scaffold import pysig

ROWS = list(types.TYPES.values())
ATTR_ROWS = [r for r in ROWS if r.value_type]


def _arg(type_text: str) -> Arg:
    return Arg("a", type_text, mutated=False, kwarg_only=False, has_default=False)


def test_ir_attr_types_are_the_tables_value_types():
    assert irdef.ATTR_TYPES == tuple(r.value_type for r in ATTR_ROWS)
    assert set(types.BY_VALUE_TYPE) == set(irdef.ATTR_TYPES)


@pytest.mark.parametrize("row", ATTR_ROWS, ids=lambda r: r.schema)
def test_attr_spellings_derive_from_the_row(row):
    op = spec.parse(f"ns::f(Tensor x, {row.schema} a) -> Tensor")
    assert converters.attr_builder(op.args[1]) == row.ge_attr
    ir = converters.ir_def_for(op)
    assert [(a.name, a.type) for a in ir.attrs] == [("a", row.value_type)]
    # ir.py spells the type as the converter's builder: the same IR attr
    assert irdef.Attr("a", row.ge_attr) == ir.attrs[0]
    assert f'"type": "{row.msopgen}"' in exports.msopgen_json(ir)
    assert f".REQUIRED_ATTR(a, {row.reg_op})" in exports.reg_op(ir)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.schema)
def test_python_and_cpp_spellings_derive_from_the_row(row):
    assert pysig.py_type(row.schema) == row.py
    if row.cpp is not None:
        assert cppsig.arg_type(_arg(row.schema)).removeprefix("const ").rstrip("&") == row.cpp
    if not row.value_type and not row.schema.startswith("Tensor"):
        with pytest.raises(ValueError, match="has no GE attr type"):
            converters.attr_builder(_arg(row.schema))
    assert _arg(row.schema).is_symbolic == row.symbolic


def _torchair_attr_builders() -> dict[str, tuple[str, str]]:
    """TorchAir's own ``ge/attr.py``, read (not imported): VT code -> (builder, field)."""
    source = locator.locate().path / "torchair" / "ge" / "attr.py"
    if not source.is_file():
        pytest.skip("TorchAir is not fetched (python -m opsdk fetch)")
    tree = ast.parse(source.read_text())
    fields, by_value_type = {}, {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or not isinstance(node.targets[0], ast.Name):
            continue
        name = node.targets[0].id
        if isinstance(node.value, ast.Call) and node.value.args:
            fields[name] = node.value.args[0].value.split(".")[0]
        if name == "_ATTR_TYPE_MAP":
            by_value_type = {
                k.value: v.id for k, v in zip(node.value.keys, node.value.values, strict=True)
            }
    return {vt: (builder, fields[builder]) for vt, builder in by_value_type.items()}


def test_attr_columns_match_torchairs_own_table():
    builders = _torchair_attr_builders()
    for row in ATTR_ROWS:
        assert builders[row.value_type] == (row.ge_attr, row.attr_field), row.schema


# Every type name torch's schema parser takes (aten/src/ATen/native/README.md and
# torch/csrc/jit/frontend/schema_type_parser.cpp); the forms an argument may take.
_TYPE_NAMES = (
    "Tensor int SymInt float bool str Scalar ScalarType Layout Device MemoryFormat Generator "
    "Storage Stream complex QScheme ConstQuantizerPtr DeviceIndex SymBool Any t Quantizer "
    "Capsule AnyEnumType Future(int) RRef(int)"
).split()
_FORMS = ("{}", "{}?", "{}[]", "{}[2]", "{}[]?", "{}?[]")
# Types torch accepts that opsdk has no row for: generated code refuses them.
_NO_ROW = {
    "Storage",
    "Stream",
    "complex",
    "QScheme",
    "Any",
    "t",
    "Quantizer",
    "Capsule",
    "AnyEnumType",
    "Future",
    "RRef",
}


def _accepted_types():
    for name in _TYPE_NAMES:
        for form in _FORMS:
            try:
                torch._C.parse_schema(f"ns::g({form.format(name)} x) -> Tensor")
            except RuntimeError:
                continue
            yield spec.parse(f"ns::g({form.format(name)} x) -> Tensor", validate=False).args[0]


def test_every_type_torch_accepts_has_a_row_or_a_clear_refusal():
    elements_without_row = set()
    for arg in _accepted_types():
        row = types.row(arg.type)
        element = arg.type.split("[")[0].removesuffix("?")
        if element not in types.TYPES:
            elements_without_row.add(element)
        try:
            cppsig.arg_type(arg)
        except SpecError as err:  # refused with the way out, never a KeyError
            assert "has no C++ kernel type" in str(err)
        else:
            assert row is not None, arg.type
        if not arg.is_tensor and not (row and row.value_type) and not arg.is_symbolic:
            with pytest.raises(ValueError, match="has no GE attr type"):
                converters.attr_builder(arg)
    assert elements_without_row == _NO_ROW


def test_the_executors_dtypes_are_the_tables():
    """The GE executor reads GE data types through types.DTYPES, not a table of its own:
    every GE value with a plain torch dtype decodes to it (GE's 6 is int16, torch's float)."""
    from opsdk.offline.ge import GeGraphError, proto

    decodable = {
        d.value: getattr(torch, d.torch)
        for d in types.DTYPES.values()
        if d.torch and not d.torch.startswith("q")
    }
    for value, dtype in decodable.items():
        assert proto.torch_dtype_from_ge(value) is dtype
    assert proto.torch_dtype_from_ge(types.DTYPES["DT_INT16"].value) is torch.int16
    with pytest.raises(GeGraphError, match="no torch equivalent"):
        proto.torch_dtype_from_ge(types.DTYPES["DT_STRING"].value)


def test_a_scalartype_default_is_spelled_as_a_torch_dtype():
    """A parsed schema holds a ScalarType default in torch's numbering (int64 is 4):
    generated Python spells the dtype, never the number."""
    (arg,) = spec.parse("ns::g(ScalarType dtype=int64) -> ()", validate=False).args
    assert arg.default == 4 and pysig.default(arg) == "torch.int64"


def test_a_tensor_dtype_without_a_ge_row_is_a_spec_error_naming_it():
    assert types.known_dtype(str(torch.bfloat16)).ge == "DT_BF16"
    with pytest.raises(SpecError, match=r"^torch.float8_e5m2fnuz has no GE data type"):
        types.known_dtype(str(torch.float8_e5m2fnuz))
