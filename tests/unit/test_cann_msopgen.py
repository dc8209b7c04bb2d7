"""Reading msopgen JSON as msopgen reads it: its words, its tolerance, its warnings.

The vocabulary below is msopgen's own (``config/transform.json`` of Ascend/msopgen:
``IR_ATTR_TYPE_MAP`` and ``INPUT_OUTPUT_DTYPE_MAP``); the JSON is written here in the
shapes CANN's docs and real sample files use, sloppy ones included.
"""

from __future__ import annotations

import json
import warnings

import pytest

from opsdk import cann
from opsdk._runtime import spec, types
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann import CannOp, CannWarning, exports
from opsdk.errors import SpecError
from opsdk.scaffold.cann_torch import torch_side

# msopgen's attr types that a torch schema type holds, with the row each must map to.
ATTR_TYPES = {
    "int": "int",
    "float": "float",
    "string": "str",
    "bool": "bool",
    "type": "ScalarType",
    "list_int": "int[]",
    "list_float": "float[]",
    "list_bool": "bool[]",
    "list_string": "str[]",
}
# msopgen's data type words (single types) and the GE type each stands for.
DTYPE_WORDS = {
    "float": "DT_FLOAT",
    "fp32": "DT_FLOAT",
    "float32": "DT_FLOAT",
    "half": "DT_FLOAT16",
    "fp16": "DT_FLOAT16",
    "float16": "DT_FLOAT16",
    "bf16": "DT_BF16",
    "bfloat16": "DT_BF16",
    "double": "DT_DOUBLE",
    "bool": "DT_BOOL",
    "int8": "DT_INT8",
    "int16": "DT_INT16",
    "int32": "DT_INT32",
    "int64": "DT_INT64",
    "uint8": "DT_UINT8",
    "uint16": "DT_UINT16",
    "uint32": "DT_UINT32",
    "uint64": "DT_UINT64",
    "uint1": "DT_UINT1",
    "int2": "DT_INT2",
    "qint8": "DT_QINT8",
    "qint16": "DT_QINT16",
    "qint32": "DT_QINT32",
    "quint8": "DT_QUINT8",
    "quint16": "DT_QUINT16",
    "complex32": "DT_COMPLEX32",
    "complex64": "DT_COMPLEX64",
    "complex128": "DT_COMPLEX128",
    "string": "DT_STRING",
    "resource": "DT_RESOURCE",
}
COLLECTIONS = [
    "numbertype",
    "realnumbertype",
    "quantizedtype",
    "all",
    "BasicType",
    "IndexNumberType",
]


def _tensor(name="x", **keys) -> dict:
    return {"name": name, "param_type": "required", "format": ["ND"], "type": ["float16"], **keys}


def _json(attrs=(), inputs=None, outputs=None, **op_keys) -> str:
    entry = {
        "op": "MyOp",
        "language": "cpp",
        "input_desc": [_tensor()] if inputs is None else inputs,
        "output_desc": [_tensor("y")] if outputs is None else outputs,
        "attr": list(attrs),
        **op_keys,
    }
    return json.dumps([entry])


def _read(text: str) -> tuple[CannOp, list[str]]:
    """The one op of ``text`` and the CannWarnings reading it gave."""
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        (op,) = cann.read(text)
    assert all(issubclass(w.category, CannWarning) for w in heard), heard
    return op, [str(w.message) for w in heard]


def _refusal(text: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CannWarning)
        with pytest.raises(SpecError) as err:
            cann.read(text)
    message = str(err.value)
    assert "\n" not in message
    return message


# CANN's msopgen guide's example (ReduceMaxCustom), as written there.
GUIDE = [
    {
        "op": "ReduceMaxCustom",
        "input_desc": [
            {"name": "x", "param_type": "required", "format": ["ND"], "type": ["float16"]}
        ],
        "output_desc": [
            {"name": "y", "param_type": "required", "format": ["ND"], "type": ["float16"]},
            {"name": "idx", "param_type": "required", "format": ["ND"], "type": ["int32"]},
        ],
        "attr": [
            {"name": "reduceDim", "param_type": "required", "type": "int"},
            {"name": "isKeepDim", "param_type": "optional", "type": "int", "default_value": 1},
        ],
    }
]


def test_the_guides_example_file(tmp_path):
    path = tmp_path / "reduce_max_custom.json"
    path.write_text(json.dumps(GUIDE))
    op, heard = _read(str(path))
    assert op.ir.op_type == "ReduceMaxCustom" and not heard
    assert op.ir.outputs == (Output("y"), Output("idx"))
    assert op.ir.attrs == (Attr("reduceDim", "VT_INT"), Attr("isKeepDim", "VT_INT", 1))
    assert op.dtypes == {"x": ("DT_FLOAT16",), "y": ("DT_FLOAT16",), "idx": ("DT_INT32",)}


