"""`opsdk new --style cpp`: a C++ op library that builds once, serves the npu device
with its own kernel, passes the matrix, and whose skeleton says what to implement."""

import importlib
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
import torch
from scaffolded import compile_cann_branch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from opsdk._runtime import cpp_build, spec
from opsdk.cann import cppsig
from opsdk.errors import BuildError, SpecError
from opsdk.harness.failures import as_failure
from opsdk.scaffold.templating import cppcomment

# Fixed namespaces keep the generated sources, hence their cache keys, the same from run
# to run: a second run loads the libraries the first one built.
NAMESPACE = "opsdk_cpp_tests"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_ops" / "my_cpp_add"

SKELETON_SCHEMA = (
    "my_op(Tensor(a!) x, Tensor? w, Tensor[] xs, Tensor?[] ow, SymInt n, SymInt[] size, "
    "int[]? dims, float? eps, Scalar s, str? mode, bool flag=False, *, int[2] k=[1,1], "
    'int new=1, str tag="a\\"b", ScalarType? dtype=None) -> (Tensor a, Tensor b)'
)


def _cpp_package(scaffolds, tmp_path, name="my_add", **kwargs):
    return scaffolds.copy(tmp_path, name, style="cpp", namespace=NAMESPACE, **kwargs)


def _files(root):
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def inplace_package(scaffolds):
    """An in-place cpp add; its library is built once for all the tests that use it."""
    return scaffolds.shared("my_inplace_add", style="cpp", namespace=NAMESPACE, inplace=True)


def _import(path):
    sys.path.insert(0, str(path))
    try:
        return importlib.import_module(path.name)
    finally:
        sys.path.remove(str(path))


@pytest.fixture(scope="module")
def add(inplace_package):
    """The fast entry points and OpOverloads of the out-of-place example op
    (tests/test_examples.py builds the same library) and of the in-place one, imported here."""
    out_of_place = _import(EXAMPLE)
    inplace = _import(inplace_package)
    return types.SimpleNamespace(
        entry=out_of_place.my_cpp_add,
        op=out_of_place.OPS[0],
        inplace_entry=inplace.my_inplace_add,
        inplace_op=inplace.OPS[0],
    )


@pytest.mark.parametrize("inplace", [False, True])
def test_cpp_package_holds_schema_and_kernels_in_one_cpp_file(scaffolds, tmp_path, inplace):
    path = _cpp_package(scaffolds, tmp_path, inplace=inplace)
    files = _files(path)
    assert {".clang-format", "my_add/my_add.cpp", "my_add/__init__.py", "my_add/fake.py"} <= files
    assert not {"my_add/schema.py", "my_add/kernels.py"} & files
    source = (path / "my_add" / "my_add.cpp").read_text()
    schema = spec.default_schema("my_add", inplace)
    for needle in (
        f"TORCH_LIBRARY_FRAGMENT({NAMESPACE}, m) {{",
        f'm.def("{schema}");',
        f'TORCH_LIBRARY_IMPL({NAMESPACE}, PrivateUse1, m) {{\n  m.impl("my_add", &my_add_npu);',
        f'TORCH_LIBRARY_IMPL({NAMESPACE}, CPU, m) {{\n  m.impl("my_add", &my_add_reference);',
        'm.set_python_module("my_add.fake");',
        "#ifdef OPSDK_WITH_CANN",
        "EXEC_NPU_CMD(aclnnInplaceAdd, x, y, alpha);" if inplace else "EXEC_NPU_CMD(aclnnAdd",
    ):
        assert needle in source, needle
    assert "x.add_(y);" in source if inplace else "return at::add(x, y);" in source
    assert "PyMODINIT_FUNC PyInit__my_add() {" in source  # the fast entry point's module
    init = (path / "my_add" / "__init__.py").read_text()
    assert '_library = load_module(Path(__file__).with_name("my_add.cpp"))' in init
    assert f"OP = torch.ops.{NAMESPACE}.my_add.default" in init
    assert "my_add = traceable(_library.my_add, OP)" in init
    fake = (path / "my_add" / "fake.py").read_text()
    assert "from . import OP" in fake and "@torch.library.register_fake(OP)" in fake
    assert '"*" = ["*.cpp"]' in (path / "pyproject.toml").read_text()  # added ops' too


