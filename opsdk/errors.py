"""The three kinds of error opsdk raises, each reaching the user differently.

- :class:`OpsdkError`: the user's input is wrong (a name, a schema, a path, a
  waiver). The CLI prints ``str(err)``, one line saying how to fix it, and exits
  with ``err.exit_code`` (2).
- :class:`SetupError`: a column cannot run on this machine (TorchAir cannot be
  fetched, a native layer is missing). A cell reports it as ``error`` in layer
  ``setup``: it describes the machine, never the op, and is never a pass.
- :class:`OutputError`: a report or other output file could not be written once the
  work was done (a full disk, an I/O error): one line naming the flag, exit 3, after
  the run's own output; the file that was there is left as it was.
- :class:`OpFault`: opsdk's offline stand-ins (the emulated npu device, the GE
  reference executor, the capture stand-in) found a fault in the op under test,
  as the real layer would. Cells map it to the layer it names.
"""


class OpsdkError(Exception):
    """A user-facing failure of input: the message is the whole story, no traceback."""

    exit_code = 2


class SpecError(OpsdkError):
    """An op name or schema that opsdk cannot (or must not) generate from."""


class ScaffoldError(OpsdkError):
    """`opsdk new` cannot write the package (target exists, unwritable, ...)."""


class TargetError(OpsdkError):
    """`opsdk check` cannot load what it was pointed at."""


class BuildError(OpsdkError):
    """A `--style cpp` op library does not compile, or cannot be compiled here."""


class SetupError(OpsdkError):
    """This column cannot run here; one line saying what the machine lacks and how to get it."""

    exit_code = 3


class OutputError(OpsdkError):
    """An output the input asked for, in a place that was fine when checked, that the
    machine could not take (ENOSPC, EIO, EROFS...): an environment problem, exit 3, not
    a failing cell (1) nor bad input (2)."""

    exit_code = 3


class OpFault(Exception):
    """What an offline stand-in found wrong in the op under test (not in opsdk's input)."""
