{%- set op = cookiecutter.op -%}
"""Kernels of the op: the npu (PrivateUse1) kernel and the CPU reference.

Schema:
    {{ op.schema | docwrap(8) }}

The npu kernel is what runs on the device: on an NPU host, this is where the
aclnn call goes; offline it runs on opsdk's emulated npu device. The CPU
reference is the oracle every backend is compared with: keep it simple and
obviously right.
"""

import torch
{%- if not op.working %}

from opsdk import ImplementMe
{%- endif %}


{{ op.npu_def }}
    """The op on npu tensors."""
{%- if op.working and op.inplace %}
    x.add_(y)
{%- elif op.working %}
    return torch.add(x, y).contiguous()  # contiguous, as an aclnn output and fake.py are
{%- else %}
    raise ImplementMe(__file__, "{{ op.name }}_npu", "compute the op on npu tensors")
{%- endif %}


{{ op.ref_def }}
    """The op on CPU tensors: the semantics the npu kernel must match."""
{%- if op.working and op.inplace %}
    x.add_(y)
{%- elif op.working %}
    return torch.add(x, y)
{%- else %}
    raise ImplementMe(__file__, "{{ op.name }}_reference", "compute the op on CPU tensors")
{%- endif %}
