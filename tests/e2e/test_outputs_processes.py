"""Report outputs that need a process: a read-only folder (a tmpfs mounted read-only) and
/dev/stdout written through the stream (checked in a child process)."""

import os
import subprocess
import sys

import pytest
from refused_outputs import outputs_of, refused


@pytest.fixture
def read_only(tmp_path):
    """A folder nothing can be written in: a read-only tmpfs as root, else mode 0o555."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mount = ["mount", "-t", "tmpfs", "-o", "ro,size=16k", "tmpfs", str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("root without the right to mount: no read-only folder to test with")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize(
    ("flag", "relative"), [("--json", "r.json"), ("--markdown", "sub/r.md"), ("--dump", "")]
)
def test_a_read_only_folder_is_refused(read_only, flag, relative):
    path = read_only / relative
    message = refused(*outputs_of(flag, path))
    assert message.startswith(f"{flag} {path}: cannot "), message
    assert "(Read-only file system)" in message or "(Permission denied)" in message, message


def test_dev_stdout_is_written_through_the_stream_not_replaced(tmp_path):
    """`--json /dev/stdout > log`: written through, as any program writes it; renamed over,
    the log would be a new file and the output after the report would go to the old one."""
    code = "from opsdk import _outputs\n"
    code += "_outputs.write('--json', '/dev/stdout', '{}\\n')\nprint('after')"
    log = tmp_path / "log"
    with log.open("w") as out:
        inode = os.fstat(out.fileno()).st_ino
        subprocess.run([sys.executable, "-c", code], stdout=out, check=True, timeout=60)
    assert log.stat().st_ino == inode and "after" in log.read_text()
