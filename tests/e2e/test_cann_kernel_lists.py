"""A kernel taking a tensor list (a dynamic input or output, read with AscendC's
ListTensorDesc): the launcher lays the list's block out as CANN's runtime does and each
tensor of the list is a GM buffer of its own (guard zones, named ``x[i]``). The planted
``listed`` op (y[i] = x[i] + x[i], each tensor of its own shape) and its twin reading
past the end of x[1]; ops-nn's ForeachAddList from the mirror (skipped without it),
tiled by its own TilingFunc. Each library is compiled once per module."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest
import torch
from kernel_twin import PROJECTS, TilingRun, extract

from opsdk.cann import infer, kernel, tiling
from opsdk.cann.kernel.sources import include_dirs

LISTED = PROJECTS / "listed" / "op_kernel"
NONE, PAST_SECOND = 0, 1  # listed_tiling.h's ListedDefect
SHAPES = [(5, 7), (100,), (3, 4, 33)]


@pytest.fixture(scope="module")
def listed():
    compiled = kernel.Kernel(
        kernel.build(kernel.entry_of(LISTED / "listed.cpp"), root=LISTED.parent)
    )
    yield compiled
    compiled.close()


def members(tensors: list[torch.Tensor], sizes: bool = False) -> list[kernel.Member]:
    """The tensors as a list parameter's members: their bytes, or (``sizes``) their sizes."""
    return [
        kernel.Member(
            tuple(t.shape), t.numel() * t.element_size() if sizes else t.numpy().tobytes()
        )
        for t in tensors
    ]


def tensors(data: tuple[bytes, ...], like: list[torch.Tensor]) -> list[torch.Tensor]:
    return [
        torch.frombuffer(bytearray(d), dtype=t.dtype).reshape(t.shape)
        for d, t in zip(data, like, strict=True)
    ]


def run_listed(listed, defect: int):
    """The listed op on three tensors over two cores (x[1] is block 1's alone)."""
    x = [torch.randn(shape) for shape in SHAPES]
    launch = listed.launch(
        {"x": members(x)},
        {"y": members(x, sizes=True)},
        TilingRun(struct.pack("<2I", 64, defect), 2, 0, (0,)),
        case="three tensors",
    )
    return launch, tensors(launch.outputs["y"], x), x


def test_each_tensor_of_a_list_is_read_and_written_at_its_own_shape(listed):
    launch, y, x = run_listed(listed, NONE)
    assert launch.findings == ()
    assert all(torch.equal(out, t + t) for out, t in zip(y, x, strict=True))


def test_a_read_past_the_end_of_a_list_s_second_tensor_names_it(listed):
    """x[1]'s last tile (100 floats in tiles of 64) read 16 floats long: 64 B past its end,
    beyond the 448 B Ascend allocates it (400 rounded to 32 B, and 32 B), in block 1, at
    the DataCopyPad; the outputs are still right."""
    launch, y, x = run_listed(listed, PAST_SECOND)
    line = next(
        i
        for i, text in enumerate((LISTED / "listed.cpp").read_text().splitlines(), 1)
        if "DataCopyPad(a, xGm[at]" in text
    )
    assert [(f.kind, f.block, f.file, f.line, f.case) for f in launch.findings] == [
        ("gm-out-of-bounds", 1, "op_kernel/listed.cpp", line, "three tensors")
    ]
    assert (
        launch.findings[0].what
        == "GM read of 208 B at offset 256 of x[1] (400 B): 64 B past its end"
    )
    assert all(torch.equal(out, t + t) for out, t in zip(y, x, strict=True))


def test_ops_nn_foreach_add_list_runs_on_its_own_tiling_and_matches_torch(tmp_path_factory):
    """ForeachAddList (y[i] = x1[i] + alpha * x2[i]) on three float32 tensors of their own
    shapes: its TilingFunc, linked with the foreach sources it calls, tiles the node; the
    kernel, built for that tiling's key and layout, matches torch with no finding."""
    root = extract(
        tmp_path_factory,
        "ops-nn",
        "foreach/foreach_add_list",
        "foreach/foreach_utils",
        "common/inc",
    )
    op = root / "foreach" / "foreach_add_list"
    found = tiling.find("ForeachAddList", op / "op_host")
    node = tuple(infer.Given(0, shape) for shape in SHAPES)  # DT_FLOAT
    case = tiling.Case((node, node, (infer.Given(0, (1,)),)), node, label="three tensors")
    while True:  # each pass links the source defining what the tiling misses
        library = tiling.TilingLibrary(tiling.build(found, root).library, root)
        try:
            run = library.run(found, case)
            break
        except infer.Unlinked as err:
            found = replace(found, sources=(*found.sources, err.defined_in))
        finally:
            library.close()
    assert run.ok, run.findings
    entry = kernel.entry_of(op / "op_kernel" / "foreach_add_list.cpp")
    dtypes = dict.fromkeys((*entry.params[:-2], "x1", "x2", "alpha", "y"), "float32")
    built = kernel.build(
        entry, dtypes, tiling_key=run.tiling_key, layout=run.layout, layouts=run.layouts,
        include_dirs=include_dirs(entry), root=op,
    )  # fmt: skip
    compiled = kernel.Kernel(built)
    x1, x2 = [torch.randn(s) for s in SHAPES], [torch.randn(s) for s in SHAPES]
    try:
        launch = compiled.launch(
            {"inputs_1": members(x1), "inputs_2": members(x2), "alpha": struct.pack("<f", 0.5)},
            {"outputs": members(x1, sizes=True)},
            run,
            case="three tensors",
        )
    finally:
        compiled.close()
    assert launch.findings == (), [str(f) for f in launch.findings]
    for y, a, b in zip(tensors(launch.outputs["outputs"], x1), x1, x2, strict=True):
        torch.testing.assert_close(y, a + 0.5 * b, rtol=1e-6, atol=1e-6)
