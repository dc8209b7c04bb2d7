{%- if cookiecutter.style == "cpp" -%}
{%- set op = cookiecutter.op -%}
{%- set cpp = cookiecutter.cpp -%}
// The op library of {{ op.qualname }}: its schema, the npu (PrivateUse1) kernel and the
// CPU reference.
//
// Schema:
//     {{ op.schema | cppcomment }}
//
// The package's __init__.py builds this file with torch's C++ extension tooling on its first
// import, caches the library (opsdk.cpp_build) and loads it. The npu kernel is what runs on
// the device: on an NPU host, where the build defines OPSDK_WITH_CANN, it runs an aclnn
// kernel through EXEC_NPU_CMD; offline it runs on opsdk's emulated npu device, where aten
// calls run on CPU memory. The CPU reference is the oracle every backend is compared with:
// keep it simple and obviously right. The fake function (fake.py), the GE IR definition
// (ir.py) and the GE converter (converter.py) are Python.

#include <ATen/core/Tensor.h>
{%- if op.working and not op.inplace %}
#include <ATen/ops/add.h>
{%- endif %}
#include <torch/library.h>

#ifdef OPSDK_WITH_CANN
{%- if op.working and not op.inplace %}
#include <ATen/ExpandUtils.h>
#include <ATen/ops/empty.h>
{%- endif %}

// EXEC_NPU_CMD: pytorch_npu_helper.hpp from Ascend's CppExtensionInvocation sample, put next
// to this file.
#include "pytorch_npu_helper.hpp"
#endif

namespace {

// npu kernel of {{ op.qualname }}.
{{ cpp.npu_sig }} {
{%- if op.working and op.inplace %}
#ifdef OPSDK_WITH_CANN
  // CANN's aclnnInplaceAdd; your own op's aclnn{{ op.ir_name }} once you have installed it.
  const at::Scalar alpha = 1;
  EXEC_NPU_CMD(aclnnInplaceAdd, x, y, alpha);
#else
  x.add_(y);
#endif
{%- elif op.working %}
#ifdef OPSDK_WITH_CANN
  // CANN's aclnnAdd; your own op's aclnn{{ op.ir_name }} once you have installed it.
  at::Tensor out = at::empty(at::infer_size(x.sizes(), y.sizes()), x.options());
  const at::Scalar alpha = 1;
  EXEC_NPU_CMD(aclnnAdd, x, y, alpha, out);
  return out;
#else
  return at::add(x, y).contiguous();  // contiguous, as the aclnn output and fake.py are
#endif
{%- else %}
  // On an NPU host: allocate the outputs, then run the op's aclnn kernel, e.g.
  //   EXEC_NPU_CMD(aclnn{{ op.ir_name }}, {{ cpp.aclnn_args }});
  TORCH_CHECK(false, {{ cpp.npu_todo | cppstr }});
{%- endif %}
}

// CPU reference of {{ op.qualname }}: the semantics the npu kernel must match.
{{ cpp.ref_sig }} {
{%- if op.working and op.inplace %}
  x.add_(y);
{%- elif op.working %}
  return at::add(x, y);
{%- else %}
  TORCH_CHECK(false, {{ cpp.ref_todo | cppstr }});
{%- endif %}
}

}  // namespace

TORCH_LIBRARY_FRAGMENT({{ op.namespace }}, m) {
  // Where torch.compile finds the op's fake function.
  m.set_python_module({{ (cookiecutter.module ~ ".fake") | cppstr }});
  m.def({{ op.schema | cppstr }});
}

// PrivateUse1 is the npu device: torch_npu, or opsdk's emulation, gives it that name.
TORCH_LIBRARY_IMPL({{ op.namespace }}, PrivateUse1, m) {
  m.impl({{ op.impl_name | cppstr }}, &{{ op.name }}_npu);
}

TORCH_LIBRARY_IMPL({{ op.namespace }}, CPU, m) {
  m.impl({{ op.impl_name | cppstr }}, &{{ op.name }}_reference);
}
{% endif -%}
