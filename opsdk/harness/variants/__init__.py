"""What a column runs an op on: its input cases (from its specs or its schema), the usage
contexts that put it inside a model-like graph (run by :mod:`opsdk.harness.core.usage`),
and the TorchAir option profiles."""
