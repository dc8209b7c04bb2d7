"""What the printing commands import, in a fresh interpreter: not torch (a unit test cannot
tell, its process has torch loaded)."""

import json
import os
import subprocess
import sys

# Each argv is run in one fresh interpreter, in order; after each, whether torch is loaded.
_PROBE = """
import json, sys
from opsdk.cli import main
loaded = []
for argv in json.loads(sys.argv[1]):
    try:
        main(argv)
    except SystemExit:
        pass
    loaded.append("torch" in sys.modules)
print(json.dumps(loaded))
"""


def test_help_version_and_doctor_do_not_import_torch(tmp_path):
    """`import torch` costs 2-8 s: the commands that only print must not pay it (doctor:
    where no torch_npu is installed, whose import it would have to try)."""
    argvs = [["--help"], ["--version"], ["check", "--help"], ["doctor"]]
    env = dict(os.environ, OPSDK_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("OPSDK_EMULATE_NPU", None)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argvs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert [" ".join(a) for a, hit in zip(argvs, loaded, strict=True) if hit] == []
    assert "torch        2.13" in done.stdout and "npu          emulated" in done.stdout
