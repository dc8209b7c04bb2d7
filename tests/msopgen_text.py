"""An msopgen JSON definition for `opsdk new`'s tests."""

MSOPGEN = """[{"op": "MyOp",
  "input_desc": [{"name": "x", "param_type": "required", "format": %s, "type": ["fp16", "float"]}],
  "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": %s}],
  "attr": [{"name": "a", "param_type": "optional", "type": %s, "default_value": %s}]}]"""
