"""Host arguments under npugraph_ex (#31), end to end through `opsdk check`: an op whose
kernel reads a SymInt[] on the host recaptures per value (a warning while the list is a
plain value, a failure in ``capture`` once specs declare it varying), GE stays right for
every value; and the twice context passes torch_npu's in-place pair (`opsdk new --pair`)."""

import re

import pytest
from scaffolded import edit, implemented

SCHEMA = "my_lens(Tensor x, *, SymInt[] lens) -> Tensor"  # keyword: TorchAir can update it
KERNEL = "return (x * float(sum(lens))).contiguous()"  # the host reads lens: a tiling
SPECS = """
from opsdk.inputs import F32, OneOf, Support, declare_supported

from .schema import OP

declare_supported(
    OP, [Support(F32(2, 3), lens=OneOf([3, 5], [4, 6]))], non_contiguous=False
)
"""


def _lens_package(scaffolds, out, declared: bool, updatable=(), schema=SCHEMA, kernel=KERNEL):
    options = {"updatable": updatable} if updatable else {}
    pkg = implemented(scaffolds, out, "my_lens", schema, kernel, **options)
    if declared:
        (pkg / "my_lens" / "specs.py").write_text(SPECS)
        edit(pkg / "my_lens" / "__init__.py", "import fake, ir", "import fake, ir, specs")
    return pkg


def _check(opsdk_cli, pkg, *more):
    run = opsdk_cli(
        "check", pkg, "--backend", "ge,npugraph_ex", "--shapes", "dynamic,mark_static", *more,
        json_report=True,
    )  # fmt: skip
    return {f"{r['column']}-{r['shapes']}": r for r in run.report["results"]}


def test_a_plain_host_list_that_recaptures_warns_on_the_passing_cell(
    scaffolds, tmp_path, opsdk_cli
):
    cells = _check(opsdk_cli, _lens_package(scaffolds, tmp_path, declared=False))
    assert {k: c["status"] for k, c in cells.items()} == dict.fromkeys(cells, "pass")
    [warning] = [w for w in cells["npugraph_ex-mark_static"]["warnings"] if "recaptured" in w]
    assert warning.startswith(
        "RecaptureWarning: recaptured per value: 3 captures for 3 values of host argument(s) "
        "lens at 1 shape(s) (values taken: lens: [2], [3], [4])"
    )
    assert "--updatable lens" in warning and "Fixed(...)" in warning
    assert not cells["ge-mark_static"]["warnings"]
    assert cells["npugraph_ex-mark_static"]["notes"] == [
        "host values taken: call 0 lens=[2]; call 1 lens=[2]; call 2 lens=[3]; call 3 lens=[4] "
        "(3 graph(s) captured for 1 shape(s))"
    ]


def test_a_declared_varying_host_list_that_recaptures_fails_in_capture(
    scaffolds, tmp_path, opsdk_cli
):
    cells = _check(opsdk_cli, _lens_package(scaffolds, tmp_path, declared=True))
    assert cells["ge-dynamic"]["status"] == cells["ge-mark_static"]["status"] == "pass"
    for shapes, counted in (("mark_static", 2), ("dynamic", 4)):
        cell = cells[f"npugraph_ex-{shapes}"]
        assert (cell["status"], cell["layer"]) == ("fail", "capture"), cell
        assert (
            f"recaptured per value: {counted} captures for {counted} values of host argument(s) "
            "lens" in cell["message"]
        )
        assert "values taken: lens: [3, 5], [4, 6]" in cell["message"]


# A twice bug of the same pair: the kernel keeps what it first read per buffer (a tiling
# cache keyed on the address), so a second call on the same tensor adds to stale values.
KEEPS_FIRST = (
    "first = _FIRST.setdefault(x.data_ptr(), x.clone())\n"
    "    return x.copy_(first + y)\n\n\n_FIRST = {}\n"
)


@pytest.mark.parametrize("planted", [False, True], ids=["correct", "keeps_first_read"])
def test_the_twice_context_passes_torch_npus_in_place_pair_and_catches_its_twice_bug(
    scaffolds, tmp_path, opsdk_cli, planted
):
    """Under torch.compile the first of two returned aliases of one input comes back as a
    copy (torch's functionalization); twice compares the written input after both calls
    instead, so the correct pair passes and a kernel keeping state between calls fails."""
    pkg = scaffolds.copy(tmp_path, "my_padd", pair=True)
    if planted:
        kernels = pkg / "my_padd" / "kernels.py"
        text = kernels.read_text()
        npu = "def my_padd__npu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:"
        head, _, tail = text.partition(npu)
        body, _, rest = tail.partition("    return x.add_(y)\n")
        kernels.write_text(head + npu + body + "    " + KEEPS_FIRST + rest)
    run = opsdk_cli(
        "check", pkg, "--backend", "aot_eager,ge", "--shapes", "static", "--contexts", "twice",
        json_report=True,
    )  # fmt: skip
    twice = run.cells(op="custom::my_padd_", context="twice")
    assert len(twice) == 2, twice
    if not planted:
        assert {c["status"] for c in twice} == {"pass"}, twice
        return
    for cell in twice:
        assert (cell["status"], cell["layer"]) == ("fail", "eager"), cell
        [alone] = run.cells(op="custom::my_padd_", context=None, column=cell["column"])
        # Keyed on addresses, the kernel fails alone too when a freed tensor's address comes
        # back in the process (the allocator's choice): the diagnosis then says that instead.
        said = "only this context shows" if alone["status"] == "pass" else "the op alone fails"
        assert said in cell["message"], (alone["status"], cell["message"])
        assert "values differ" in cell["message"], cell["message"]


