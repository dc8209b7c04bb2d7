"""What the GE reference executor reports: a bad graph, or a node that failed running."""

from opsdk.errors import OpFault


class GeGraphError(OpFault):
    """The GE graph is malformed or uses something the executor cannot run."""


class GeExecutionError(OpFault):
    """A node failed while the graph ran (the message names the node)."""
