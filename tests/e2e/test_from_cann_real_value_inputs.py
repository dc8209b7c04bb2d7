"""Real CANN definitions whose inputs CANN reads on the host, from hicann/ops-math and
hicann/ops-cv: each becomes a host argument (its OpDef's ``.ValueDepend`` or, for TopKV2's
``k``, its InferShape's ``InputsDataDependency``), and ``opsdk ir --format opdef`` writes the
definition back as it reads.

The files are read at test time from a fetched copy (``OPSDK_OPS_MATH`` / ``OPSDK_OPS_CV``:
a checkout or a bare mirror; default ``/work/.mirror/hicann+ops-math`` and ``+ops-cv``); the
test skips, saying so, without one. Nothing of them is kept: test_cann_value_inputs covers
the logic with this project's own definitions.
"""

import os
from pathlib import Path

import mirrors
import pytest

from opsdk import cann
from opsdk.cann import exports
from opsdk.scaffold.cann_torch import torch_side

_VARIABLE = {"ops-math": "OPSDK_OPS_MATH", "ops-cv": "OPSDK_OPS_CV"}
REPOS = {
    repo: os.environ.get(variable, f"/work/.mirror/hicann+{repo}")
    for repo, variable in _VARIABLE.items()
}
CASES = [
    ("ops-math", "math/cumsum", "(Tensor x, SymInt axis, bool exclusive=False,"),
    ("ops-math", "math/top_k_v2", "(Tensor x, SymInt k, bool sorted=True, int dim=-1,"),
    ("ops-math", "conversion/split_v", "(Tensor x, SymInt[] size_splits, SymInt split_dim,"),
    ("ops-math", "conversion/pad_v3", "(Tensor x, SymInt[] paddings, Tensor? constant_values,"),
    ("ops-cv", "image/resize_bilinear_v2", "(Tensor x, SymInt[] size, bool align_corners=False,"),
]


def _op_host(repo: str, folder: str, into: Path) -> Path:
    """``folder/op_host`` of the fetched ``repo``, as files under ``into``."""
    root = Path(REPOS[repo])
    git = root / "repo" if (root / "repo" / "HEAD").is_file() else root
    if (root / folder).is_dir():
        return root / folder / "op_host"
    if not (git / "HEAD").is_file():
        pytest.skip(f"hicann/{repo} is not fetched here: set {_VARIABLE[repo]} to a copy")
    return mirrors.archive(git, into, f"{folder}/op_host") / folder / "op_host"


@pytest.mark.parametrize(("repo", "folder", "schema"), CASES, ids=[c[1] for c in CASES])
def test_a_real_value_input_is_a_host_argument_and_the_export_keeps_it(
    tmp_path, repo, folder, schema
):
    op_host = _op_host(repo, folder, tmp_path)
    (source,) = op_host.glob("*_def.cpp")
    (op,) = cann.read(source)
    assert torch_side(op).schema.startswith(schema)
    (again,) = cann.read(exports.opdef_cpp(op))
    assert (again.ir, again.dtypes, again.chips) == (op.ir, op.dtypes, op.chips)


# TopKV2's reference, as a user writes it into the package's kernels.py.
TOP_K_REFERENCE = """    values, indices = torch.topk(x, k, dim, largest, sorted)
    return values, indices.to(indices_dtype)"""


@pytest.mark.slow
def test_real_top_k_v2_passes_every_cell_once_its_reference_is_written(tmp_path, opsdk_cli):
    """ops-math's TopKV2: k is a tensor input in its OpDef, read on the host by its
    InferShape (InputsDataDependency); as a host SymInt every column passes."""
    source = next(_op_host("ops-math", "math/top_k_v2", tmp_path).glob("*_def.cpp"))
    made = opsdk_cli("new", "--from-cann", source, "--namespace", "real_topk", "--out", tmp_path)
    assert made.code == 0, made.stderr
    kernels = tmp_path / "top_k_v2" / "top_k_v2" / "kernels.py"
    text = kernels.read_text()
    todo = '    raise ImplementMe(__file__, "top_k_v2_reference", "compute the op on CPU tensors")'
    assert todo in text
    kernels.write_text(text.replace(todo, TOP_K_REFERENCE))
    run = opsdk_cli("check", tmp_path / "top_k_v2", json_report=True)
    statuses = {r["status"] for r in run.report["results"]}
    assert run.code == 0 and statuses == {"pass"}, run.stdout[-2000:]
    assert len(run.report["results"]) == 15
