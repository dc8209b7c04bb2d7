// opsdk stand-in: the API this header declares is in opsdk_gert.h, but for Shape2String,
// which files not including it define themselves (some in an unnamed namespace).
#pragma once
#include <opsdk_gert.h>  // <>: the one on the search path, as the build force-includes it

// A shape (or anything with GetDimNum/GetDim) as "[a, b]".
template <typename T> std::string Shape2String(const T &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.GetDimNum(); ++i) out += (i ? ", " : "") + std::to_string(shape.GetDim(i));
  return out + "]";
}
