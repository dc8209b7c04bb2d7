// opsdk stand-in (the tiling build's) for CANN's tiling-data declarations: a class declared
// with BEGIN_TILING_DATA_DEF / TILING_DATA_FIELD_DEF* holds its fields in one byte buffer
// laid out as the C struct of those fields (each at its natural alignment, in order), the
// bytes SaveToBuffer hands the kernel; it also knows that layout, which the entry reports
// (the kernel side builds its struct from it, as CANN's opbuild generates it).
#pragma once
// opsdk_gert.h is in every unit already (the build force-includes it)
#include "opsdk_operator.h"  // GE's graph types (ge::Shape), which CANN's header brings in

// CANN's headers a tiling includes leave std::string and std::map reachable unqualified:
// ops-nn's norm tilings (add_rms_norm_quant, batch_norm_v3, norm_tiling_check_common.h) and
// dynamic_quant's write them so.
using std::map;
using std::string;

namespace opsdk {
class TilingDef;
struct TilingField {
  std::string name, ctype;
  size_t count, offset, size;
  ptrdiff_t nested = -1;  // a struct field: where its TilingDef member is, from the owner's
};

class TilingDef {
 public:
  explicit TilingDef(const char *name) : name_(name) {}
  TilingDef(const TilingDef &other) = default;
  // Assigning copies the values; the layout is the class's and stays.
  TilingDef &operator=(const TilingDef &other) {
    if (this != &other && other.size_ == size_) std::memcpy(Bytes(), other.Bytes(), size_);
    return *this;
  }
  virtual ~TilingDef() = default;
  size_t GetDataSize() const { return Round(size_, align_); }
  void SaveToBuffer(void *buffer, size_t capacity) {
    if (GetDataSize() > capacity) {
      Log('E', name_, __FILE__, __LINE__, "tiling data %s needs %zu bytes, capacity %zu", name_, GetDataSize(), capacity);
      return;
    }
    Flush();
    std::memcpy(buffer, Bytes(), size_);
  }
  // Its values are read from and written to ``data`` from now (as large as GetDataSize).
  void SetDataPtr(void *data) { external_ = static_cast<uint8_t *>(data); }
  const char *GetName() const { return name_; }
  const std::vector<TilingField> &Fields() const { return fields_; }
  const TilingDef *Nested(const TilingField &f) const {
    return reinterpret_cast<const TilingDef *>(reinterpret_cast<const char *>(this) + f.nested);
  }
  uint8_t *Bytes() { return external_ != nullptr ? external_ : bytes_.data(); }
  const uint8_t *Bytes() const { return external_ != nullptr ? external_ : bytes_.data(); }

 protected:
  size_t Add(const char *name, const char *ctype, size_t size, size_t count, size_t align) {
    size_t offset = Round(size_, align);
    fields_.push_back({name, ctype, count, offset, size * count});
    size_ = offset + size * count;
    align_ = std::max(align_, align);
    bytes_.resize(size_, 0);
    return offset;
  }
  size_t AddStruct(const char *name, const char *ctype, TilingDef *member) {
    size_t offset = Add(name, ctype, member->GetDataSize(), 1, member->align_);
    fields_.back().nested = reinterpret_cast<char *>(member) - reinterpret_cast<char *>(this);
    return offset;
  }
  // A struct field's values into this one's bytes.
  void Flush() {
    for (const TilingField &f : fields_) {
      if (f.nested < 0) continue;
      auto *nested = const_cast<TilingDef *>(Nested(f));
      nested->Flush();
      std::memcpy(Bytes() + f.offset, nested->Bytes(), nested->size_);
    }
  }
  template <typename T> void Put(size_t offset, const T &value) { std::memcpy(Bytes() + offset, &value, sizeof(T)); }
  template <typename T> T Take(size_t offset) const {
    T value;
    std::memcpy(&value, Bytes() + offset, sizeof(T));
    return value;
  }

 private:
  static size_t Round(size_t n, size_t align) { return (n + align - 1) / align * align; }
  const char *name_;
  std::vector<TilingField> fields_;
  std::vector<uint8_t> bytes_;
  size_t size_ = 0, align_ = 1;
  uint8_t *external_ = nullptr;
};

// REGISTER_TILING_DATA_CLASS's registry: an op type (or ``Op_<tiling key>``) -> a new
// instance of its tiling data class, whose layout the entry reports.
using TilingDefFactory = std::unique_ptr<TilingDef> (*)();
std::map<std::string, TilingDefFactory> &TilingClasses();
struct TilingClassRegistrar {
  TilingClassRegistrar(const char *op, TilingDefFactory factory) { TilingClasses()[op] = factory; }
};
}  // namespace opsdk

#define BEGIN_TILING_DATA_DEF(name)                 \
  class name : public ::opsdk::TilingDef {          \
   public:                                          \
    name() : ::opsdk::TilingDef(#name) {}           \
    explicit name(void *data) : name() { SetDataPtr(data); }
#define TILING_DATA_FIELD_DEF(type, field)                                                 \
   private:                                                                                \
    size_t field##_at_ = Add(#field, #type, sizeof(type), 1, alignof(type));              \
   public:                                                                                 \
    void set_##field(type value) { Put<type>(field##_at_, value); }                        \
    type get_##field() const { return Take<type>(field##_at_); }
#define TILING_DATA_FIELD_DEF_ARR(type, count, field)                                      \
   private:                                                                                \
    size_t field##_at_ = Add(#field, #type, sizeof(type), (count), alignof(type));        \
   public:                                                                                 \
    void set_##field(const type *values) {                                                 \
      std::memcpy(Bytes() + field##_at_, values, sizeof(type) * (count));                  \
    }                                                                                      \
    type *get_##field() { return reinterpret_cast<type *>(Bytes() + field##_at_); }
#define TILING_DATA_FIELD_DEF_STRUCT(type, field)                                          \
   public:                                                                                 \
    type field;                                                                            \
   private:                                                                                \
    size_t field##_at_ = AddStruct(#field, #type, &field);                                \
   public:
#define END_TILING_DATA_DEF };  // sources write it with or without its own ";"
#define REGISTER_TILING_DATA_CLASS(op, cls)                                                \
  static ::opsdk::TilingClassRegistrar OPSDK_CAT(opsdk_tiling_class_, __COUNTER__)(        \
      #op, []() -> std::unique_ptr<::opsdk::TilingDef> { return std::unique_ptr<::opsdk::TilingDef>(new cls()); });
