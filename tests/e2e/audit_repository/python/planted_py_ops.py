"""The planted library's Python kernels: one writes an input its schema leaves unmarked
(a finding, seen by running it on CPU), its twin declares the write ``(a!)``."""

import torch

lib = torch.library.Library("planted_py", "DEF")
lib.define("py_write(Tensor x, Tensor y) -> Tensor")
lib.define("py_write_ok(Tensor(a!) x, Tensor y) -> Tensor")


def accumulate(x, y):
    x.add_(y)
    return x * 2


def fake(x, y):
    return torch.empty_like(x)


for name in ("py_write", "py_write_ok"):
    lib.impl(name, accumulate, "PrivateUse1")
    torch.library.register_fake(f"planted_py::{name}", fake, lib=lib)
