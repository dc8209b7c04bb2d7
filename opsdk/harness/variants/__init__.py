"""What a column runs an op on: its input cases (from its specs or its schema), the usage
contexts that put it inside a model-like graph, and the TorchAir option profiles."""
