"""Public repositories' files read at test time from this machine's bare mirrors (never
committed): a test needing one skips where the mirror is absent, as on CI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

MIRRORS = Path("/work/.mirror")


def git_dir(name: str) -> Path:
    """The bare mirror of ``owner+name`` (e.g. ``hicann+ops-nn``), or a skip without it."""
    repo = MIRRORS / name / "repo"
    if not repo.is_dir():
        pytest.skip(f"the public mirror {name} is not on this machine (CI)")
    return repo


def archive(repo: Path, into: Path, *paths: str, commit: str = "HEAD") -> Path:
    """``paths`` of the git directory ``repo`` at ``commit``, written under ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(
        ["git", f"--git-dir={repo}", "archive", commit, "--", *paths],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar.stdout, check=True)
    return into


def extract(tmp_path_factory, name: str, *paths: str, commit: str = "HEAD") -> Path:
    """``paths`` of the mirror ``owner+name`` in a fresh temporary folder."""
    repo = git_dir(name)
    return archive(repo, tmp_path_factory.mktemp(name.split("+")[-1]), *paths, commit=commit)