def test_the_type_tables_msopgen_column_is_msopgens_vocabulary():
    assert {k: r.schema for k, r in types.BY_MSOPGEN.items()} == ATTR_TYPES
    spelled = {d.msopgen: d.ge for d in types.DTYPES.values() if d.msopgen}
    assert spelled.items() <= DTYPE_WORDS.items()


@pytest.mark.parametrize(
    ("kind", "default", "value"),
    [
        ("int", "-2", -2),
        ("float", "0.5", 0.5),
        ("string", "mean", "mean"),
        ("bool", "true", True),
        ("type", "DT_INT64", types.DTYPES["DT_INT64"].value),
        ("list_int", "{1, 2}", (1, 2)),
        ("list_float", "[0.5, 1]", (0.5, 1.0)),
        ("list_bool", "{true, false}", (True, False)),
        ("list_string", '["a", "b"]', ("a", "b")),
    ],
)
def test_each_attr_type_and_its_default(kind, default, value):
    attrs = [
        {"name": "req", "param_type": "required", "type": kind},
        {"name": "opt", "param_type": "optional", "type": kind, "default_value": default},
    ]
    op, heard = _read(_json(attrs))
    vt = types.TYPES[ATTR_TYPES[kind]].value_type
    assert op.ir.attrs == (Attr("req", vt), Attr("opt", vt, value)) and not heard


@pytest.mark.parametrize(
    ("kind", "default", "value"),
    [
        ("list_int", "{1, 1}", (1, 1)),
        ("list_int", "[1, 1, 1, 1]", (1, 1, 1, 1)),
        ("list_int", " {1,-2} ", (1, -2)),
        ("list_int", "{}", ()),
        ("list_int", "[]", ()),
        ("list_int", [1, 1], (1, 1)),
        ("list_int", [], ()),
        ("list_int", {}, ()),  # msopgen renders it as the empty C++ list {}
        ("list_float", [0.5, 1], (0.5, 1.0)),
        ("list_bool", "[True, FALSE]", (True, False)),
        ("list_bool", [False], (False,)),
        ("bool", "False", False),
        ("bool", "TRUE", True),
        ("bool", True, True),
        ("int", "1", 1),
        ("int", 3, 3),
        ("float", "1e-6", 1e-6),
        ("float", 0, 0.0),
        ("float", "0.1", 0.1),
        ("type", "float16", types.DTYPES["DT_FLOAT16"].value),
        ("type", "bf16", types.DTYPES["DT_BF16"].value),
    ],
)
def test_defaults_as_real_files_write_them(kind, default, value):
    attr = {"name": "a", "param_type": "optional", "type": kind, "default_value": default}
    op, heard = _read(_json([attr]))
    assert op.ir.attrs[0].default == value and not heard


@pytest.mark.parametrize(("word", "ge"), DTYPE_WORDS.items())
def test_each_msopgen_data_type_word(word, ge):
    op, _ = _read(_json(inputs=[_tensor(type=[word])]))
    assert op.dtypes["x"] == (ge,)


@pytest.mark.parametrize("word", COLLECTIONS)
def test_collections_take_their_format_for_each_of_their_types(word):
    x = _tensor(type=["fp16", word], format=["NCHW", "NHWC"])
    op, _ = _read(_json(inputs=[x], outputs=[dict(x, name="y")]))
    dtypes, formats = op.dtypes["x"], op.formats["x"]
    assert len(dtypes) > 2 and dtypes[0] == "DT_FLOAT16"
    assert formats == ("NCHW",) + ("NHWC",) * (len(dtypes) - 1)


def test_a_single_string_serves_as_a_list_and_one_value_fills_the_other_list():
    inputs = [
        _tensor("a", type=["float16", "float"], format="ND"),
        _tensor("b", type=["fp16", "int32"], format=["ND"]),
        _tensor("c", type="bf16", format=["ND", "FRACTAL_NZ"]),
    ]
    op, heard = _read(_json(inputs=inputs, outputs=[_tensor("y", type=["fp16", "fp16"])]))
    assert op.dtypes == {
        "a": ("DT_FLOAT16", "DT_FLOAT"),
        "b": ("DT_FLOAT16", "DT_INT32"),
        "c": ("DT_BF16", "DT_BF16"),
        "y": ("DT_FLOAT16", "DT_FLOAT16"),
    }
    assert op.formats["a"] == op.formats["b"] == ("ND", "ND")
    assert op.formats["c"] == ("ND", "FRACTAL_NZ")
    assert not heard


