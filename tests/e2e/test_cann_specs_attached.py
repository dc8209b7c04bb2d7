"""A `--from-cann --attach` package made by `opsdk new` (which runs ruff): its specs take the
definition's dtypes in its own argument order."""


def test_an_attached_op_gets_the_definitions_dtypes_in_its_own_argument_order(tmp_path):
    """`--attach NS::OP --from-cann FILE`: the specs are CANN's rows (not the add's), bound
    to the torch op's names and order (``self`` is CANN's ``x``)."""
    import json

    from opsdk.scaffold import NewRequest, new

    tensor = {"param_type": "required", "format": ["ND"], "type": ["bf16"]}
    source = tmp_path / "scale.json"
    entry = {"op": "Scale", "input_desc": [dict(tensor, name="x"), dict(tensor, name="s")]}
    source.write_text(json.dumps([dict(entry, output_desc=[dict(tensor, name="y")])]))
    req = NewRequest(
        "npu_opsdk_cann_scale",
        namespace="npu",
        schema="npu_opsdk_cann_scale(Tensor s, Tensor self) -> Tensor",
        attach=True,
        from_cann=source,
        out=tmp_path,
    )
    specs = (new(req).path / "npu_opsdk_cann_scale" / "specs.py").read_text()
    assert "Support(BF16(4, 4), BF16(4, 4))" in specs and "Support(F32" not in specs
