"""opsdk's modules imported afresh in this process with torch unimportable: what the CLI
parser, `opsdk --help` and `opsdk report merge` load must not need torch, and a torch
imported already by other tests would hide an import of it."""

import contextlib
import importlib
import importlib.abc
import sys


class _NoTorch(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.attempts: list[str] = []  # also those whose ImportError the code caught

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "torch":
            self.attempts.append(name)
            raise ModuleNotFoundError(f"{name} imported with torch blocked", name=name)


@contextlib.contextmanager
def without_torch():
    """Inside: ``torch`` and ``opsdk`` are out of ``sys.modules`` and torch cannot be
    imported, so ``importlib.import_module("opsdk...")`` loads opsdk's modules anew; yields
    the list of the torch modules imports asked for. After: ``sys.modules`` is as it was
    (the fresh modules are dropped)."""
    saved = dict(sys.modules)
    blocker = _NoTorch()
    for name in saved:
        if name.partition(".")[0] in ("torch", "opsdk"):
            del sys.modules[name]
    sys.meta_path.insert(0, blocker)
    try:
        yield blocker.attempts
    finally:
        sys.meta_path.remove(blocker)
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)
