"""The emulated npu device's pitfalls, each in a fresh interpreter: torch's own device hooks
(save/load, deepcopy, a second card...) end in a clean error or a right result, never a crash;
the split-off process tests of tests/unit/test_npu_device.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_python(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with the npu device installed."""
    prelude = "import torch\nfrom opsdk._runtime.npu import emulator\nemulator.install()\n"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def assert_ran(done: subprocess.CompletedProcess, *expected: str) -> None:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    for text in expected:
        assert text in done.stdout, done.stdout + done.stderr


@pytest.mark.slow
def test_install_refuses_a_privateuse1_named_otherwise():
    code = """
        import torch
        torch.utils.rename_privateuse1_backend("foo")
        from opsdk._runtime.npu import emulator
        try:
            emulator.install()
        except emulator.NpuDeviceError as err:
            print("refused:", err)
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert_ran(done, "refused:", "already named 'foo'")


PITFALLS = {
    "deepcopy": (
        """
        import copy
        x = torch.randn(4, 4, device="npu").t()[1:]
        y = copy.deepcopy(x)
        assert y.device.type == "npu" and y.data_ptr() != x.data_ptr()
        assert (y.stride(), y.storage_offset()) == (x.stride(), x.storage_offset())
        assert torch.equal(y.cpu(), x.cpu())
        m = copy.deepcopy(torch.nn.Linear(2, 2).to("npu"))
        print("ok", m.weight.device)
        """,
        "ok npu:0",
    ),
    "untyped_storage": (
        """
        s = torch.UntypedStorage(8, device="npu")
        t = torch.UntypedStorage([1, 2, 3], device="npu")
        c = torch.randn(3, device="npu").untyped_storage().clone()
        print("ok", s.device, s.nbytes(), t.cpu().tolist(), c.device, c.nbytes())
        """,
        "ok npu:0 8 [1, 2, 3] npu:0 12",
    ),
    "save_load": (
        """
        import io
        x = torch.randn(3, device="npu")
        buf = io.BytesIO()
        torch.save(x, buf)
        buf.seek(0)
        y = torch.load(buf)
        buf.seek(0)
        z = torch.load(buf, map_location="cpu")
        print("ok", y.device, torch.equal(y.cpu(), x.cpu()), z.device)
        """,
        "ok npu:0 True cpu",
    ),
    "second_card": (
        """
        for make in (
            lambda: torch.randn(3, device="npu:1"),
            lambda: torch.ones(2).to("npu:1"),
            lambda: torch.zeros(2, device="npu").to("npu:1"),
            lambda: torch.UntypedStorage(4, device="npu:1"),
        ):
            try:
                make()
            except emulator.NpuDeviceError as err:
                print("refused", err)
        """,
        "npu:1 does not exist",
    ),
    "set_npu_storage": (
        """
        x = torch.arange(6.0, device="npu")
        y = torch.empty(0, device="npu").set_(x.untyped_storage(), 2, (2,), (1,))
        try:
            torch.empty(0, device="npu").set_(torch.ones(2).untyped_storage())
        except RuntimeError as err:
            print("refused cpu storage:", "devices must match" in str(err))
        print("ok", y.cpu().tolist())
        """,
        "refused cpu storage: True",
    ),
    "npu_generator_and_storage_resize": (
        """
        for attempt in (
            lambda: torch.Generator(device="npu"),
            lambda: torch.randn(3, device="npu").untyped_storage().resize_(100),
        ):
            try:
                attempt()
            except NotImplementedError as err:
                print("clean error", type(err).__name__)
        """,
        "clean error NotImplementedError",
    ),
    "no_dispatch": (
        """
        from torch.utils._mode_utils import no_dispatch
        x = torch.randn(3, device="npu")
        with no_dispatch():
            y = x + 1
        print("ok", torch.equal(y.cpu(), x.cpu() + 1))
        """,
        "ok True",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PITFALLS))
def test_pitfall_is_handled_without_crashing(name):
    code, expected = PITFALLS[name]
    done = run_python(code)
    assert_ran(done, expected)
    if name == "second_card":
        assert done.stdout.count("refused") == 4, done.stdout
    if name == "set_npu_storage":
        assert "ok [2.0, 3.0]" in done.stdout
    if name == "npu_generator_and_storage_resize":
        assert done.stdout.count("clean error") == 2, done.stdout
