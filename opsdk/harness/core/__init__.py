"""What the columns are built from, below them: the op's kernel call held to its CPU
reference (:mod:`.kernel`), the comparisons of outputs, writes, layouts and gradients,
the host values a call reads, the GE node as its C++ inference sees it, how a compiled
column compiles and runs an op (alone or inside a usage context), the GE and npugraph_ex
backends (:mod:`.ge_backend`, :mod:`.npugraph_backend`), the trace the compiled columns
of a run share and the run's scope they read. A column module imports these,
never another column's module."""
