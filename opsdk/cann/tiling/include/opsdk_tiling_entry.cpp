// The C entry opsdk calls through ctypes to run an op's TilingFunc: the node as the
// inference entry reads it (shared: this unit includes it), then the tiling's own words
// (the outputs' shapes and dtypes, the chip, the tiling data's capacity), the op's
// TilingParse on a fresh compile info and its TilingFunc; the reply is what the tiling set.
#include "opsdk_infer_entry.cpp"
#include "ascendc/host_api/tiling/template_argument.h"
#include "register/tilingdata_base.h"

#include <set>

namespace opsdk {
ChipInfo &TheChip() {
  static ChipInfo chip;
  return chip;
}
std::vector<std::pair<std::string, uint64_t>> &TplLast() {
  static std::vector<std::pair<std::string, uint64_t>> last;
  return last;
}
std::map<std::string, TilingDefFactory> &TilingClasses() {
  static std::map<std::string, TilingDefFactory> classes;
  return classes;
}

static std::string Hex(const uint8_t *bytes, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) (out += digits[bytes[i] >> 4]) += digits[bytes[i] & 15];
  return out.empty() ? "-" : out;
}

// A tiling data class's layout: "struct NAME SIZE", its fields, "end"; a struct field's
// own layout follows its line.
static void Layout(const TilingDef &def, std::ostream &out) {
  out << "struct " << def.GetName() << " " << def.GetDataSize() << "\n";
  for (const TilingField &f : def.Fields()) {
    out << "field " << f.name << " " << f.ctype << " " << f.count << " " << f.offset << " " << f.size << "\n";
    if (f.nested >= 0) Layout(*def.Nested(f), out);
  }
  out << "end\n";
}

static std::string RunTiling(const Impl &impl, std::istream &in) {
  Node node;
  Store store;
  TilingState state;
  if (!ReadNode(in, node, store)) return "error bad request\n";
  for (const gert::Shape &shape : node.input_shapes) {
    state.inputs.emplace_back();
    state.inputs.back().MutableOriginShape() = shape;
    state.inputs.back().MutableStorageShape() = shape;
  }
  for (size_t i = 0; i < node.output_shapes.size(); ++i) {
    int dt = 0;
    in >> dt;
    node.output_descs[i].dt = static_cast<ge::DataType>(dt);
    node.output_shapes[i] = ReadShape(in);
    state.outputs.emplace_back();
    state.outputs.back().MutableOriginShape() = node.output_shapes[i];
    state.outputs.back().MutableStorageShape() = node.output_shapes[i];
  }
  ChipInfo &chip = TheChip();
  size_t capacity = 0;
  in >> chip.arch >> chip.aiv >> chip.aic >> chip.ub >> chip.l1 >> chip.l0a >> chip.l0b >> chip.l0c >> chip.l2 >>
      chip.lib_workspace >> capacity >> state.deterministic;
  if (!in) return "error bad request\n";
  state.capacity = impl.tiling_capacity ? impl.tiling_capacity : capacity;
  state.buffer.assign(state.capacity + TilingState::kGuard, 0);
  std::fill(state.buffer.begin() + state.capacity, state.buffer.end(), TilingState::kGuardByte);

  std::ostringstream out;
  std::shared_ptr<void> compile_info = impl.new_compile_info ? impl.new_compile_info() : nullptr;
  state.compile_info = compile_info.get();
  if (impl.tiling_parse != nullptr) {
    gert::TilingParseContext parse(&node, compile_info.get());
    Phase("TilingParse");
    uint32_t status = impl.tiling_parse(&parse);
    out << "parse " << status << "\n";
    if (status != ge::GRAPH_SUCCESS) return out.str();
  }
  if (impl.tiling == nullptr) return out.str() + "tiling none\n";
  gert::TilingContext context(&node, &state);
  TplLast().clear();
  Phase("Tiling");
  out << "tiling " << impl.tiling(&context) << "\n";
  out << "blockdim " << state.block_dim << "\nkey " << state.tiling_key << "\nschedule " << state.schedule_mode
      << "\natomic " << state.atomic << "\n";
  out << "blockdimat " << (state.block_dim_at.empty() ? "-" : state.block_dim_at) << "\n";
  out << "datasizeat " << (state.data_size_at.empty() ? "-" : state.data_size_at) << "\n";
  out << "workspaces";
  for (size_t size : state.workspaces) out << " " << size;
  out << "\ncapacity " << state.capacity << "\ndatasize " << state.data_size << "\n";
  size_t guard = 0;  // guard bytes the tiling overwrote, up to the last
  for (size_t i = 0; i < TilingState::kGuard; ++i) {
    if (state.buffer[state.capacity + i] != TilingState::kGuardByte) guard = i + 1;
  }
  out << "overrun " << guard << "\n";
  out << "template";
  for (const auto &arg : TplLast()) out << " " << arg.first << "=" << arg.second;
  out << "\ndata " << Hex(state.buffer.data(), std::min(state.data_size, state.capacity)) << "\n";
  auto cls = TilingClasses().find(node.type + "_" + std::to_string(state.tiling_key));
  if (cls == TilingClasses().end()) cls = TilingClasses().find(node.type);
  if (cls == TilingClasses().end()) return out.str();
  // The key's class first (what GET_TILING_DATA reads), then every other class the op
  // registers (``Op`` and ``Op_<key>``), each once: CANN's opbuild generates them all into
  // the kernel's header, whose other keys' branches name them.
  std::set<std::string> seen;
  auto emit = [&](const TilingDefFactory &factory) {
    auto def = factory();
    if (seen.insert(def->GetName()).second) Layout(*def, out);
  };
  emit(cls->second);
  for (const auto &registered : TilingClasses()) {
    const std::string &name = registered.first;
    if (name == node.type || name.rfind(node.type + "_", 0) == 0) emit(registered.second);
  }
  return out.str();
}
}  // namespace opsdk

extern "C" {
// Run ``op_type``'s TilingParse and TilingFunc for ``request``; the protocol of opsdk_infer.
int opsdk_tiling(const char *op_type, const char *request, char *reply, size_t capacity, size_t *needed) {
  return opsdk::Answer(op_type, request, reply, capacity, needed, opsdk::RunTiling);
}
}
