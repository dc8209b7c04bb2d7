// opsdk stand-in for CANN's tiling-data declarations (BEGIN_TILING_DATA_DEF...), which
// headers an inference source includes declare their tiling structs with: each becomes a
// plain class with a set_/get_ pair per field, enough to compile; inference never fills one.
#pragma once
#include "opsdk_gert.h"

#define BEGIN_TILING_DATA_DEF(name)                                   \
  class name {                                                        \
   public:                                                            \
    name() = default;                                                 \
    explicit name(void *) {}                                          \
    void SaveToBuffer(void *, size_t) const {}                        \
    size_t GetDataSize() const { return 0; }                          \
    void SetDataPtr(void *) {}
#define TILING_DATA_FIELD_DEF(type, field)                            \
    type field##_ = {};                                               \
    void set_##field(type value) { field##_ = value; }                \
    type get_##field() const { return field##_; }
#define TILING_DATA_FIELD_DEF_ARR(type, count, field)                 \
    type field##_[count] = {};                                        \
    void set_##field(const type *values) {                            \
      for (size_t i = 0; i < (count); ++i) field##_[i] = values[i];   \
    }                                                                 \
    type *get_##field() { return field##_; }
#define TILING_DATA_FIELD_DEF_STRUCT(type, field) type field;
#define END_TILING_DATA_DEF }
#define REGISTER_TILING_DATA_CLASS(op, cls)
