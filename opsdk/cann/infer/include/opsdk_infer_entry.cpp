// The C entry opsdk calls through ctypes: build an opsdk::Node from a text request, run
// the op's registered InferShape and InferDataType on it, write the results as text.
// Compiled once into each op's library, beside the op's own inference sources.
#include <unistd.h>

#include <cstdlib>
#include <exception>

#include "opsdk_gert.h"

namespace opsdk {
std::map<std::string, Impl> &Registry() {
  static std::map<std::string, Impl> registry;
  return registry;
}

static std::string g_log;
static std::string g_soc = "Ascend910B";
const std::string &SocVersion() { return g_soc; }

}  // namespace opsdk
// Where the entry announces each function it enters (a worker's stderr; -1: nowhere):
// if the function crashes the process, the parent still learns which one it was.
extern "C" {
int opsdk_phase_fd = -1;
}
namespace opsdk {
static void Phase(const std::string &function) {
  if (opsdk_phase_fd < 0) return;
  std::string line = "phase " + function + "\n";
  ssize_t written = write(opsdk_phase_fd, line.data(), line.size());
  (void)written;
}

void Log(char level, const char *name, const char *file, int line, const char *fmt, ...) {
  if (level == 'D' || level == 'I') return;
  char message[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  for (char *c = message; *c; ++c) if (*c == '\n') *c = ' ';
  g_log += std::string("log ") + level + " " + file + ":" + std::to_string(line) + " " + name + ": " + message + "\n";
}

static gert::Shape ReadShape(std::istream &in) {
  int64_t rank = 0;
  in >> rank;
  gert::Shape shape;
  if (rank == -2) return gert::Shape({-2});
  for (int64_t i = 0; i < rank; ++i) { int64_t d; in >> d; shape.AppendDim(d); }
  return shape;
}

static std::vector<uint8_t> FromHex(const std::string &hex) {
  std::vector<uint8_t> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return bytes;
}

// Storage the attrs' and tensors' pointers point into, alive for one request.
struct Store {
  std::vector<std::unique_ptr<int64_t>> ints;
  std::vector<std::unique_ptr<float>> floats;
  std::vector<std::unique_ptr<bool>> bools;
  std::vector<std::unique_ptr<std::string>> strs;
  std::vector<std::unique_ptr<std::vector<int64_t>>> int_lists;
  std::vector<std::unique_ptr<std::vector<float>>> float_lists;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> bool_lists, datas;
  std::vector<std::unique_ptr<gert::ContinuousVector>> vectors;
};

static const void *ReadAttr(std::istream &in, Store &store) {
  std::string kind;
  size_t n = 0;
  in >> kind;
  if (kind == "none") return nullptr;
  if (kind == "i") { int64_t v; in >> v; store.ints.emplace_back(new int64_t(v)); return store.ints.back().get(); }
  if (kind == "f") { float v; in >> v; store.floats.emplace_back(new float(v)); return store.floats.back().get(); }
  if (kind == "b") { int v; in >> v; store.bools.emplace_back(new bool(v != 0)); return store.bools.back().get(); }
  if (kind == "s") {
    std::string hex;
    in >> hex;
    auto bytes = FromHex(hex == "-" ? "" : hex);
    store.strs.emplace_back(new std::string(bytes.begin(), bytes.end()));
    return store.strs.back()->c_str();
  }
  in >> n;
  if (kind == "li") {
    auto *v = new std::vector<int64_t>(n);
    for (auto &x : *v) in >> x;
    store.int_lists.emplace_back(v);
    store.vectors.emplace_back(new gert::TypedContinuousVector<int64_t>(v->data(), n));
  } else if (kind == "lf") {
    auto *v = new std::vector<float>(n);
    for (auto &x : *v) in >> x;
    store.float_lists.emplace_back(v);
    store.vectors.emplace_back(new gert::TypedContinuousVector<float>(v->data(), n));
  } else {
    auto *v = new std::vector<uint8_t>(n);
    for (auto &x : *v) { int b; in >> b; x = static_cast<uint8_t>(b); }
    store.bool_lists.emplace_back(v);
    store.vectors.emplace_back(new gert::TypedContinuousVector<bool>(v->data(), n));  // bool is one byte
  }
  return store.vectors.back().get();
}

// The node a request states: its type, name, SoC, IR inputs' instances, attrs, outputs.
static bool ReadNode(std::istream &in, Node &node, Store &store) {
  size_t ir_inputs = 0, attrs = 0, outputs = 0;
  std::string output_counts;
  in >> node.type >> node.name >> g_soc >> ir_inputs;
  for (size_t ir = 0; ir < ir_inputs; ++ir) {
    size_t count = 0;
    in >> count;
    node.ir_inputs.emplace_back(node.input_shapes.size(), count);
    for (size_t k = 0; k < count; ++k) {
      int dt = 0, format = 0;
      std::string hex;
      in >> dt >> format;
      gert::Shape shape = ReadShape(in);
      in >> hex;
      const void *data = nullptr;
      node.input_unknown.push_back(hex == "?");
      if (hex != "-" && hex != "?") {
        store.datas.emplace_back(new std::vector<uint8_t>(FromHex(hex == "=" ? "" : hex)));
        store.datas.back()->push_back(0);  // an empty tensor still has an address
        data = store.datas.back()->data();
      }
      node.input_shapes.push_back(shape);
      node.input_tensors.emplace_back(shape, static_cast<ge::DataType>(dt), data, static_cast<ge::Format>(format));
      node.input_descs.emplace_back();
      node.input_descs.back().dt = static_cast<ge::DataType>(dt);
      node.input_descs.back().format = static_cast<ge::Format>(format);
    }
  }
  in >> attrs;
  for (size_t i = 0; i < attrs; ++i) node.attrs.pointers.push_back(ReadAttr(in, store));
  // The outputs: their count (one instance per IR output), or per IR output its instance
  // count, comma-separated (a dynamic output's instances follow each other).
  in >> output_counts;
  std::istringstream counts(output_counts);
  for (size_t count = 0; counts >> count; counts.ignore(1)) {
    bool listed = output_counts.find(',') != std::string::npos;
    for (size_t i = 0; i < (listed ? 1 : count); ++i) node.ir_outputs.emplace_back(outputs + i, listed ? count : 1);
    outputs += count;
  }
  node.output_shapes.resize(outputs);
  node.output_descs.resize(outputs);
  // GE gives an output the format of the data it comes from: the first input's here.
  for (auto &desc : node.output_descs) desc.format = node.input_descs.empty() ? ge::FORMAT_ND : node.input_descs[0].format;
  return static_cast<bool>(in);
}

static std::string Run(const Impl &impl, std::istream &in) {
  Node node;
  Store store;
  if (!ReadNode(in, node, store)) return "error bad request\n";

  std::ostringstream out;
  gert::InferShapeContext shape_context(&node);
  if (impl.infer_shape == nullptr) {
    out << "shape none\n";
  } else {
    Phase("InferShape");
    out << "shape " << impl.infer_shape(&shape_context) << "\n";
    for (const gert::Shape &s : node.output_shapes) {
      out << "out " << s.GetDimNum();
      for (size_t i = 0; i < s.GetDimNum(); ++i) out << " " << s.GetDim(i);
      out << "\n";
    }
  }
  gert::InferDataTypeContext dtype_context(&node);
  if (impl.infer_dtype != nullptr) {
    Phase("InferDataType");
    out << "dtype " << impl.infer_dtype(&dtype_context) << "\n";
    for (const auto &d : node.output_descs) out << "dt " << static_cast<int>(d.dt) << "\n";
  }
  out << "asked " << node.outputs_asked << "\n";
  return out.str();
}

// Answers ``op_type``'s request with ``run`` (a C++ exception is status 3), the log after
// its reply; the protocol of opsdk_infer.
template <typename R>
int Answer(const char *op_type, const char *request, char *reply, size_t capacity, size_t *needed, R run) {
  auto found = Registry().find(op_type);
  if (found == Registry().end()) return 1;
  g_log.clear();
  std::string text;
  int status = 0;
  try {
    std::istringstream in(request);
    text = run(found->second, in);
  } catch (const std::exception &err) {
    text = std::string("error C++ exception: ") + err.what() + "\n";
    status = 3;
  }
  text += g_log;
  *needed = text.size() + 1;
  if (*needed > capacity) return 2;
  std::memcpy(reply, text.c_str(), text.size() + 1);
  return status;
}
}  // namespace opsdk

extern "C" {
// Registered op types, one a line.
const char *opsdk_ops() {
  static std::string names;
  names.clear();
  for (const auto &entry : opsdk::Registry()) names += entry.first + "\n";
  return names.c_str();
}

// Infer ``op_type`` for ``request``; the reply (results, then the op's error and warning
// log lines) goes to ``reply``. Returns 0, 1 for an op not registered, 2 when the reply
// needs more than ``capacity`` bytes (ask again with that many), 3 for a C++ exception.
int opsdk_infer(const char *op_type, const char *request, char *reply, size_t capacity, size_t *needed) {
  return opsdk::Answer(op_type, request, reply, capacity, needed, opsdk::Run);
}
}
