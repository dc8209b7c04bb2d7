// The op library of opsdk_examples::my_cpp_add: its schema, the npu (PrivateUse1) kernel and the
// CPU reference.
//
// Schema:
//     my_cpp_add(Tensor x, Tensor y) -> Tensor
//
// The package's __init__.py builds this file with torch's C++ extension tooling on its first
// import, caches the library (opsdk.cpp_build) and loads it. The npu kernel is what runs on
// the device: on an NPU host, where the build defines OPSDK_WITH_CANN, it runs an aclnn
// kernel through EXEC_NPU_CMD; offline it runs on opsdk's emulated npu device, where aten
// calls run on CPU memory. Its outputs are contiguous, as an aclnn kernel's are, whatever the
// inputs' layouts (aten calls keep a permuted input's layout: end them with .contiguous()).
// The CPU reference is the oracle every column is compared with:
// keep it simple and obviously right. The fake function (fake.py), the GE IR definition
// (ir.py) and the GE converter (converter.py) are Python.
//
// The library is also the Python module _my_cpp_add: the op's fast entry point, which the
// package exports as my_cpp_add().

#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <opsdk/fast_entry.h>  // in opsdk's include directory, which opsdk.cpp_build adds
#include <torch/library.h>

#ifdef OPSDK_WITH_CANN
#include <ATen/ExpandUtils.h>
#include <ATen/ops/empty.h>

// EXEC_NPU_CMD, as torch_npu ships it (op-plugin's header, on the build's include path).
#include "op_plugin/utils/op_api_common.h"
#endif

namespace {

// npu kernel of opsdk_examples::my_cpp_add.
at::Tensor my_cpp_add_npu(const at::Tensor& x, const at::Tensor& y) {
#ifdef OPSDK_WITH_CANN
  // CANN's aclnnAdd; your own op's aclnnMyCppAdd once you have installed it.
  at::Tensor out = at::empty(at::infer_size(x.sizes(), y.sizes()), x.options());
  const at::Scalar alpha = 1;
  EXEC_NPU_CMD(aclnnAdd, x, y, alpha, out);
  return out;
#else
  return at::add(x, y).contiguous();  // contiguous, as the aclnn output and fake.py are
#endif
}

// CPU reference of opsdk_examples::my_cpp_add: the semantics the npu kernel must match.
at::Tensor my_cpp_add_reference(const at::Tensor& x, const at::Tensor& y) {
  return at::add(x, y);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(opsdk_examples, m) {
  // Where torch.compile finds the op's fake function.
  m.set_python_module("my_cpp_add.fake");
  m.def("my_cpp_add(Tensor x, Tensor y) -> Tensor");
}

// PrivateUse1 is the npu device: torch_npu, or opsdk's emulation, gives it that name.
TORCH_LIBRARY_IMPL(opsdk_examples, PrivateUse1, m) {
  m.impl("my_cpp_add", &my_cpp_add_npu);
}

TORCH_LIBRARY_IMPL(opsdk_examples, CPU, m) {
  m.impl("my_cpp_add", &my_cpp_add_reference);
}

namespace {

// my_cpp_add(...) from Python: the op through the dispatcher, without torch.ops' generic
// argument matching; whatever the fast path does not take goes to the OpOverload.
PyObject* my_cpp_add_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const opsdk::Entry<decltype(my_cpp_add_reference)> entry(
      "opsdk_examples", "my_cpp_add", "", "default");
  return entry(args, nargs, kwnames);
}

PyMethodDef methods[] = {
    {"my_cpp_add",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&my_cpp_add_entry)),
     METH_FASTCALL | METH_KEYWORDS,
     "my_cpp_add($module, x, y)"
     "\n--\n\n"
     "The fastest way to call opsdk_examples::my_cpp_add from Python; same semantics as "
     "torch.ops.opsdk_examples.my_cpp_add.default."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_my_cpp_add", nullptr, -1, methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__my_cpp_add() {
  return PyModule_Create(&module);
}
