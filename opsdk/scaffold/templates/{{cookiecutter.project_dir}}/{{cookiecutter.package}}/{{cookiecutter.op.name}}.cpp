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
{%- if cpp.entry %}
//
// The library is also the Python module _{{ op.name }}: the op's fast entry point, which the
// package exports as {{ op.name }}().
{%- endif %}

#include <ATen/core/Tensor.h>
{%- if op.working and not op.inplace %}
#include <ATen/ops/add.h>
{%- endif %}
#include <torch/library.h>
{%- if cpp.entry %}

#include <opsdk/fast_entry.h>  // in opsdk's include directory, which opsdk.cpp_build adds
{%- endif %}

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
{%- if cpp.entry %}

namespace {

// {{ op.name }}(...) from Python: the op through the dispatcher, without torch.ops' generic
// argument matching; whatever the fast path does not take goes to the OpOverload.
PyObject* {{ op.name }}_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const opsdk::Entry<decltype({{ op.name }}_reference)> entry(
      {{ op.namespace | cppstr }}, {{ op.name | cppstr }}, {{ cpp.entry.overload | cppstr }}, {{ op.overload_attr | cppstr }});
  return entry(args, nargs, kwnames);
}

PyMethodDef methods[] = {
    {{ "{" }}{{ op.name | cppstr }}, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&{{ op.name }}_entry)),
     METH_FASTCALL | METH_KEYWORDS, {{ cpp.entry.signature | cppstr }} "\n--\n\n" {{ cpp.entry.summary | cppstr }}},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, {{ ("_" ~ op.name) | cppstr }}, nullptr, -1, methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__{{ op.name }}() { return PyModule_Create(&module); }
{%- endif %}
{% endif -%}