@pytest.mark.slow
@pytest.mark.parametrize("inplace", [False, True])
def test_the_npu_host_branch_compiles(scaffolds, tmp_path, inplace):
    """The EXEC_NPU_CMD branch cannot run here, but it must compile: against the headers
    the torch-npu wheel ships (op-plugin's EXEC_NPU_CMD, ACL), with the build's defines and
    include paths (cpp_build's CANN recipe), warnings in the generated code as errors."""
    path = _cpp_package(scaffolds, tmp_path, inplace=inplace)
    done = compile_cann_branch(path / "my_add" / "my_add.cpp")
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_inplace_cpp_package_passes_its_matrix(inplace_package, opsdk_cli):
    # The out-of-place one is examples/custom_ops/my_cpp_add (tests/test_examples.py).
    run = opsdk_cli("check", inplace_package, "--contexts", "none", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    assert len(run.report["results"]) == 15
    assert all(r["status"] == "pass" for r in run.report["results"])


_USE_OP = f"""
import sys

import torch

sys.path.insert(0, sys.argv[1])
import my_add  # noqa: E402

x, y = torch.randn(8), torch.randn(8)
on_npu = torch.ops.{NAMESPACE}.my_add(x.to("npu"), y.to("npu"))
assert on_npu.device.type == "npu", on_npu.device
torch.testing.assert_close(on_npu.cpu(), x + 2 * y)  # the edited npu kernel
torch.testing.assert_close(torch.ops.{NAMESPACE}.my_add(x, y), x + y)  # the CPU reference
print("ok")
"""


@pytest.mark.slow
def test_npu_tensors_get_the_npu_kernel_and_a_second_import_does_not_rebuild(
    scaffolds, tmp_path, monkeypatch, opsdk_cli
):
    path = _cpp_package(scaffolds, tmp_path / "pkg")
    source = path / "my_add" / "my_add.cpp"
    text = source.read_text()
    npu_kernel = "return at::add(x, y).contiguous();"
    assert text.count(npu_kernel) == 1
    source.write_text(text.replace(npu_kernel, "return at::add(x, y, 2).contiguous();"))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "cache"))
    script = tmp_path / "use_op.py"
    script.write_text(_USE_OP)

    def use_op():
        done = subprocess.run(
            [sys.executable, str(script), str(path)], capture_output=True, text=True, timeout=600
        )
        assert done.stdout.strip() == "ok", done.stdout + done.stderr
        return done.stderr

    assert "opsdk: compiling my_add.cpp" in use_op()
    (built,) = (tmp_path / "cache" / "opsdk").glob("my_add_*/my_add_*.so")
    first = built.stat().st_mtime_ns
    assert "compiling" not in use_op()
    assert built.stat().st_mtime_ns == first

    run = opsdk_cli("check", path, "--backend", "eager", json_report=True)
    assert run.code == 1
    assert {r["layer"] for r in run.report["results"]} == {"eager"}


@pytest.mark.slow
def test_skeleton_fails_every_cell_with_implement_me(scaffolds, tmp_path, opsdk_cli):
    """A schema with most argument kinds (a C++ keyword among the names): the kernels
    compile, every argument unboxes, and each cell says what to write where."""
    path = _cpp_package(scaffolds, tmp_path, name="my_op", schema=SKELETON_SCHEMA)
    source = (path / "my_op" / "my_op.cpp").read_text()
    assert "int64_t new_," in source
    run = opsdk_cli(
        "check",
        path,
        "--backend",
        "eager,opcheck,aot_eager,ge",
        "--contexts",
        "none",
        json_report=True,
    )
    assert run.code == 1, run.stdout + run.stderr
    results = run.report["results"]
    assert len(results) == 12 and all(r["status"] == "fail" for r in results)
    for r in results:
        assert r["message"].startswith("implement me: my_op_"), r
        if r["layer"] == "eager":
            assert " in my_op/my_op.cpp: compute the op on " in r["message"]
        else:
            assert r["layer"] == "fake" and "my_op_fake()" in r["message"], r
    eager = [r for r in results if r["column"] == "eager"]
    assert all(r["message"].startswith("implement me: my_op_reference()") for r in eager)


def test_a_cpp_implement_me_is_an_eager_finding():
    """TORCH_CHECK's message reaches Python as a RuntimeError, maybe wrapped."""
    try:
        try:
            raise RuntimeError("implement me: f_npu() in f/f.cpp: compute it\nException raised")
        except RuntimeError as inner:
            raise ValueError("while tracing") from inner
    except ValueError as err:
        failure = as_failure(err, default_layer="aot")
    assert (failure.layer, str(failure)) == (
        "eager",
        "implement me: f_npu() in f/f.cpp: compute it",
    )


