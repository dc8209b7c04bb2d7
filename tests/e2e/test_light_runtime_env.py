"""An op package runs with torch and opsdk's light runtime alone: no tools installed."""

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
# opsdk's tools (its `tools` extra): none of them may be imported to run an op.
TOOLS = ("cookiecutter", "ruff", "pytest", "_pytest", "google", "yaml", "pydot", "packaging")


def _blocker(tools) -> str:
    """Python that makes ``tools`` unimportable, as if not installed."""
    return f"""
import importlib.abc, sys

class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {tuple(tools)!r}:
            raise ModuleNotFoundError(f"{{name}} is one of opsdk's tools", name=name)
        return None

sys.meta_path.insert(0, _Blocker())
"""


SCRIPT = f"""
import sys
import torch
import my_add
import opsdk

assert opsdk.__file__.startswith({str(ROOT)!r}), opsdk.__file__

x = torch.arange(6.0).reshape(2, 3).to("npu")
out = my_add.OPS[0](x, x)
assert out.device.type == "npu", out.device
torch.testing.assert_close(out.cpu(), 2 * x.cpu())
print("ok", sorted(m for m in sys.modules if m.split(".")[0] in {TOOLS!r}))
"""


@pytest.mark.slow
def test_an_example_runs_in_a_venv_with_torch_and_opsdk_only(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    site = Path(purelib)
    # torch and its dependencies: the directory torch was installed in, behind the blocker.
    (site / "torch.pth").write_text(str(Path(torch.__file__).parents[1]) + "\n")
    # sitecustomize: the tools cannot be imported there, although the directory that
    # holds torch (and its own dependencies) also holds them here.
    (site / "sitecustomize.py").write_text(textwrap.dedent(_blocker(TOOLS)))
    # opsdk (the light runtime) and the example package, from the source tree.
    (site / "opsdk.pth").write_text(f"{ROOT}\n{ROOT / 'examples/custom_ops/my_add'}\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [python, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok []"
    assert sysconfig.get_paths()["purelib"] != purelib  # really another environment


def test_the_pytest_plugin_loads_without_the_other_tools():
    """pytest loads the plugin in every project once opsdk is installed: it must import
    with pytest alone, whether or not the project uses it."""
    others = [t for t in TOOLS if t not in ("pytest", "_pytest")]
    script = _blocker(others) + "import opsdk.pytest_plugin"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