def _npugraph_ex(cells):
    return {k: (c["status"], c["layer"]) for k, c in cells.items() if k.startswith("npugraph")}


def test_the_same_op_made_updatable_captures_once_per_shape_and_replays_right(
    scaffolds, tmp_path, opsdk_cli
):
    cells = _check(opsdk_cli, _lens_package(scaffolds, tmp_path, True, updatable=("lens",)))
    assert {k: c["status"] for k, c in cells.items()} == dict.fromkeys(cells, "pass"), cells
    assert not any("recaptured" in w for c in cells.values() for w in c["warnings"])
    # each passing cell says which values its calls took (npugraph_ex: and what it captured)
    case = "case F32(2, 3), lens=OneOf([3, 5], [4, 6]): host values taken: "
    assert cells["ge-mark_static"]["notes"] == [
        case + "call 0 lens=[3, 5]; call 1 lens=[4, 6]; call 2 lens=[3, 5]"
    ]
    assert cells["npugraph_ex-mark_static"]["notes"] == [
        case + "call 0 lens=[3, 5]; call 1 lens=[3, 5]; call 2 lens=[4, 6]; call 3 lens=[3, 5] "
        "(1 graph(s) captured for 1 shape(s))"
    ]
    assert cells["npugraph_ex-dynamic"]["notes"][0].endswith(
        "call 5 lens=[3, 5] (2 graph(s) captured for 2 shape(s))"
    )


def test_an_update_registration_that_leaves_out_a_parameter_recaptures_and_hangs_a_replay(
    scaffolds, tmp_path, opsdk_cli
):
    # offs, read by the op but not updated, recaptures per value; npugraph_ex then updates
    # only the latest capture, so the first one's replay waits forever (a device hang)
    schema = "my_lens(Tensor x, *, SymInt[] lens, SymInt[] offs) -> Tensor"
    kernel = "return (x * float(sum(lens)) + float(sum(offs))).contiguous()"
    pkg = _lens_package(scaffolds, tmp_path, True, ("lens",), schema, kernel)
    edit(
        pkg / "my_lens" / "specs.py",
        "lens=OneOf([3, 5], [4, 6])",
        "lens=[3], offs=OneOf([1], [2])",
    )
    cell = _check(opsdk_cli, pkg)["npugraph_ex-mark_static"]
    assert (cell["status"], cell["layer"]) == ("fail", "replay"), cell
    assert (
        "call 3: a replay of a captured graph waits for a parameter update that never comes"
        in (cell["message"])
    )
    assert "2 captures for 2 values of host argument(s) offs at 1 shape(s)" in cell["message"]
    assert "--updatable offs" in cell["message"]


def test_a_kernel_that_keeps_its_captured_tiling_replays_stale(scaffolds, tmp_path, opsdk_cli):
    pkg = _lens_package(scaffolds, tmp_path, True, updatable=("lens",))
    # the .out kernel computes its tiling once per output buffer: the update changes nothing
    edit(
        pkg / "my_lens" / "updatable.py",
        "return out.copy_(OP(x, lens=lens))",
        "tiling = _TILING.setdefault(out.data_ptr(), list(lens))\n"
        "    return out.copy_(OP(x, lens=tiling))\n\n\n_TILING = {}",
    )
    run = opsdk_cli(
        "check", pkg, "--backend", "npugraph_ex", "--shapes", "mark_static", json_report=True
    )
    [cell] = run.report["results"]
    assert (cell["status"], cell["layer"]) == ("fail", "stale-input"), cell
    assert (
        "stale replay: the result is the op's on the captured value of host argument(s) lens"
        in cell["message"]
    )
    assert "lens captured [3, 5], new [4, 6]" in cell["message"]


POSITIONAL = "my_pos(Tensor x, SymInt[] lens) -> Tensor"


def test_an_attached_op_made_updatable_passes_and_a_positional_list_is_refused(tmp_path, opsdk_cli):
    refused = opsdk_cli(
        "new", "--attach", "ext_upd::my_pos", "--schema", POSITIONAL, "--updatable", "lens",
        "--out", tmp_path,
    )  # fmt: skip
    assert refused.code == 2 and not list(tmp_path.iterdir())
    assert (
        refused.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "--updatable lens: TorchAir updates a SymInt[] passed by keyword only: move 'lens' "
            "after '*' in the schema of ext_upd::my_pos"
        )
    )
    made = opsdk_cli(
        "new", "--attach", "ext_upd::my_att", "--schema", SCHEMA.replace("my_lens", "my_att"),
        "--updatable", "lens", "--out", tmp_path,
    )  # fmt: skip
    assert made.code == 0, made.stderr
    pkg = tmp_path / "my_att"
    kernels, fake = pkg / "my_att" / "kernels.py", pkg / "my_att" / "fake.py"
    kernels.write_text(
        re.sub(
            r"raise ImplementMe\(\s*__file__,[^)]*\)",
            "return x * float(sum(lens))",
            kernels.read_text(),
        )
    )
    fake.write_text(
        re.sub(
            r"raise ImplementMe\(\s*__file__,[^)]*\)",
            "return x.new_empty(x.shape)",
            fake.read_text(),
        )
    )
    cells = _check(opsdk_cli, pkg)
    assert {k: c["status"] for k, c in cells.items()} == dict.fromkeys(cells, "pass"), cells
    assert not any("recaptured" in w for c in cells.values() for w in c["warnings"])
