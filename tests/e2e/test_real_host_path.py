"""On an NPU host the graph columns use torch_npu's TorchAir and npugraph_ex unchanged.

No NPU here, so each test fakes only what detection sees (a working torch_npu
module, an imported TorchAir) and checks that opsdk then goes the real way: no
stand-ins, no offline option changes, TorchAir's own backend.
"""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import sys, types
    import torch

    # What an NPU host has after `import torch_npu`: the package, and TorchAir importable.
    torch_npu = types.ModuleType("torch_npu")
    torch_npu.__version__ = "2.13.0"
    torch_npu.__spec__ = None
    torch_npu.__file__ = "/opt/fake-site/torch_npu/__init__.py"
    sys.modules["torch_npu"] = torch_npu

    class CompilerConfig:
        def __init__(self):
            self.mode = None
            self.experimental_config = types.SimpleNamespace(pattern_fusion_pass=True)

    SEEN = {}
    torchair = types.ModuleType("torchair")
    torchair.CompilerConfig = CompilerConfig
    torchair.get_npu_backend = lambda compiler_config: SEEN.setdefault("config", compiler_config)
    sys.modules["torchair"] = torchair

    from opsdk._runtime import device
    from opsdk.harness.core import ge_backend
    from opsdk._runtime import locator as torchair_locator
    from opsdk.offline.torchair import import_torchair

    device._info = device.NpuInfo("real", "2.13.0", "detection faked by the test")
    info = torchair_locator.locate()
    assert info.mode == "real", info
    assert import_torchair() is torchair
    backend = ge_backend.backend()
    config = SEEN["config"]
    assert backend is config and config.mode == "max-autotune"
    assert config.experimental_config.pattern_fusion_pass is True, "offline option leaked"
    assert "torchair.core._torchair" not in sys.modules, "the GE stand-in was installed"
    assert not getattr(sys.modules["torch_npu"], "__opsdk_standin__", False)

    from opsdk import report
    env = report.environment()
    assert env["npu"] == "real" and env["ge_execution"] == "CANN", env
    assert env["torchair"].startswith("real"), env
    print("REAL PATH OK")
    """
)


def test_ge_column_takes_torchair_from_torch_npu_on_an_npu_host():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert "REAL PATH OK" in done.stdout


def test_emulation_refuses_beside_an_autoloaded_torch_npu():
    """OPSDK_EMULATE_NPU=1 where torch has autoloaded torch_npu: one line, not a half-real
    process (PrivateUse1 already torch_npu's, TorchAir reported real)."""
    script = textwrap.dedent(
        """
        import sys, types
        import torch

        sys.modules["torch_npu"] = types.ModuleType("torch_npu")  # what autoload leaves
        torch.utils.rename_privateuse1_backend("npu")
        from opsdk.device import ensure_npu
        ensure_npu()
        """
    )
    env = {**os.environ, "OPSDK_EMULATE_NPU": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "OPSDK_EMULATE_NPU=1, but torch_npu is already loaded" in last
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in last