def test_new_refuses_an_argument_type_no_ge_graph_can_take(tmp_path, opsdk_cli):
    run = opsdk_cli(
        "new",
        "my_op",
        "--style",
        "cpp",
        "--schema",
        "my_op(Tensor x, complex c) -> Tensor",
        "--out",
        tmp_path,
    )
    assert run.code == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "'c' has type 'complex', which no GE graph can take" in run.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("schema", "signature"),
    [
        (
            "f(Tensor(a!) x, Tensor? w, Tensor[] xs, int[2] k, SymInt[]? s, float? e) -> ()",
            "void g(at::Tensor& x, const std::optional<at::Tensor>& w, at::TensorList xs, "
            "at::IntArrayRef k, at::OptionalSymIntArrayRef s, std::optional<double> e)",
        ),
        (
            "f(Tensor x, Scalar a, bool[3] m, str s, ScalarType? t) -> (Tensor, Tensor[])",
            "std::tuple<at::Tensor, std::vector<at::Tensor>> g(const at::Tensor& x, "
            "const at::Scalar& a, std::array<bool, 3> m, c10::string_view s, "
            "std::optional<at::ScalarType> t)",
        ),
    ],
)
def test_kernel_signatures_use_the_types_torch_unboxes(schema, signature):
    assert cppsig.signature("g", spec.parse(schema)) == signature


def test_unsupported_return_is_refused():
    with pytest.raises(SpecError, match="return of type complex"):
        cppsig.return_type(spec.parse("f(Tensor x) -> complex"))


def test_cache_key_follows_the_source_its_headers_and_the_recipe(tmp_path, monkeypatch):
    opsdk_include = tmp_path / "include"
    (opsdk_include / "opsdk").mkdir(parents=True)
    (opsdk_include / "opsdk" / "fast_entry.h").write_text("// v1\n")
    monkeypatch.setattr(cpp_build, "INCLUDE", opsdk_include)
    source = tmp_path / "op.cpp"
    source.write_text("// v1\n")
    key = cpp_build.cache_key(source, cpp_build.Recipe())
    (tmp_path / "notes.txt").write_text("not part of the build")
    assert cpp_build.cache_key(source, cpp_build.Recipe()) == key
    assert cpp_build.cache_key(source, cpp_build.Recipe(cflags=("-DX",))) != key
    (tmp_path / "helper.hpp").write_text("#define H 1\n")
    with_header = cpp_build.cache_key(source, cpp_build.Recipe())
    assert with_header != key
    source.write_text("// v2\n")
    edited = cpp_build.cache_key(source, cpp_build.Recipe())
    assert edited not in (key, with_header)
    (opsdk_include / "opsdk" / "fast_entry.h").write_text("// v2\n")  # opsdk's header
    assert cpp_build.cache_key(source, cpp_build.Recipe()) not in (key, with_header, edited)


def test_npu_host_recipe_builds_against_torch_npu(monkeypatch, tmp_path):
    fake = types.ModuleType("torch_npu")
    fake.__file__ = str(tmp_path / "torch_npu" / "__init__.py")
    monkeypatch.setitem(sys.modules, "torch_npu", fake)
    how = cpp_build.recipe(real_npu=True)
    root = (tmp_path / "torch_npu").resolve()
    assert how.cflags == ("-O2", "-DOPSDK_WITH_CANN", "-DCURRENT_VERSION=V2R13")
    assert str(root / "include") in how.include_paths
    assert how.ldflags == (f"-L{root / 'lib'}", "-ltorch_npu")
    assert cpp_build.recipe(real_npu=False) == cpp_build.Recipe()


def test_a_compile_error_names_file_and_line(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "cache"))
    source = tmp_path / "broken.cpp"
    source.write_text("int f() { return undeclared_name; }\n")
    with pytest.raises(BuildError) as caught:
        cpp_build.load_library(source)
    message = str(caught.value)
    assert f"{source}:1:" in message and "undeclared_name" in message
    (log,) = (tmp_path / "cache" / "opsdk").glob("broken_*/build.log")
    assert str(log) in message and "undeclared_name" in log.read_text()
    assert not list(log.parent.glob(cpp_build.STAMP)), "a failed build must not count as built"


def test_a_schema_comment_line_never_ends_with_a_backslash():
    """A '//' line ending in '\\' swallows the next line of code into the comment."""
    schema = "a" * 85 + "\\ " + "b" * 10
    assert textwrap.wrap(schema, width=90)[0].endswith("\\")  # where plain wrapping breaks
    comment = cppcomment(schema)
    assert not [line for line in comment.splitlines() if line.endswith("\\")], comment


# The fast entry point: the op with the OpOverload's semantics, for less host time.


@pytest.mark.parametrize(
    ("schema", "fast"),
    [
        ("f(Tensor x, Tensor y) -> Tensor", True),
        ("f(Tensor(a!) x, int n, float s, bool b=False) -> (Tensor, Tensor)", True),
        ("f(Tensor(a!) x, Tensor y) -> ()", True),
        ("f(Tensor x, SymInt n) -> Tensor", False),
        ("f(Tensor? x) -> Tensor", False),
        ("f(Tensor x, *, float s) -> Tensor", False),  # keyword-only: never positional
        ("f(Tensor x) -> Tensor[]", False),
    ],
)
def test_fast_entry_only_for_arguments_it_takes(schema, fast):
    assert cppsig.has_fast_entry(spec.parse(schema)) is fast


