// The fast Python entry point of a custom op, for the op libraries `opsdk new --style cpp`
// writes (opsdk._runtime.cpp_build puts this directory on the include path).
//
// A call through torch.ops.ns.op.default matches its arguments against the schema, generically,
// and runs autograd's boxed fallback: most of a small op's host time. An Entry takes the
// arguments its kernel's C++ signature names (exact torch.Tensor, int, float, bool) straight
// from Python and calls the op through a typed handle of the c10 dispatcher, so every dispatch
// key still sees the call: autograd, dispatch modes, each device's kernel. Anything else
// (keyword arguments, defaults left out, another type, a Tensor subclass whose
// __torch_function__ must run, an active TorchFunctionMode) goes to the OpOverload unchanged,
// so the semantics are the op's.
#pragma once

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace opsdk {

namespace py = pybind11;

// One argument taken from Python as the kernel's parameter type T: from() says whether the
// fast path takes it, get() passes it on, autograd_state() whether autograd may have work.
template <class T>
struct Arg;

// A torch.Tensor or nn.Parameter (torch's own argument parser exempts the same two types from
// __torch_function__), by reference: copying an at::Tensor that has a Python object costs
// about 0.3 us, a third of a small torch.add.
template <>
struct Arg<const at::Tensor&> {
  const at::Tensor* value = nullptr;
  bool from(PyObject* obj) {
    value = THPVariable_CheckExact(obj) ? &THPVariable_Unpack(obj) : nullptr;
    return value != nullptr;
  }
  const at::Tensor& get() const {
    return *value;
  }
  bool autograd_state() const {
    return value->unsafeGetTensorImpl()->autograd_meta() != nullptr;
  }
};

// Tensor(a!): kernels write through the tensor, never rebind the handle, so the Python
// object's own one serves.
template <>
struct Arg<at::Tensor&> : Arg<const at::Tensor&> {
  at::Tensor& get() const {
    return const_cast<at::Tensor&>(*value);
  }
};

// int, float, bool: by value, only from exactly those Python types (no int as float).
template <class T>
struct Value {
  T value{};
  T get() const {
    return value;
  }
  bool autograd_state() const {
    return false;
  }
};

template <>
struct Arg<int64_t> : Value<int64_t> {
  bool from(PyObject* obj) {
    int overflow = 0;
    value = PyLong_CheckExact(obj) ? PyLong_AsLongLongAndOverflow(obj, &overflow) : 0;
    return PyLong_CheckExact(obj) && overflow == 0;
  }
};

template <>
struct Arg<double> : Value<double> {
  bool from(PyObject* obj) {
    value = PyFloat_CheckExact(obj) ? PyFloat_AS_DOUBLE(obj) : 0;
    return PyFloat_CheckExact(obj);
  }
};

template <>
struct Arg<bool> : Value<bool> {
  bool from(PyObject* obj) {
    value = obj == Py_True;
    return PyBool_Check(obj);
  }
};

inline PyObject* to_python(at::Tensor&& out) {
  return THPVariable_Wrap(std::move(out));
}

template <class... T>
PyObject* to_python(std::tuple<T...>&& outs) {
  return std::apply(
             [](auto&... out) {
               return py::make_tuple(
                   py::reinterpret_steal<py::object>(to_python(std::move(out)))...);
             },
             outs)
      .release()
      .ptr();
}

template <class Sig>
class Entry;

template <class Ret, class... Args>
class Entry<Ret(Args...)> {
 public:
  // The op as its schema declares it: namespace, name and overload name ("" for the default);
  // overload_attr is its OpOverload's attribute ("default" for ""). Nothing is looked up here:
  // a function-local static's constructor must not throw.
  Entry(const char* ns, const char* name, const char* overload, const char* overload_attr)
      : ns_(ns), name_(name), overload_(overload), overload_attr_(overload_attr) {}

  // A METH_FASTCALL | METH_KEYWORDS call.
  PyObject* operator()(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) const {
    return call(args, nargs, kwnames, std::index_sequence_for<Args...>{});
  }

 private:
  template <std::size_t... I>
  PyObject* call(PyObject* const* args,
                 Py_ssize_t nargs,
                 PyObject* kwnames,
                 std::index_sequence<I...>) const {
    HANDLE_TH_ERRORS
    std::tuple<Arg<Args>...> held;
    if (kwnames != nullptr || nargs != sizeof...(Args) || at::impl::torch_function_mode_enabled() ||
        !(std::get<I>(held).from(args[I]) && ...)) {
      return PyObject_Vectorcall(op_overload(), args, nargs, kwnames);
    }
    // Autograd has nothing to do when no tensor carries autograd state (requires_grad, a
    // forward grad, a view's history) and no mode or transform has touched the dispatch
    // state: skip its layer, as inference_mode does, and as autograd's fallback does itself
    // before it calls the kernel.
    std::optional<c10::impl::ExcludeDispatchKeyGuard> below_autograd;
    if (c10::impl::tls_local_dispatch_key_set().included_ == c10::default_included_set &&
        !(std::get<I>(held).autograd_state() || ...)) {
      below_autograd.emplace(c10::autograd_dispatch_keyset);
    }
    const auto& op = handle();
    if constexpr (std::is_void_v<Ret>) {
      {
        py::gil_scoped_release no_gil;
        op.call(std::get<I>(held).get()...);
      }
      Py_RETURN_NONE;
    } else {
      Ret out = [&] {
        py::gil_scoped_release no_gil;
        return op.call(std::get<I>(held).get()...);
      }();
      return to_python(std::move(out));
    }
    END_HANDLE_TH_ERRORS
  }

  // The dispatcher's typed handle of the op, found by the first call that needs it.
  const c10::TypedOperatorHandle<Ret(Args...)>& handle() const {
    if (!handle_) {
      const std::string qualified = std::string(ns_) + "::" + name_;
      handle_.emplace(c10::Dispatcher::singleton()
                          .findSchemaOrThrow(qualified.c_str(), overload_)
                          .template typed<Ret(Args...)>());
    }
    return *handle_;
  }

  // torch.ops.<ns>.<name>.<overload_attr>, looked up by the first call that needs it and kept
  // for the life of the process (never released: the interpreter is gone when statics die).
  PyObject* op_overload() const {
    if (op_overload_ == nullptr) {
      py::object found =
          py::module_::import("torch").attr("ops").attr(ns_).attr(name_).attr(overload_attr_);
      op_overload_ = found.release().ptr();
    }
    return op_overload_;
  }

  const char* ns_;
  const char* name_;
  const char* overload_;
  const char* overload_attr_;
  // Both found with the GIL held, which serializes the first calls.
  mutable std::optional<c10::TypedOperatorHandle<Ret(Args...)>> handle_;
  mutable PyObject* op_overload_ = nullptr;
};

}  // namespace opsdk
