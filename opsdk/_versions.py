"""Installed versions, read from the distributions' metadata, never by importing them:
``import torch`` alone costs seconds, which ``opsdk --version`` and ``opsdk doctor``
must not pay."""

from __future__ import annotations

from importlib import metadata


def installed(distribution: str) -> str | None:
    """The installed version of ``distribution`` (``"2.13.0+cpu"``), None when absent."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def opsdk_version() -> str:
    """opsdk's own version; ``0+unknown`` when run from a checkout that was never installed."""
    return installed("opsdk") or "0+unknown"


def torch_version() -> str:
    """The installed torch's version, as ``torch.__version__`` spells it."""
    found = installed("torch")
    if found is None:  # a torch built in place has no metadata: ask the module
        import torch

        found = torch.__version__
    return found
