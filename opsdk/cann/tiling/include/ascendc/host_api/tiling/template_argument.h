// opsdk stand-in for AscendC's template tiling keys, host side: ASCENDC_TPL_ARGS_DECL
// declares the template arguments with their bit widths (a dtype or format 8 bits, a bool
// 1); GET_TPL_TILING_KEY packs the values given in that order, the first in the lowest
// bits, and records them, so the run reports the kernel's template arguments as well as
// the key. The selections (ASCENDC_TPL_SEL...) are the kernel build's: nothing here.
#pragma once
// opsdk_gert.h is in every unit already (the build force-includes it)

namespace opsdk {
struct TplArg {
  const char *name;
  uint32_t bits;
};
// The values of the last key packed, by argument name.
std::vector<std::pair<std::string, uint64_t>> &TplLast();
inline uint64_t TplKey(const std::vector<TplArg> &declared, std::initializer_list<uint64_t> values) {
  uint64_t key = 0;
  uint32_t shift = 0;
  size_t i = 0;
  TplLast().clear();
  for (uint64_t value : values) {
    if (i >= declared.size()) break;
    key |= (value & ((uint64_t{1} << declared[i].bits) - 1)) << shift;
    TplLast().emplace_back(declared[i].name, value);
    shift += declared[i++].bits;
  }
  return key;
}
}  // namespace opsdk

#define ASCENDC_TPL_ARGS_DECL(op, ...) static const std::vector<::opsdk::TplArg> opsdk_tpl_declared = {__VA_ARGS__};
#define ASCENDC_TPL_UINT_DECL(name, bits, ...) ::opsdk::TplArg{#name, bits}
#define ASCENDC_TPL_DTYPE_DECL(name, ...) ::opsdk::TplArg{#name, 8}
#define ASCENDC_TPL_DATATYPE_DECL(name, ...) ::opsdk::TplArg{#name, 8}
#define ASCENDC_TPL_FORMAT_DECL(name, ...) ::opsdk::TplArg{#name, 8}
#define ASCENDC_TPL_BOOL_DECL(name, ...) ::opsdk::TplArg{#name, 1}
#define ASCENDC_TPL_UI_LIST 0
#define ASCENDC_TPL_UI_RANGE 1
#define ASCENDC_TPL_UI_MIX 2
#define ASCENDC_TPL_1_BW 1
#define ASCENDC_TPL_2_BW 2
#define ASCENDC_TPL_4_BW 4
#define ASCENDC_TPL_8_BW 8
#define ASCENDC_TPL_SEL(...)
#define GET_TPL_TILING_KEY(...) ::opsdk::TplKey(opsdk_tpl_declared, {__VA_ARGS__})
#define ASCENDC_TPL_SEL_PARAM(context, ...)                        \
  do {                                                             \
    (context)->SetTilingKey(GET_TPL_TILING_KEY(__VA_ARGS__));      \
  } while (0)
