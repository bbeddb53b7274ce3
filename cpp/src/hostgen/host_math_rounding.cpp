// libdevice's rounding-mode variants on the CPU target (part of host_math.cpp's
// table): __nv_fadd_rd ... __nv_fma_rz and the int<->float conversions with a
// rounding mode, computed by the CPU's own IEEE arithmetic with its rounding
// mode set for the one operation (so the results are the GPU's, exactly), and
// float->int conversions that saturate and give 0 for NaN, as PTX's cvt does.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "host_math.h"

namespace cujit::hostgen {
namespace {

// f() computed with the rounding mode `mode`. The operands pass through volatile locals that f reads after the
// mode is set and the result through one written before it is restored, so the compiler cannot move the
// arithmetic across the fesetround calls.
template <class T, class F>
T in_mode(int mode, F f) {
  const int old = std::fegetround();
  std::fesetround(mode);
  volatile T result = f();
  std::fesetround(old);
  return result;
}

template <class T>
T fence(T v) {
  volatile T copy = v;
  return copy;
}

template <class T, int Mode>
T add(T a, T b) {
  return in_mode<T>(Mode, [&] { return fence(a) + fence(b); });
}
template <class T, int Mode>
T sub(T a, T b) {
  return in_mode<T>(Mode, [&] { return fence(a) - fence(b); });
}
template <class T, int Mode>
T mul(T a, T b) {
  return in_mode<T>(Mode, [&] { return fence(a) * fence(b); });
}
template <class T, int Mode>
T div(T a, T b) {
  return in_mode<T>(Mode, [&] { return fence(a) / fence(b); });
}
template <class T, int Mode>
T rcp(T a) {
  return in_mode<T>(Mode, [&] { return T(1) / fence(a); });
}
template <class T, int Mode>
T root(T a) {
  return in_mode<T>(Mode, [&] { return std::sqrt(fence(a)); });
}
template <class T, int Mode>
T fused(T a, T b, T c) {
  return in_mode<T>(Mode, [&] { return std::fma(fence(a), fence(b), fence(c)); });
}
// An integer or a float64 converted to To with the rounding mode.
template <class To, class From, int Mode>
To convert(From x) {
  return in_mode<To>(Mode, [&] { return static_cast<To>(fence(x)); });
}

// PTX's cvt.rni/rmi/rpi/rzi to an integer: round with the mode, saturate to the integer's range, NaN -> 0.
template <class I, class F, int Mode>
I to_integer(F x) {
  if (std::isnan(x)) return 0;
  F r = Mode == FE_DOWNWARD     ? std::floor(x)
        : Mode == FE_UPWARD     ? std::ceil(x)
        : Mode == FE_TOWARDZERO ? std::trunc(x)
                                : std::nearbyint(x);
  // The integer's bounds as F: the lowest is exact (0 or -2^k); the highest + 1 is 2^k.
  const F lo = static_cast<F>(std::numeric_limits<I>::min());
  const F hi_plus_one = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F(2);
  if (r <= lo) return std::numeric_limits<I>::min();
  if (r >= hi_plus_one) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}

constexpr int RN = FE_TONEAREST, RZ = FE_TOWARDZERO, RD = FE_DOWNWARD, RU = FE_UPWARD;

template <class F>
void* fp(F f) {
  return reinterpret_cast<void*>(f);
}

// Four entries (_rn, _rz, _rd, _ru) of one template.
#define CUJIT_MODES(name, ...)                                                            \
  {"__nv_" name "_rn", fp(&__VA_ARGS__<RN>)}, {"__nv_" name "_rz", fp(&__VA_ARGS__<RZ>)}, \
      {"__nv_" name "_rd", fp(&__VA_ARGS__<RD>)}, {                                       \
    "__nv_" name "_ru", fp(&__VA_ARGS__<RU>)                                              \
  }

template <int M>
float fadd(float a, float b) {
  return add<float, M>(a, b);
}
template <int M>
float fsub(float a, float b) {
  return sub<float, M>(a, b);
}
template <int M>
float fmul(float a, float b) {
  return mul<float, M>(a, b);
}
template <int M>
float fdiv(float a, float b) {
  return div<float, M>(a, b);
}
template <int M>
float frcp(float a) {
  return rcp<float, M>(a);
}
template <int M>
float fsqrt(float a) {
  return root<float, M>(a);
}
template <int M>
float fmaf_(float a, float b, float c) {
  return fused<float, M>(a, b, c);
}
template <int M>
double dadd(double a, double b) {
  return add<double, M>(a, b);
}
template <int M>
double dmul(double a, double b) {
  return mul<double, M>(a, b);
}
template <int M>
double ddiv(double a, double b) {
  return div<double, M>(a, b);
}
template <int M>
double drcp(double a) {
  return rcp<double, M>(a);
}
template <int M>
double dsqrt(double a) {
  return root<double, M>(a);
}
template <int M>
double fma_(double a, double b, double c) {
  return fused<double, M>(a, b, c);
}
template <int M>
float double2float(double x) {
  return convert<float, double, M>(x);
}
template <int M>
float int2float(int32_t x) {
  return convert<float, int32_t, M>(x);
}
template <int M>
float uint2float(uint32_t x) {
  return convert<float, uint32_t, M>(x);
}
template <int M>
float ll2float(int64_t x) {
  return convert<float, int64_t, M>(x);
}
template <int M>
float ull2float(uint64_t x) {
  return convert<float, uint64_t, M>(x);
}
template <int M>
double ll2double(int64_t x) {
  return convert<double, int64_t, M>(x);
}
template <int M>
double ull2double(uint64_t x) {
  return convert<double, uint64_t, M>(x);
}
template <int M>
int32_t double2int(double x) {
  return to_integer<int32_t, double, M>(x);
}
template <int M>
uint32_t double2uint(double x) {
  return to_integer<uint32_t, double, M>(x);
}
template <int M>
int64_t double2ll(double x) {
  return to_integer<int64_t, double, M>(x);
}
template <int M>
uint64_t double2ull(double x) {
  return to_integer<uint64_t, double, M>(x);
}
template <int M>
int32_t float2int(float x) {
  return to_integer<int32_t, float, M>(x);
}
template <int M>
uint32_t float2uint(float x) {
  return to_integer<uint32_t, float, M>(x);
}
template <int M>
int64_t float2ll(float x) {
  return to_integer<int64_t, float, M>(x);
}
template <int M>
uint64_t float2ull(float x) {
  return to_integer<uint64_t, float, M>(x);
}

double int2double_rn(int32_t x) { return static_cast<double>(x); }
double uint2double_rn(uint32_t x) { return static_cast<double>(x); }

const HostMathFunction kRounding[] = {
    CUJIT_MODES("fadd", fadd),
    CUJIT_MODES("fsub", fsub),
    CUJIT_MODES("fmul", fmul),
    CUJIT_MODES("fdiv", fdiv),
    CUJIT_MODES("frcp", frcp),
    CUJIT_MODES("fsqrt", fsqrt),
    CUJIT_MODES("fmaf", fmaf_),
    CUJIT_MODES("dadd", dadd),
    CUJIT_MODES("dmul", dmul),
    CUJIT_MODES("ddiv", ddiv),
    CUJIT_MODES("drcp", drcp),
    CUJIT_MODES("dsqrt", dsqrt),
    CUJIT_MODES("fma", fma_),
    CUJIT_MODES("double2float", double2float),
    CUJIT_MODES("int2float", int2float),
    CUJIT_MODES("uint2float", uint2float),
    CUJIT_MODES("ll2float", ll2float),
    CUJIT_MODES("ull2float", ull2float),
    CUJIT_MODES("ll2double", ll2double),
    CUJIT_MODES("ull2double", ull2double),
    CUJIT_MODES("double2int", double2int),
    CUJIT_MODES("double2uint", double2uint),
    CUJIT_MODES("double2ll", double2ll),
    CUJIT_MODES("double2ull", double2ull),
    CUJIT_MODES("float2int", float2int),
    CUJIT_MODES("float2uint", float2uint),
    CUJIT_MODES("float2ll", float2ll),
    CUJIT_MODES("float2ull", float2ull),
    {"__nv_int2double_rn", fp(&int2double_rn)},
    {"__nv_uint2double_rn", fp(&uint2double_rn)},
};

#undef CUJIT_MODES

}  // namespace

const HostMathFunction* host_math_rounding(std::size_t* count) {
  *count = sizeof(kRounding) / sizeof(kRounding[0]);
  return kRounding;
}

}  // namespace cujit::hostgen
