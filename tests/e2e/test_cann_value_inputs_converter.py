"""A value input's converter in a package `opsdk new --from-cann` makes (which runs ruff):
it feeds the declared int type."""

from value_input_defs import value_input, value_opdef

from opsdk.scaffold import NewRequest, new


def test_the_converter_feeds_the_declared_int_type(tmp_path):
    """int64 where the definition takes it, int32 where it declares only int32 (GE checks)."""
    text = value_opdef(value_input("axis") + value_input("size", "{ge::DT_INT32, ge::DT_INT32}"))
    source = tmp_path / "vd_def.cpp"
    source.write_text(text)
    pkg = new(NewRequest("vd", namespace="t_vd", out=tmp_path, from_cann=source)).path
    converter = (pkg / "vd" / "converter.py").read_text()
    assert '"axis": int64_input(axis)' in converter and '"size": int32_input(size)' in converter
    assert "from opsdk.converters import int32_input, int64_input" in converter
    specs = (pkg / "vd" / "specs.py").read_text()
    assert "Fixed, OneOf" not in specs and "Fixed" in specs  # imports what it uses
