// opsdk stand-in for the bounds-checked C functions of the securec library (memcpy_s,
// memset_s, sprintf_s...), as inference code calls them: written from their documented
// contract (0, EOK, on success; nothing written past destMax), not from its source.
#pragma once
#include <cstdarg>
#include <cstdio>
#include <cstring>

#ifndef EOK
#define EOK 0
#endif
using errno_t = int;

inline errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count) {
  if (dest == nullptr || src == nullptr || count > destMax) return -1;
  std::memmove(dest, src, count);
  return EOK;
}
inline errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count) {
  return memcpy_s(dest, destMax, src, count);
}
inline errno_t memset_s(void *dest, size_t destMax, int c, size_t count) {
  if (dest == nullptr || count > destMax) return -1;
  std::memset(dest, c, count);
  return EOK;
}
inline errno_t strcpy_s(char *dest, size_t destMax, const char *src) {
  if (dest == nullptr || src == nullptr || std::strlen(src) >= destMax) return -1;
  std::strcpy(dest, src);
  return EOK;
}
inline errno_t strcat_s(char *dest, size_t destMax, const char *src) {
  if (dest == nullptr || src == nullptr || std::strlen(dest) + std::strlen(src) >= destMax) return -1;
  std::strcat(dest, src);
  return EOK;
}
inline int vsnprintf_s(char *dest, size_t destMax, size_t count, const char *format, va_list args) {
  if (dest == nullptr || destMax == 0) return -1;
  size_t limit = count < destMax ? count + 1 : destMax;
  int written = std::vsnprintf(dest, limit, format, args);
  return written < 0 || static_cast<size_t>(written) >= limit ? -1 : written;
}
inline int snprintf_s(char *dest, size_t destMax, size_t count, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int written = vsnprintf_s(dest, destMax, count, format, args);
  va_end(args);
  return written;
}
inline int sprintf_s(char *dest, size_t destMax, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int written = vsnprintf_s(dest, destMax, destMax - 1, format, args);
  va_end(args);
  return written;
}
