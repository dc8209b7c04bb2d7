"""`opsdk new` refuses, in one line with exit 2 and nothing written, what it used to take
and then fail on: an empty --schema (it built the default add), an op without a tensor
(it failed 12 of 15 cells), a package name another module answers to, defaults torch
cannot hold, more arguments than PyTorch takes, and --from-cann files no definition is."""

import os
import threading
from pathlib import Path

import pytest
import torch
from msopgen_text import MSOPGEN

from opsdk import cli
from opsdk._runtime import spec
from opsdk.cann import files
from opsdk.errors import ScaffoldError, SpecError
from opsdk.inputs import I32
from opsdk.scaffold import NewRequest
from opsdk.scaffold.cann_project import new_project


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("", "--schema is empty: give the op's schema, e.g. 'my_op(Tensor x) -> Tensor'"),
        ("  ", "--schema is empty"),
        ("my_op(int x) -> int", "my_op takes no tensor: an npu kernel, a GE graph"),
    ],
)
def test_a_schema_opsdk_cannot_check_is_refused(tmp_path, capsys, schema, message):
    assert cli.main(["new", "my_op", "--schema", schema, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_a_0_dim_spec_with_options_prints_as_written():
    """Case labels: no leading comma where there are no sizes."""
    assert repr(I32(value_range=(0, 2))) == "I32(value_range=(0, 2))"
    assert repr(I32(2, value_range=(0, 2))) == "I32(2, value_range=(0, 2))"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            ('["ND"]', '["fp16", "float"]', '"list_itn"', '"{0}"'),
            "MyOp: attr 'a' has type 'list_itn', not one of msopgen's attr types: write 'list_int'",
        ),
        (
            ('["ND"]', '["fp16", "float"]', '"list_int"', '"{0"'),
            "MyOp: attr 'a': default '{0' is not a ListInt: its brackets do not pair; write it {0}",
        ),
        (
            ('["ND", "ND", "ND"]', '["fp16", "float"]', '"list_int"', '"{0}"'),
            "MyOp: input 'x': 2 types and 3 formats; give one format per type",
        ),
        (
            ('["ND"]', '["fp16"]', '"list_int"', '"{0}"'),
            "MyOp: 'y' lists 1 types and 'x' 2; give every input and output one type per",
        ),
    ],
)
def test_an_msopgen_typo_is_refused_with_file_op_field_and_fix(tmp_path, capsys, fields, message):
    source = tmp_path / "my_op.json"
    source.write_text(MSOPGEN % fields)
    out = tmp_path / "o"
    assert cli.main(["new", "--from-cann", str(source), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{source}: {message}" in err and "\n" not in err
    assert not out.exists()


def test_a_project_folder_named_like_a_module_is_refused_with_the_folder_to_rename(tmp_path):
    root = tmp_path / "Json"  # the package is named after the folder: json
    root.mkdir()
    (root / "ops.json").write_text(MSOPGEN % ('["ND"]', '["fp16", "float"]', '"int"', '"0"'))
    with pytest.raises(ScaffoldError, match="'json' is a module of Python's standard library.*"
                       "rename the directory --from-cann names"):  # fmt: skip
        new_project(NewRequest(None, out=tmp_path / "o"), root)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("default", "message"),
    [
        (
            "int y=99999999999999999999999",
            "the int default 99999999999999999999999 does not fit int64: give one from "
            "-9223372036854775808 to 9223372036854775807",
        ),
        ("int[] y=[1, -9223372036854775809]", "the int default -9223372036854775809 does not"),
        ("float y=1e999", "the float default 1e999 is out of a double's range: give one from"),
        ("float y=-1e-310", "the float default -1e-310 is out of a double's range"),
        ("Scalar y=1e400", "the float default 1e400 is out of a double's range"),
        ("int y=0x10", "reads the hexadecimal 0x10 as 0: write it in decimal (16)"),
    ],
)
def test_a_default_torch_cannot_hold_is_refused(tmp_path, capsys, default, message):
    """torch's parser raised IndexError (stoll/stod out of range), a traceback; and it reads
    a hexadecimal int as 0, silently."""
    schema = f"my_op(Tensor x, {default}) -> Tensor"
    assert cli.main(["new", "my_op", "--schema", schema, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_the_extremes_of_int64_and_double_are_taken():
    op = spec.parse("my_op(Tensor x, int a=-9223372036854775808, float b=1.7e308, float c=0.0, "
                    "float d=2.3e-308) -> Tensor")  # fmt: skip
    assert [a.default for a in op.args[1:]] == [-(2**63), 1.7e308, 0.0, 2.3e-308]


def _tensors(count: int) -> str:
    return ", ".join(f"Tensor x{i}" for i in range(count))


def test_more_arguments_than_pytorch_takes_is_refused(tmp_path, capsys):
    """A 500-tensor schema was accepted; the package then failed to import."""
    schema = f"my_op({_tensors(65)}) -> Tensor"
    assert cli.main(["new", "my_op", "--schema", schema, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "the schema of my_op has 65 arguments and PyTorch's dispatcher takes at most 64" in err
    assert "one Tensor[]" in err and not (tmp_path / "o").exists()


def test_the_argument_limit_is_pytorchs_own():
    lib = torch.library.Library("opsdk_unit_arg_limit", "DEF")
    limit = spec.MAX_ARGUMENTS
    spec.parse(f"at_limit({_tensors(limit)}) -> Tensor")
    lib.define(f"at_limit({_tensors(limit)}) -> Tensor")
    with pytest.raises(RuntimeError, match=f"only supports {limit}"):
        lib.define(f"over_limit({_tensors(limit + 1)}) -> Tensor")


def test_updatable_counts_the_out_overloads_two_arguments(tmp_path, capsys):
    schema = f"my_op({_tensors(62)}, SymInt n) -> Tensor"
    argv = ["new", "my_op", "--schema", schema, "--updatable", "n", "--out", str(tmp_path / "o")]
    assert cli.main(argv) == 2
    assert "my_op.out (--updatable) has 65 arguments" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: "/dev/null", "not a regular file (a device, a FIFO or a folder)"),
        (
            lambda tmp: _written(tmp / "op.json", b'[{"op": "\x00"}]'),
            "a binary file (NUL bytes), not a CANN definition",
        ),
        (
            lambda tmp: _written(tmp / "op_proto.h", b"REG_OP(MyOp) // \xff\xfe"),
            "not UTF-8 text (byte 0xff at offset 16): save it as UTF-8",
        ),
    ],
    ids=["device", "binary", "not utf-8"],
)
def test_from_cann_refuses_what_no_definition_is(tmp_path, capsys, make, message):
    """A binary file ended in a UnicodeDecodeError traceback."""
    source = make(tmp_path)
    assert cli.main(["new", "my_op", "--from-cann", str(source), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"error: {source}: {message}" in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_an_endless_device_is_refused_unread():
    """/dev/zero was read until the OOM killer came (21.9 GB)."""
    with pytest.raises(SpecError, match=r"^/dev/zero: not a regular file \(a device"):
        files.text(Path("/dev/zero"))
    assert files.head(Path("/dev/zero")) == ""


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    fifo = tmp_path / "op.json"
    os.mkfifo(fifo)
    codes = []
    argv = ["new", "my_op", "--from-cann", str(fifo), "--out", str(tmp_path / "o")]
    worker = threading.Thread(target=lambda: codes.append(cli.main(argv)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    if not codes:  # let the blocked reader go, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert codes == [2]
    assert f"{fifo}: not a regular file (a device, a FIFO" in capsys.readouterr().err


def _written(path, data: bytes):
    path.write_bytes(data)
    return path


def test_a_definition_past_the_size_limit_is_refused_unread(tmp_path):
    big = tmp_path / "huge_proto.h"
    with big.open("wb") as f:  # sparse: no disk, but larger than any definition
        f.write(b"REG_OP(Huge)\n")
        f.truncate(files.MAX_BYTES + 1)
    with pytest.raises(SpecError, match="larger than 16 MiB, which no CANN definition is"):
        files.text(big)
    assert files.head(big).startswith("REG_OP(Huge)")  # a folder's scan sees what it is
