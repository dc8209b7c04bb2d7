"""Updatable host arguments (#31): which arguments TorchAir can update (refused in one line
otherwise, by `opsdk new --updatable` too), the schemas opsdk defines for its update table,
and the table itself, checked against torch-npu 2.13.0's (a moved one is a SetupError)."""

import dataclasses
import sys
import types
from dataclasses import dataclass

import pytest
import torch

from opsdk._runtime import updatable
from opsdk._runtime.spec import parse
from opsdk.errors import SetupError, SpecError
from opsdk.scaffold import NewRequest
from opsdk.scaffold._render import build_spec

OP = "my_upd(Tensor x, SymInt n, *, SymInt[] lens, int[] sizes, float s=1.) -> Tensor"


@pytest.mark.parametrize(
    ("params", "complaint"),
    [
        (("x",), r"has a Tensor, not a SymInt or SymInt\[\] 'x' \(a tensor is already read at "
         r"replay: nothing to update\); its host arguments are: n, lens"),
        (("sizes",), r"has a int\[\], not a SymInt or SymInt\[\] 'sizes'"),
        (("nope",), "has no argument 'nope'"),
        (("s",), "not a SymInt"),
    ],
)  # fmt: skip
def test_an_argument_that_is_not_a_host_symint_is_refused_in_one_line(params, complaint):
    with pytest.raises(SpecError, match=complaint) as refused:
        updatable.check_params(parse(OP, validate=False), params)
    assert "\n" not in str(refused.value)


def test_torchairs_rules_on_how_an_updated_argument_is_passed():
    positional_list = parse("my_upd(Tensor x, SymInt[] lens) -> Tensor", validate=False)
    with pytest.raises(SpecError, match="move 'lens' after '\\*'"):
        updatable.check_params(positional_list, ("lens",))
    keyword_int = parse("my_upd(Tensor x, *, SymInt n) -> Tensor", validate=False)
    with pytest.raises(SpecError, match="move 'n' before '\\*'"):
        updatable.check_params(keyword_int, ("n",))
    updatable.check_params(parse(OP, validate=False), ("n", "lens"))  # both fine


def test_an_op_that_does_not_return_one_new_tensor_is_refused():
    for schema in (
        "my_upd(Tensor(a!) x, *, SymInt[] lens) -> ()",
        "my_upd(Tensor x) -> (Tensor, Tensor)",
    ):
        with pytest.raises(SpecError, match="must return one new tensor"):
            updatable.check_op(parse(schema, validate=False))


def test_the_out_overload_and_workspace_getter_take_the_ops_arguments():
    op = parse(OP, validate=False)
    assert updatable.out_schema(op) == (
        "my_upd.out(Tensor x, SymInt n, *, SymInt[] lens, int[] sizes, float s=1., "
        "Tensor? workspace=None, Tensor(a!) out) -> Tensor(a!)"
    )
    assert updatable.workspace_schema(op) == (
        "my_upd_workspace(Tensor x, SymInt n, *, SymInt[] lens, int[] sizes, float s=1.) -> Tensor"
    )
    plain = parse("my_upd(Tensor x, SymInt n) -> Tensor", validate=False)
    assert updatable.out_schema(plain).startswith("my_upd.out(Tensor x, SymInt n, *, Tensor? ")


def test_opsdk_new_refuses_an_updatable_argument_before_writing_anything(tmp_path):
    request = NewRequest("my_upd", schema=OP, updatable=("x",), out=tmp_path)
    with pytest.raises(SpecError, match="--updatable x: "):
        build_spec(request)
    cpp = dataclasses.replace(request, updatable=("lens",), style="cpp")
    with pytest.raises(SpecError, match="drop --style cpp"):
        build_spec(cpp)
    assert not list(tmp_path.iterdir())


# ----- the update table ---------------------------------------------------------------

_LIB = torch.library.Library("t_updatable", "FRAGMENT")
_LIB.define("scale(Tensor x, SymInt n, *, SymInt[] lens) -> Tensor")
_LIB.define(
    "scale.out(Tensor x, SymInt n, *, SymInt[] lens, Tensor? workspace=None, "
    "Tensor(a!) out) -> Tensor(a!)"
)
_LIB.define("scale_workspace(Tensor x, SymInt n, *, SymInt[] lens) -> Tensor")
SCALE = torch.ops.t_updatable.scale


