"""Installed versions, read from the distributions' metadata, never by importing them:
``import torch`` alone costs seconds, which ``opsdk --version`` and ``opsdk doctor``
must not pay."""

from __future__ import annotations

from pathlib import Path


def installed(distribution: str) -> str | None:
    """The installed version of ``distribution`` (``"2.13.0+cpu"``), None when absent
    (importlib.metadata is imported here: it costs every command tens of milliseconds,
    and the CLI imports this module for :func:`missing_tools`)."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def opsdk_version() -> str:
    """opsdk's version: the installed distribution's, else (a checkout on ``sys.path``
    that was never installed) its ``pyproject.toml``'s, where the version is set."""
    found = installed("opsdk")
    if found is None:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10: opsdk's tools bring tomli
            import tomli as tomllib

        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        found = tomllib.loads(pyproject.read_text())["project"]["version"]
    return found


def torch_version() -> str:
    """The installed torch's version, as ``torch.__version__`` spells it."""
    found = installed("torch")
    if found is None:  # a torch built in place has no metadata: ask the module
        import torch

        found = torch.__version__
    return found


# What opsdk's commands import beyond the op runtime: its `tools` extra (pyproject.toml).
TOOLS = ("cookiecutter", "jinja2", "ruff", "google.protobuf", "packaging", "numpy", "yaml", "pydot")


def missing_tools() -> list[str]:
    """The modules of the `tools` extra not installed, found without importing them."""
    import importlib.util

    def found(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # its parent package (google) is missing
            return False

    return [name for name in TOOLS if not found(name)]
