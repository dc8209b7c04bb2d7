"""The corpus the sweeps walk: AscendC op repositories (CANN's ``hicann/ops-nn`` and
``hicann/ops-transformer``), given as checkouts or as bare mirrors (``/work/.mirror/
owner+name``, its ``repo`` git folder, or any git folder) whose files of interest are
extracted to a temporary folder. Nothing of the repositories is kept.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict
from pathlib import Path

__all__ = ["files", "sources", "write_json"]

_TEST_FOLDERS = frozenset({"test", "tests"})


def sources(path: Path, into: Path, globs: tuple[str, ...]) -> tuple[str, Path]:
    """(repository name, folder holding its files): a checkout as it is; a bare mirror
    with the files matching ``globs`` (git pathspec globs) extracted into ``into``."""
    git = path / "repo" if (path / "repo" / "HEAD").is_file() else path
    if not ((git / "HEAD").is_file() and (git / "objects").is_dir()):
        return path.name, path
    name = (path.name if git != path else path.parent.name).split("+")[-1]
    target = into / name
    target.mkdir(parents=True)
    for glob in globs:  # one a run: git refuses a glob matching nothing (no .hpp file)
        archive = subprocess.run(
            ["git", f"--git-dir={git}", "archive", "HEAD", "--", f":(glob){glob}"],
            capture_output=True,
        )
        if archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return name, target


def files(root: Path, pattern: str) -> list[Path]:
    """The files under ``root`` matching ``pattern`` (a ``Path.glob`` pattern), outside
    test folders (their copies are stubs, not the project's)."""
    return sorted(
        p for p in root.glob(pattern) if not _TEST_FOLDERS & set(p.relative_to(root).parts)
    )


def write_json(rows: list, path: Path | None) -> None:
    """A sweep's rows (dataclasses) as a JSON list in ``path`` (``--json``), if given."""
    if path:
        path.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