@pytest.mark.parametrize("device", ["cpu", "npu"])
def test_entry_equals_the_op_overload(add, device):
    x, y = torch.randn(4, 3, device=device), torch.randn(3, device=device)
    out = add.entry(x, y)
    assert out.device.type == device
    torch.testing.assert_close(out, add.op(x, y), rtol=0, atol=0)
    by_entry, by_op = x.clone(), x.clone()
    assert add.inplace_entry(by_entry, y) is None
    add.inplace_op(by_op, y)
    torch.testing.assert_close(by_entry, by_op, rtol=0, atol=0)
    assert by_entry._version == by_op._version


def test_entry_hands_what_it_does_not_take_to_the_op_overload(add):
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(add.entry(x, y=y), x + y)  # a keyword call
    for call in (add.entry, add.op):  # the same errors, from the OpOverload
        with pytest.raises(RuntimeError, match="missing value for argument 'y'"):
            call(x)
        with pytest.raises(RuntimeError, match="type 'Tensor' for argument 'y' but .* 'list'"):
            call(x, [1.0, 2.0, 3.0])


class _Logged(torch.Tensor):
    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})


def test_a_tensor_subclass_gets_its_torch_function(add):
    _Logged.calls.clear()
    out = add.entry(torch.ones(2).as_subclass(_Logged), torch.ones(2))
    assert add.op in _Logged.calls and type(out) is _Logged


class _Recording(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append(func)
        return func(*args, **(kwargs or {}))


class _RecordingDispatch(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append(func)
        return func(*args, **(kwargs or {}))


def test_modes_see_the_op(add):
    """A TorchFunctionMode makes the entry call the OpOverload; a TorchDispatchMode sees the
    op in the dispatcher, where the fast path calls it."""
    x, y = torch.randn(2), torch.randn(2)
    with _Recording() as mode:
        add.entry(x, y)
    assert mode.calls == [add.op]
    with _RecordingDispatch() as mode:
        add.entry(x, y)
        add.inplace_entry(x, y)
    assert mode.calls == [add.op, add.inplace_op]


def test_autograd_still_sees_tensors_that_require_grad(add):
    x = torch.randn(2, requires_grad=True)
    by_entry, by_op = add.entry(x, x), add.op(x, x)
    assert by_entry.requires_grad == by_op.requires_grad
    assert type(by_entry.grad_fn) is type(by_op.grad_fn)


def test_entry_under_fake_tensor_mode(add):
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode() as mode:
        x, y = mode.from_tensor(torch.randn(4, 3)), mode.from_tensor(torch.randn(3))
        out = add.entry(x, y)
        assert add.inplace_entry(x, y) is None
    assert isinstance(out, FakeTensor) and out.shape == (4, 3)
    torch.library.opcheck(add.op, (torch.randn(4, 3), torch.randn(3)))


def test_torch_compile_traces_the_entry_as_the_op(add):
    from torch._dynamo.testing import CompileCounterWithBackend

    backend = CompileCounterWithBackend("aot_eager")

    @torch.compile(backend=backend, fullgraph=True)
    def f(x, y):
        out = add.entry(x, y)
        add.inplace_entry(x, out)
        return out * 2

    x, y = torch.randn(3), torch.randn(3)
    expected_x, expected = x + (x + y), (x + y) * 2
    torch.testing.assert_close(f(x, y), expected)
    torch.testing.assert_close(x, expected_x)
    targets = {node.target for node in backend.graphs[0].graph.nodes}
    assert {add.op, add.inplace_op} <= targets, targets


_IMPORT_THEN_COMPILE = """
import sys

import torch

sys.path.insert(0, sys.argv[1])
import my_cpp_add  # noqa: E402

assert "torch._dynamo" not in sys.modules, "importing the op package imported Dynamo"
f = torch.compile(lambda x: my_cpp_add.my_cpp_add(x, x), backend="aot_eager", fullgraph=True)
torch.testing.assert_close(f(torch.ones(2)), torch.full((2,), 2.0))
print("ok")
"""


@pytest.mark.slow
def test_registering_the_entry_for_compile_waits_for_dynamo(add, tmp_path):
    script = tmp_path / "import_then_compile.py"
    script.write_text(_IMPORT_THEN_COMPILE)
    done = subprocess.run(
        [sys.executable, str(script), str(EXAMPLE)], capture_output=True, text=True, timeout=600
    )
    assert done.stdout.strip() == "ok", done.stdout + done.stderr
