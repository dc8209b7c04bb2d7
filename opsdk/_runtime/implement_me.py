"""The "implement me" signal of scaffolded skeletons.

A skeleton's kernels and fake function raise :class:`ImplementMe`, so a fresh
package for a new schema fails its checks with a pointer to what to write,
instead of passing vacuously or crashing somewhere unrelated.
"""

from pathlib import Path


class ImplementMe(NotImplementedError):
    """Raised by a scaffolded function whose body the user still has to write."""

    def __init__(self, file: str, function: str, what: str):
        self.file = str(Path(file).resolve())
        self.function = function
        super().__init__(f"implement me: {function}() in {self.file}: {what}")