def test_tensors_listing_different_numbers_of_types_are_refused_as_msopgen_does():
    """msopgen's _check_input_output_info: the i-th types of all tensors are one combination."""
    inputs = [_tensor("a", type=["fp16", "float"]), _tensor("b", type=["fp16", "int32", "int8"])]
    outputs = [_tensor("y", type=["fp16", "fp16"])]
    message = _refusal(_json(inputs=inputs, outputs=outputs))
    assert "MyOp: 'b' lists 3 types and 'a' 2; give every input and output" in message
    _read(_json(inputs=inputs[:1], outputs=outputs))  # the correct twin


@pytest.mark.parametrize(
    ("where", "param_type"), [("input", None), ("output", "Required"), ("attr", "dynamic")]
)
def test_a_missing_or_invalid_param_type_is_required_with_a_warning(where, param_type):
    desc = (
        {"name": "k", "type": "int"}
        if where == "attr"
        else _tensor("x" if where == "input" else "y")
    )
    desc.pop("param_type", None)
    if param_type is not None:
        desc["param_type"] = param_type
    parts = {"input": {"inputs": [desc]}, "output": {"outputs": [desc]}, "attr": {"attrs": [desc]}}
    op, heard = _read(_json(**parts[where]))
    kinds = [t.kind for t in (*op.ir.inputs, *op.ir.outputs)]
    assert kinds == ["required", "required"] and op.ir.attrs == (
        (Attr("k", "VT_INT"),) if where == "attr" else ()
    )
    name = desc["name"]
    (message,) = heard
    assert f"MyOp: {where} {name!r} has " in message and "taken as required" in message
    assert (repr(param_type) if param_type else "no param_type") in message


@pytest.mark.parametrize(
    ("place", "key"),
    [("op", "attr_desc"), ("input", "dtype"), ("output", "shape"), ("attr", "value")],
)
def test_keys_msopgen_ignores_are_ignored_with_a_warning_naming_them(place, key):
    attr = {"name": "k", "param_type": "required", "type": "int"}
    inputs, outputs = [_tensor()], [_tensor("y")]
    {"input": inputs[0], "output": outputs[0], "attr": attr}.get(place, {})[key] = "float16"
    extra = {key: []} if place == "op" else {}
    op, heard = _read(_json([attr], inputs, outputs, **extra))
    assert op.ir == IrDef("MyOp", [Input("x")], [Output("y")], [Attr("k", "VT_INT")])
    (message,) = heard
    assert f"key {key!r} is not msopgen's and is ignored" in message


def test_the_language_key_of_cann_samples_is_no_stray_key():
    _, heard = _read(_json(language="cpp"))
    assert heard == []


@pytest.mark.parametrize(
    ("kind", "fix"),
    [
        ("list_itn", "write 'list_int'"),
        ("listInt", "write 'list_int'"),
        ("integer", "write 'int'"),
        ("vector", "use one of msopgen's: int, "),
        (["int"], "write 'int'"),  # a list is no type
    ],
)
def test_an_attr_type_msopgen_does_not_know_is_refused_with_the_nearest(kind, fix):
    """msopgen only warns and makes the op without the attr: a typo would lose it."""
    attrs = [
        {"name": "strides", "param_type": "required", "type": kind},
        {"name": "k", "param_type": "required", "type": "int"},
    ]
    message = _refusal(_json(attrs))
    said = repr(kind if isinstance(kind, str) else repr(kind))
    assert f"MyOp: attr 'strides' has type {said}, not one of msopgen's attr types: " in message
    assert fix in message


def test_a_required_attrs_default_is_ignored_with_a_warning():
    attr = {"name": "k", "param_type": "required", "type": "int", "default_value": 2}
    op, heard = _read(_json([attr]))
    assert op.ir.attrs == (Attr("k", "VT_INT"),)
    (message,) = heard
    assert "attr 'k' is required" in message and "default_value" in message


def test_a_tensor_without_format_is_nd_with_a_warning():
    op, heard = _read(_json(inputs=[{"name": "x", "param_type": "required", "type": ["int8"]}]))
    assert op.formats["x"] == ("ND",)
    (message,) = heard
    assert "input 'x' has no \"format\" list: taken as ND" in message


def test_an_entry_without_op_is_skipped_and_a_repeated_op_is_the_last_one():
    first = json.loads(_json())[0]
    last = dict(first, input_desc=[_tensor("z")])
    text = json.dumps([{"input_desc": []}, first, last])
    op, heard = _read(text)
    assert op.ir.ir_input_names == ("z",)
    assert len(heard) == 2
    assert 'entry 0 has no "op" name' in heard[0] and "defined twice" in heard[1]


