// opsdk's AscendC stand-in: half and bfloat16_t as the vector unit stores them (IEEE
// binary16 / bfloat16 bits; a float is rounded to them round-to-nearest-even unless a
// Cast names another mode), and the rounding modes Cast takes.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace opsdk_rt {

enum Rounding { RNE = 0, FLOOR, CEIL, TRUNC, AWAY, ODD };

// |a| rounded to a binary format of mant_bits fraction bits and min_exp smallest normal
// exponent, in mode, as a double (exact); sign handled by the caller through `negative`.
inline double round_magnitude(double a, bool negative, int mant_bits, int min_exp, Rounding mode) {
    if (a == 0 || std::isnan(a) || std::isinf(a)) return a;
    int e;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    int exp = std::max(e - 1, min_exp);
    double q = std::ldexp(1.0, exp - mant_bits);
    double n = a / q, fl = std::floor(n), frac = n - fl, r;
    switch (mode) {
        case FLOOR: r = negative ? std::ceil(n) : fl; break;
        case CEIL: r = negative ? fl : std::ceil(n); break;
        case TRUNC: r = fl; break;
        case AWAY: r = frac >= 0.5 ? fl + 1 : fl; break;
        case ODD: r = frac == 0 ? fl : (std::fmod(fl, 2) == 0 ? fl + 1 : fl); break;
        default: r = frac > 0.5 ? fl + 1 : frac < 0.5 ? fl : (std::fmod(fl, 2) == 0 ? fl : fl + 1);
    }
    return r * q;
}

// The bits of v in a format with exp_bits exponent and mant_bits fraction bits.
inline uint32_t encode(double v, int exp_bits, int mant_bits, Rounding mode) {
    uint32_t sign = std::signbit(v) ? 1u : 0u;
    uint32_t top = sign << (exp_bits + mant_bits);
    uint32_t exp_all = (1u << exp_bits) - 1;
    if (std::isnan(v)) return top | (exp_all << mant_bits) | (1u << (mant_bits - 1));
    int bias = (1 << (exp_bits - 1)) - 1;
    double a = round_magnitude(std::fabs(v), sign, mant_bits, 1 - bias, mode);
    double largest = std::ldexp(2.0 - std::ldexp(1.0, -mant_bits), bias);
    if (std::isinf(a) || a > largest) {
        bool to_inf = mode == RNE || mode == AWAY || (mode == CEIL && !sign) || (mode == FLOOR && sign);
        if (to_inf || std::isinf(v)) return top | (exp_all << mant_bits);
        a = largest;
    }
    if (a == 0) return top;
    int e;
    std::frexp(a, &e);
    int exp = e - 1;
    if (exp < 1 - bias) return top | uint32_t(a / std::ldexp(1.0, 1 - bias - mant_bits));
    uint32_t frac = uint32_t(a / std::ldexp(1.0, exp - mant_bits)) - (1u << mant_bits);
    return top | (uint32_t(exp + bias) << mant_bits) | frac;
}

inline double decode(uint32_t bits, int exp_bits, int mant_bits) {
    bool sign = bits >> (exp_bits + mant_bits) & 1;
    uint32_t exp = bits >> mant_bits & ((1u << exp_bits) - 1);
    uint32_t frac = bits & ((1u << mant_bits) - 1);
    int bias = (1 << (exp_bits - 1)) - 1;
    double v;
    if (exp == (1u << exp_bits) - 1) v = frac ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
    else if (exp == 0) v = std::ldexp(double(frac), 1 - bias - mant_bits);
    else v = std::ldexp(double(frac | (1u << mant_bits)), int(exp) - bias - mant_bits);
    return sign ? -v : v;
}

template <int EXP, int MANT>
struct Narrow {
    uint16_t bits = 0;
    Narrow() = default;
    // From an integer also at compile time (kernels keep constexpr tables of half).
    template <class U, class = std::enable_if_t<std::is_arithmetic_v<U>>>
    constexpr Narrow(U v)
        : bits(std::is_integral_v<U> ? from_integer((long long)v) : uint16_t(encode(double(v), EXP, MANT, RNE))) {}
    // The bits of integer v, rounded to nearest even (beyond the largest: infinity).
    static constexpr uint16_t from_integer(long long v) {
        uint32_t sign = v < 0 ? 1u << (EXP + MANT) : 0u, inf = sign | (((1u << EXP) - 1) << MANT);
        unsigned long long a = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, mant = a;
        if (a == 0) return uint16_t(sign);
        int e = 63 - __builtin_clzll(a), bias = (1 << (EXP - 1)) - 1;  // a in [2^e, 2^(e+1))
        if (e > MANT) {
            int drop = e - MANT;
            unsigned long long rest = a & ((1ull << drop) - 1), tie = 1ull << (drop - 1);
            mant = (a >> drop) + (rest > tie || (rest == tie && (a >> drop & 1)));
            if (mant >> (MANT + 1)) mant >>= 1, ++e;
        } else {
            mant = a << (MANT - e);
        }
        if (e > bias) return uint16_t(inf);
        return uint16_t(sign | (uint32_t(e + bias) << MANT) | uint32_t(mant & ((1ull << MANT) - 1)));
    }
    static Narrow from_bits(uint16_t b) { Narrow n; n.bits = b; return n; }
    static Narrow rounded(double v, Rounding mode) { return from_bits(uint16_t(encode(v, EXP, MANT, mode))); }
    operator float() const { return float(decode(bits, EXP, MANT)); }
    template <class U> Narrow& operator+=(U o) { return *this = Narrow(float(*this) + float(o)); }
    template <class U> Narrow& operator-=(U o) { return *this = Narrow(float(*this) - float(o)); }
    template <class U> Narrow& operator*=(U o) { return *this = Narrow(float(*this) * float(o)); }
    template <class U> Narrow& operator/=(U o) { return *this = Narrow(float(*this) / float(o)); }
    Narrow operator-() const { return from_bits(bits ^ 0x8000); }
};

}  // namespace opsdk_rt

using half = opsdk_rt::Narrow<5, 10>;
using bfloat16_t = opsdk_rt::Narrow<8, 7>;
// On the core bfloat16_t is the compiler's __bf16: kernels name either.
#define __bf16 bfloat16_t
