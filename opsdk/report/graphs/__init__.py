"""Pictures of the graphs behind a ``ge`` or ``npugraph_ex`` cell, for people triaging it.

``fx`` draws the post-AOT FX graph with torch's own ``FxGraphDrawer``, ``ge`` the GE
graph TorchAir built (its ``GraphDef``) with pydot, both with the op's node
highlighted and the nodes a failed check concerns marked; ``render`` runs Graphviz's
``dot`` on them; ``pictures`` draws a run's cells into files and finds them again
for the HTML and Markdown reports and ``opsdk graph``.
"""