@pytest.mark.parametrize(
    ("kind", "advice"),
    [
        ("list_list_int", "flatten it into list_int attrs"),
        ("tensor", "declare it in input_desc"),
        ("list_tensor", "as a dynamic input"),
        ("list_type", "list_int of GE DataType values"),
    ],
)
def test_attr_types_no_torch_type_holds_are_refused(kind, advice):
    message = _refusal(_json([{"name": "k", "param_type": "required", "type": kind}]))
    assert f"attr 'k' has type {kind!r}, which no torch schema type holds" in message
    assert advice in message


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[{]", "not valid JSON"),
        ("[1]", "entry 0 is not a JSON object"),
        (_json(inputs={"name": "x"}), "'input_desc' must be a list of objects"),
        (_json(inputs=[{"type": ["int8"]}]), 'an input has no "name"'),
        (_json(inputs=[{"name": "x", "dtype": ["int8"]}]), "input 'x' has no \"type\" list"),
        (_json(inputs=[_tensor(type=["flaot16"])]), "unknown data type 'flaot16'; msopgen's"),
        (
            _json(inputs=[_tensor(format=["ND", "ND"], type=["int8", "int8", "int8"])]),
            "3 types and 2 formats",
        ),
        (_json(outputs=[_tensor("y", param_type="optional")]), "output 'y' is optional"),
        (
            _json([{"name": "k", "param_type": "optional", "type": "int", "value": 1}]),
            "attr 'k' is optional but has no \"default_value\"",
        ),
        (
            _json([{"name": "k", "param_type": "optional", "type": "int", "default_value": "x"}]),
            "attr 'k': default 'x' is not a Int",
        ),
        (
            _json([{"name": "k", "param_type": "optional", "type": "bool", "default_value": 0}]),
            "default 0 is not a Bool",
        ),
        (
            _json(
                [{"name": "k", "param_type": "optional", "type": "list_int", "default_value": "{0"}]
            ),
            "attr 'k': default '{0' is not a ListInt: its brackets do not pair; write it {0}",
        ),
    ],
)
def test_what_msopgen_cannot_build_is_refused_in_one_line(text, needle):
    assert needle in _refusal(text)


def _every_attr_type() -> CannOp:
    defaults = {
        "VT_INT": -1,
        "VT_FLOAT": 0.5,
        "VT_STRING": "mean",
        "VT_BOOL": True,
        "VT_DATA_TYPE": types.DTYPES["DT_BF16"].value,
        "VT_LIST_INT": (1, 1, 1, 1),
        "VT_LIST_FLOAT": (0.5, 1.0),
        "VT_LIST_BOOL": (True, False),
        "VT_LIST_STRING": ("a", "b"),
    }
    attrs = [Attr(f"a{i}", vt, value) for i, (vt, value) in enumerate(defaults.items())]
    attrs += [Attr(f"r{i}", vt) for i, vt in enumerate(defaults)]
    ir = IrDef("Every", [Input("x"), Input("o", "optional")], [Output("y")], attrs)
    dts = {"x": ("DT_FLOAT16", "DT_BF16"), "o": ("DT_INT64",) * 2, "y": ("DT_FLOAT",) * 2}
    return CannOp(ir, dts, {name: ("ND", "ND") for name in dts})


def test_the_export_writes_msopgens_words_and_reads_back_the_same_op():
    op = _every_attr_type()
    text = exports.msopgen_json(op)
    kinds = [a["type"] for a in json.loads(text)[0]["attr"]]
    assert set(kinds) == set(ATTR_TYPES) and "listInt" not in text
    assert json.loads(text)[0]["input_desc"][0]["type"] == ["float16", "bfloat16"]
    assert _read(text) == (op, [])


def test_the_export_refuses_a_data_type_msopgen_has_no_word_for():
    op = CannOp(IrDef("F8", [Input("x")], [Output("y")]), {"x": ("DT_FLOAT8_E5M2",), "y": ()})
    with pytest.raises(SpecError, match=r"F8: input 'x' has data type DT_FLOAT8_E5M2, which"):
        exports.msopgen_json(op)


def test_list_defaults_of_equal_items_make_a_schema_torch_takes_back():
    """msopgen's own test prototype (Conv2D, ``"default_value": [1,1,1,1]``): torch prints
    such an int[] default as ``=1``, which it refuses to parse for an unsized list."""
    attr = {"name": "strides", "param_type": "optional", "type": "list_int"}
    op, _ = _read(_json([dict(attr, default_value=[1, 1, 1, 1])]))
    parsed = spec.parse("conv" + torch_side(op).schema, namespace="tcm")
    assert "int[] strides=[1, 1, 1, 1]" in parsed.schema
    assert spec.parse(parsed.schema, namespace="tcm").schema == parsed.schema
