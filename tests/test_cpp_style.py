"""`opsdk new --style cpp`: a C++ op library that builds once, serves the npu device
with its own kernel, passes the matrix, and whose skeleton says what to implement."""

import subprocess
import sys
import textwrap
import types

import pytest
from torch.utils import cpp_extension

from opsdk import cpp_build, cppsig, spec
from opsdk.errors import BuildError, SpecError
from opsdk.harness.failures import as_failure
from opsdk.scaffold import NewRequest, new
from opsdk.templating import cppcomment

# Fixed namespaces keep the generated sources, hence their cache keys, the same from run
# to run: a second run loads the libraries the first one built.
NAMESPACE = "opsdk_cpp_tests"

SKELETON_SCHEMA = (
    "my_op(Tensor(a!) x, Tensor? w, Tensor[] xs, Tensor?[] ow, SymInt n, SymInt[] size, "
    "int[]? dims, float? eps, Scalar s, str? mode, bool flag=False, *, int[2] k=[1,1], "
    'int new=1, str tag="a\\"b", ScalarType? dtype=None) -> (Tensor a, Tensor b)'
)


def _cpp_package(tmp_path, name="my_add", **kwargs):
    kwargs.setdefault("namespace", NAMESPACE)
    return new(NewRequest(name, style="cpp", out=tmp_path, **kwargs)).path


def _files(root):
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("inplace", [False, True])
def test_cpp_package_holds_schema_and_kernels_in_one_cpp_file(tmp_path, inplace):
    path = _cpp_package(tmp_path, inplace=inplace)
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
    init = (path / "my_add" / "__init__.py").read_text()
    assert 'load_library(Path(__file__).with_name("my_add.cpp"))' in init
    fake = (path / "my_add" / "fake.py").read_text()
    assert f'@torch.library.register_fake("{NAMESPACE}::my_add")' in fake
    assert '"*" = ["*.cpp"]' in (path / "pyproject.toml").read_text()  # added ops' too


@pytest.mark.slow
@pytest.mark.parametrize("inplace", [False, True])
def test_the_npu_host_branch_compiles(tmp_path, inplace):
    """The EXEC_NPU_CMD branch cannot run here, but it must compile: against a stand-in
    EXEC_NPU_CMD that type-checks its arguments, warnings as errors."""
    path = _cpp_package(tmp_path, inplace=inplace)
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "pytorch_npu_helper.hpp").write_text(
        textwrap.dedent(
            """\
            template <typename... Args>
            void exec_npu_cmd(const char*, const Args&...) {}
            #define EXEC_NPU_CMD(api, ...) exec_npu_cmd(#api, __VA_ARGS__)
            """
        )
    )
    includes = [f"-isystem{p}" for p in cpp_extension.include_paths()]
    done = subprocess.run(
        ["c++", "-std=c++20", "-fsyntax-only", "-Wall", "-Werror", "-DOPSDK_WITH_CANN"]
        + [f"-I{stub}", *includes, str(path / "my_add" / "my_add.cpp")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_inplace_cpp_package_passes_its_matrix(tmp_path, opsdk_cli):
    # The out-of-place one is examples/custom_ops/my_cpp_add (tests/test_examples.py).
    path = _cpp_package(tmp_path, name="my_inplace_add", inplace=True)
    run = opsdk_cli("check", path, json_report=True)
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
    tmp_path, monkeypatch, opsdk_cli
):
    path = _cpp_package(tmp_path / "pkg")
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
def test_skeleton_fails_every_cell_with_implement_me(tmp_path, opsdk_cli):
    """A schema with most argument kinds (a C++ keyword among the names): the kernels
    compile, every argument unboxes, and each cell says what to write where."""
    path = _cpp_package(tmp_path, name="my_op", schema=SKELETON_SCHEMA)
    source = (path / "my_op" / "my_op.cpp").read_text()
    assert "int64_t new_," in source
    run = opsdk_cli("check", path, "--backend", "eager,opcheck,aot_eager,ge", json_report=True)
    assert run.code == 1, run.stdout + run.stderr
    results = run.report["results"]
    assert len(results) == 12 and all(r["status"] == "fail" for r in results)
    for r in results:
        assert r["message"].startswith("implement me: my_op_"), r
        if r["layer"] == "eager":
            assert " in my_op/my_op.cpp: compute the op on " in r["message"]
        else:
            assert r["layer"] == "fake" and "my_op_fake()" in r["message"], r
    eager = [r for r in results if r["backend"] == "eager"]
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


def test_cpp_style_refuses_a_type_without_a_cpp_kernel_type(tmp_path, opsdk_cli):
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
    assert "'c' of type complex has no C++ kernel type" in run.stderr
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


def test_cache_key_follows_the_source_its_headers_and_the_recipe(tmp_path):
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
    assert cpp_build.cache_key(source, cpp_build.Recipe()) not in (key, with_header)


def test_npu_host_recipe_builds_against_torch_npu(monkeypatch, tmp_path):
    fake = types.ModuleType("torch_npu")
    fake.__file__ = str(tmp_path / "torch_npu" / "__init__.py")
    monkeypatch.setitem(sys.modules, "torch_npu", fake)
    how = cpp_build.recipe(real_npu=True)
    root = (tmp_path / "torch_npu").resolve()
    assert how.cflags == ("-DOPSDK_WITH_CANN",)
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
