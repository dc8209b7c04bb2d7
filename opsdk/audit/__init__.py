"""``opsdk audit``: check an existing op library's schemas, Meta functions and TorchAir
converters together, offline, without a kernel (the first library: torch_npu's ops
TorchAir converts). The library is read by :mod:`opsdk.audit.library`, its cases made
by :mod:`opsdk.audit.cases` (and :mod:`opsdk.audit.search` when the Meta function
refuses them), each check is a module of :mod:`opsdk.audit.checks`, and
:mod:`opsdk.audit.matrix` turns them into the results ``opsdk check``'s reports show."""