@dataclass
class StaticWorkspaceReplaceFunc:  # the fields of torch-npu 2.13.0's, written from its docs
    get_workspace: object
    out_operator: object
    workspace_keys: list
    output_keys: list
    updated_param_keys: list
    updated_param_indices: list | None = None


@pytest.fixture(autouse=True)
def _nothing_leaks():
    """A test's registration (undone through the entry register_updatable returned, also
    when a table refused it), and the stand-in table packages it imports, end with it: a
    stand-in ``npugraph_ex`` left in sys.modules would be the one later tests' TorchAir
    imports (monkeypatch restores what it deleted, not what an import added)."""
    before = set(sys.modules)
    yield
    registration = updatable.registered().get(SCALE.default)
    if registration is not None:
        registration.unregister()
    for name in set(sys.modules) - before:
        if name.split(".")[0] in ("npugraph_ex", "torchair"):
            del sys.modules[name]


def _table_module(monkeypatch, name, **attrs):
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def _register():
    return updatable.register_updatable(
        SCALE.default,
        out=SCALE.out,
        workspace=torch.ops.t_updatable.scale_workspace.default,
        params=("n", "lens"),
    )


def _tables(monkeypatch):
    """Both update tables, imported (stand-ins of torch-npu 2.13.0's)."""
    return [
        _table_module(
            monkeypatch,
            name,
            _REPLACE_FUNC_MAP={},
            StaticWorkspaceReplaceFunc=StaticWorkspaceReplaceFunc,
        )
        for name in updatable.TABLE_MODULES
    ]


def test_registration_fills_both_tables_lists_by_keyword_ints_by_index(monkeypatch):
    tables = _tables(monkeypatch)
    _register()
    for module in tables:
        entry = module._REPLACE_FUNC_MAP[SCALE.default]
        assert entry.out_operator is SCALE.out
        assert (entry.workspace_keys, entry.output_keys) == (["workspace"], ["out0"])
        assert entry.updated_param_keys == ["lens"] and entry.updated_param_indices == [1]


def test_the_entry_registration_returns_undoes_it_in_the_registry_and_the_tables(monkeypatch):
    tables = _tables(monkeypatch)
    registration = _register()
    assert updatable.registered()[SCALE.default] == registration
    registration.unregister()
    assert SCALE.default not in updatable.registered()
    assert all(SCALE.default not in module._REPLACE_FUNC_MAP for module in tables)
    later = _register()
    registration.unregister()  # undone already: the later registration stays
    assert updatable.registered()[SCALE.default] is later


def test_a_table_that_moved_is_a_one_line_setup_error_naming_the_version(monkeypatch):
    name = updatable.TABLE_MODULES[0]
    _table_module(monkeypatch, name, StaticWorkspaceReplaceFunc=StaticWorkspaceReplaceFunc)
    with pytest.raises(SetupError, match=f"^{name} .*has no _REPLACE_FUNC_MAP") as failed:
        _register()
    assert "torch-npu 2.13.0" in str(failed.value) and "\n" not in str(failed.value)

    @dataclass
    class Renamed:
        get_workspace: object
        out_operator: object

    _table_module(monkeypatch, name, _REPLACE_FUNC_MAP={}, StaticWorkspaceReplaceFunc=Renamed)
    with pytest.raises(SetupError, match="the update table moved"):
        _register()


def test_a_table_imported_later_gets_the_registered_ops(monkeypatch, tmp_path):
    # a stand-in of the table's package on sys.path, imported after the registration
    package = tmp_path / "npugraph_ex" / "_acl_concrete_graph"
    package.mkdir(parents=True)
    (tmp_path / "npugraph_ex" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "acl_graph.py").write_text(
        "from dataclasses import dataclass\n\n_REPLACE_FUNC_MAP = {}\n\n\n@dataclass\n"
        "class StaticWorkspaceReplaceFunc:\n    get_workspace: object\n    out_operator: object\n"
        "    workspace_keys: list\n    output_keys: list\n    updated_param_keys: list\n"
        "    updated_param_indices: list = None\n"
    )
    for name in ("npugraph_ex", "npugraph_ex._acl_concrete_graph", updatable.TABLE_MODULES[0]):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.delitem(sys.modules, updatable.TABLE_MODULES[1], raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    _register()
    import npugraph_ex._acl_concrete_graph.acl_graph as table

    assert table._REPLACE_FUNC_MAP[SCALE.default].updated_param_keys == ["lens"]
