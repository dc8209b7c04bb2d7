"""Option profiles end to end, in one `opsdk check --options` run of one package: correct
ops pass each profile that acts on them, and a kernel bug only ``no_clone_input`` exposes
fails in layer ``capture`` while the plain npugraph_ex cells pass."""

from __future__ import annotations

import pytest
from scaffolded import edit

from opsdk.scaffold import NewRequest, into

pytestmark = pytest.mark.slow

# A realistic layout bug: an odd-layout input takes a host round trip. Eager is right,
# but a captured graph cannot sync with the host; npugraph_ex's default clones every
# input into a contiguous buffer before capture, so only clone_input=False meets it.
HOST_FALLBACK = """    if not x.is_contiguous():
        x = x.cpu().contiguous().to(y.device)  # slow path for odd layouts
    return torch.add(x, y).contiguous()"""


@pytest.fixture(scope="module")
def run(scaffolds, tmp_path_factory, opsdk_cli_module):
    pkg = scaffolds.copy(tmp_path_factory.mktemp("profiles"), "prof_add", namespace="g_prof")
    into.add(NewRequest("prof_iadd", inplace=True), pkg)
    into.add(NewRequest("layout_add"), pkg)
    edit(
        next(pkg.glob("*/layout_add/kernels.py")),
        "    return torch.add(x, y).contiguous()  # contiguous, as an aclnn output and fake.py are",
        HOST_FALLBACK,
    )
    options = "no_clone_input,capture_limit,no_input_mutations,no_input_inplace_pass"
    # profiles on the op alone (with usage contexts: test_context_matrix.py)
    args = [
        "check",
        pkg,
        "--backend",
        "ge,npugraph_ex",
        "--shapes",
        "dynamic",
        "--contexts",
        "none",
    ]
    return opsdk_cli_module(*args, "--options", options, json_report=True)


def outcome(run, op, backend, profile=None):
    (cell,) = run.cells(op=f"g_prof::{op}", column=backend, profile=profile)
    return cell["status"], cell["layer"], cell["message"]


@pytest.mark.parametrize("op", ["prof_add", "prof_iadd"])
@pytest.mark.parametrize("profile", ["no_clone_input", "capture_limit"])
def test_a_correct_op_passes_the_npugraph_ex_profiles(run, op, profile):
    assert outcome(run, op, "npugraph_ex", profile)[0] == "pass"


def test_a_correct_in_place_op_passes_without_kept_input_mutations(run):
    assert outcome(run, "prof_iadd", "ge", "no_input_mutations")[0] == "pass"


def test_a_profile_with_nothing_to_act_on_is_a_skip_with_the_reason(run):
    status, _, message = outcome(run, "prof_add", "ge", "no_input_mutations")
    assert (status, "writes none" in message) == ("skip", True)


def test_input_inplace_pass_off_is_a_skip_naming_npugraph_exs_limit(run):
    status, _, message = outcome(run, "prof_iadd", "npugraph_ex", "no_input_inplace_pass")
    assert status == "skip" and "not of the op" in message


def test_a_host_fallback_for_odd_layouts_fails_only_without_clone_input(run):
    assert outcome(run, "layout_add", "npugraph_ex")[0] == "pass"
    status, layer, message = outcome(run, "layout_add", "npugraph_ex", "no_clone_input")
    assert (status, layer) == ("fail", "capture"), message
    assert "non-contiguous" in message and "host" in message
