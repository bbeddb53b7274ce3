// libdevice on the CPU target: the one table of host implementations of every
// __nv_* function cujit's lowering can call (numba-cuda's cuda.libdevice list,
// which the math module, complex math, the fp16/bf16 functions and the fast-math
// variants all call into), joined from three parts: this file's (the C library's
// functions, integer intrinsics, bit casts, half conversions), what libm lacks
// (host_math_special.cpp) and the rounding-mode variants (host_math_rounding.cpp).
// The JIT defines each entry as an absolute symbol, so a module's declaration of
// __nv_sinf links to the function here. Accuracy against the GPU: docs/cpu_target.md.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include <math.h>

#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>

#include "cujit/hostgen.h"
#include "host_math.h"

namespace cujit::hostgen {
namespace {

template <class F>
void* fp(F f) {
  return reinterpret_cast<void*>(f);
}

template <class To, class From>
To bits(From x) {
  To out;
  std::memcpy(&out, &x, sizeof out);
  return out;
}

// PTX's max/min (and libdevice's fmax/fmin): a NaN operand gives the other one; +0 is above -0.
template <class T>
T maximum(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <class T>
T minimum(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// llrint/llround as PTX's cvt: saturating, NaN -> 0.
int64_t saturate_ll(long double r) {
  if (std::isnan(r)) return 0;
  if (r <= -9223372036854775808.0L) return INT64_MIN;
  if (r >= 9223372036854775808.0L) return INT64_MAX;
  return static_cast<int64_t>(r);
}

uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
  const uint64_t bytes = (uint64_t{y} << 32) | x;
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) out |= static_cast<uint32_t>((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return out;
}

uint32_t brev(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}

// |x| as the unsigned integer of x's width (the most negative value is its own magnitude, as on the GPU).
template <class I>
auto magnitude(I x) {
  using U = std::make_unsigned_t<I>;
  return x < 0 ? U(0) - static_cast<U>(x) : static_cast<U>(x);
}

// The 24 low bits of x, sign-extended (mul24) or not (umul24).
int32_t low24(int32_t x) { return static_cast<int32_t>(static_cast<uint32_t>(x) << 8) >> 8; }

using D1 = double (*)(double);
using F1 = float (*)(float);
using D2 = double (*)(double, double);
using F2 = float (*)(float, float);

#define CUJIT_LIBM1(name) \
  {"__nv_" #name, fp(static_cast<D1>(&::name))}, { "__nv_" #name "f", fp(static_cast<F1>(&::name##f)) }
#define CUJIT_LIBM2(name) \
  {"__nv_" #name, fp(static_cast<D2>(&::name))}, { "__nv_" #name "f", fp(static_cast<F2>(&::name##f)) }
// Where the C library's float64 or float32 function is more than an ulp off (sinh, tanh, cbrt, erfc, tgamma...):
// the next wider one (long double, double), rounded once.
#define CUJIT_WIDE1(name)                                                                              \
  {"__nv_" #name, fp(+[](double x) { return static_cast<double>(::name##l(x)); })}, {                  \
    "__nv_" #name "f", fp(+[](float x) { return static_cast<float>(::name(static_cast<double>(x))); }) \
  }
#define CUJIT_WIDE2(name)                                                                                     \
  {"__nv_" #name, fp(+[](double x, double y) { return static_cast<double>(::name##l(x, y)); })}, {            \
    "__nv_" #name "f", fp(+[](float x, float y) { return static_cast<float>(::name(double{x}, double{y})); }) \
  }

std::vector<HostMathFunction> own_entries() {
  return {
      // The C library's functions, float64 and float32.
      CUJIT_LIBM1(acos),
      CUJIT_LIBM1(acosh),
      CUJIT_LIBM1(asin),
      CUJIT_WIDE1(asinh),
      CUJIT_LIBM1(atan),
      CUJIT_WIDE1(atanh),
      CUJIT_WIDE1(cbrt),
      CUJIT_LIBM1(ceil),
      CUJIT_LIBM1(cos),
      CUJIT_WIDE1(cosh),
      CUJIT_WIDE1(erf),
      CUJIT_WIDE1(erfc),
      CUJIT_LIBM1(exp),
      CUJIT_WIDE1(exp10),
      CUJIT_LIBM1(exp2),
      CUJIT_LIBM1(expm1),
      CUJIT_LIBM1(fabs),
      CUJIT_LIBM1(floor),
      CUJIT_WIDE1(j0),
      CUJIT_WIDE1(j1),
      CUJIT_LIBM1(log),
      CUJIT_LIBM1(log10),
      CUJIT_LIBM1(log1p),
      CUJIT_LIBM1(log2),
      CUJIT_LIBM1(logb),
      CUJIT_LIBM1(nearbyint),
      CUJIT_LIBM1(rint),
      CUJIT_LIBM1(round),
      CUJIT_LIBM1(sin),
      CUJIT_WIDE1(sinh),
      CUJIT_LIBM1(sqrt),
      CUJIT_LIBM1(tan),
      CUJIT_WIDE1(tanh),
      CUJIT_WIDE1(tgamma),
      CUJIT_LIBM1(trunc),
      CUJIT_WIDE1(y0),
      CUJIT_WIDE1(y1),
      CUJIT_WIDE2(atan2),
      CUJIT_LIBM2(copysign),
      CUJIT_LIBM2(fdim),
      CUJIT_LIBM2(fmod),
      CUJIT_LIBM2(hypot),
      CUJIT_LIBM2(nextafter),
      CUJIT_LIBM2(pow),
      CUJIT_LIBM2(remainder),
      {"__nv_fma", fp(static_cast<double (*)(double, double, double)>(&::fma))},
      {"__nv_fmaf", fp(static_cast<float (*)(float, float, float)>(&::fmaf))},
      {"__nv_fmax", fp(&maximum<double>)},
      {"__nv_fmaxf", fp(&maximum<float>)},
      {"__nv_fmin", fp(&minimum<double>)},
      {"__nv_fminf", fp(&minimum<float>)},
      {"__nv_lgamma", fp(+[](double x) {
         int sign;
         return static_cast<double>(::lgammal_r(x, &sign));
       })},
      {"__nv_lgammaf", fp(+[](float x) {
         int sign;
         return static_cast<float>(::lgamma_r(x, &sign));
       })},
      {"__nv_frexp", fp(static_cast<double (*)(double, int*)>(&::frexp))},
      {"__nv_frexpf", fp(static_cast<float (*)(float, int*)>(&::frexpf))},
      {"__nv_modf", fp(static_cast<double (*)(double, double*)>(&::modf))},
      {"__nv_modff", fp(static_cast<float (*)(float, float*)>(&::modff))},
      {"__nv_remquo", fp(static_cast<double (*)(double, double, int*)>(&::remquo))},
      {"__nv_remquof", fp(static_cast<float (*)(float, float, int*)>(&::remquof))},
      {"__nv_ldexp", fp(static_cast<double (*)(double, int)>(&::ldexp))},
      {"__nv_ldexpf", fp(static_cast<float (*)(float, int)>(&::ldexpf))},
      {"__nv_scalbn", fp(static_cast<double (*)(double, int)>(&::scalbn))},
      {"__nv_scalbnf", fp(static_cast<float (*)(float, int)>(&::scalbnf))},
      {"__nv_ilogb", fp(static_cast<int (*)(double)>(&::ilogb))},
      {"__nv_ilogbf", fp(static_cast<int (*)(float)>(&::ilogbf))},
      {"__nv_jn", fp(+[](int n, double x) { return static_cast<double>(::jnl(n, x)); })},
      {"__nv_jnf", fp(+[](int n, float x) { return static_cast<float>(::jn(n, x)); })},
      {"__nv_yn", fp(+[](int n, double x) { return static_cast<double>(::ynl(n, x)); })},
      {"__nv_ynf", fp(+[](int n, float x) { return static_cast<float>(::yn(n, x)); })},
      {"__nv_sincos", fp(static_cast<void (*)(double, double*, double*)>(&::sincos))},
      {"__nv_sincosf", fp(static_cast<void (*)(float, float*, float*)>(&::sincosf))},
      {"__nv_llrint", fp(+[](double x) { return saturate_ll(std::nearbyint(x)); })},
      {"__nv_llrintf", fp(+[](float x) { return saturate_ll(std::nearbyint(x)); })},
      {"__nv_llround", fp(+[](double x) { return saturate_ll(std::round(x)); })},
      {"__nv_llroundf", fp(+[](float x) { return saturate_ll(std::round(x)); })},
      // float ** int (numba's dedicated signature): the power of the int's exact float value.
      {"__nv_powi", fp(+[](double x, int32_t n) { return std::pow(x, static_cast<double>(n)); })},
      {"__nv_powif", fp(+[](float x, int32_t n) { return std::pow(x, static_cast<float>(n)); })},
      {"__nv_saturatef", fp(+[](float x) { return std::isnan(x) ? 0.0f
                                                  : x < 0       ? 0.0f
                                                  : x > 1       ? 1.0f
                                                                : x; })},
      // Classification: 1 or 0, as an int32.
      {"__nv_isnand", fp(+[](double x) { return int32_t{std::isnan(x)}; })},
      {"__nv_isnanf", fp(+[](float x) { return int32_t{std::isnan(x)}; })},
      {"__nv_isinfd", fp(+[](double x) { return int32_t{std::isinf(x)}; })},
      {"__nv_isinff", fp(+[](float x) { return int32_t{std::isinf(x)}; })},
      {"__nv_isfinited", fp(+[](double x) { return int32_t{std::isfinite(x)}; })},
      {"__nv_finitef", fp(+[](float x) { return int32_t{std::isfinite(x)}; })},
      {"__nv_signbitd", fp(+[](double x) { return int32_t{std::signbit(x)}; })},
      {"__nv_signbitf", fp(+[](float x) { return int32_t{std::signbit(x)}; })},
      // The GPU's approximate (fast-math) functions: the accurate host ones (see docs/cpu_target.md).
      {"__nv_fast_sinf", fp(static_cast<F1>(&::sinf))},
      {"__nv_fast_cosf", fp(static_cast<F1>(&::cosf))},
      {"__nv_fast_tanf", fp(static_cast<F1>(&::tanf))},
      {"__nv_fast_expf", fp(static_cast<F1>(&::expf))},
      {"__nv_fast_exp10f", fp(static_cast<F1>(&::exp10f))},
      {"__nv_fast_logf", fp(static_cast<F1>(&::logf))},
      {"__nv_fast_log2f", fp(static_cast<F1>(&::log2f))},
      {"__nv_fast_log10f", fp(static_cast<F1>(&::log10f))},
      {"__nv_fast_powf", fp(static_cast<F2>(&::powf))},
      {"__nv_fast_fdividef", fp(+[](float x, float y) { return x / y; })},
      {"__nv_fast_sincosf", fp(static_cast<void (*)(float, float*, float*)>(&::sincosf))},
      // Integer intrinsics.
      {"__nv_abs", fp(+[](int32_t x) { return static_cast<int32_t>(magnitude(x)); })},
      {"__nv_llabs", fp(+[](int64_t x) { return static_cast<int64_t>(magnitude(x)); })},
      {"__nv_brev", fp(&brev)},
      {"__nv_brevll", fp(+[](uint64_t x) { return (uint64_t{brev(static_cast<uint32_t>(x))} << 32) | brev(x >> 32); })},
      {"__nv_byte_perm", fp(&byte_perm)},
      {"__nv_clz", fp(+[](uint32_t x) { return x == 0 ? 32 : __builtin_clz(x); })},
      {"__nv_clzll", fp(+[](uint64_t x) { return x == 0 ? 64 : __builtin_clzll(x); })},
      {"__nv_ffs", fp(+[](uint32_t x) { return x == 0 ? 0 : __builtin_ctz(x) + 1; })},
      {"__nv_ffsll", fp(+[](uint64_t x) { return x == 0 ? 0 : __builtin_ctzll(x) + 1; })},
      {"__nv_popc", fp(+[](uint32_t x) { return __builtin_popcount(x); })},
      {"__nv_popcll", fp(+[](uint64_t x) { return __builtin_popcountll(x); })},
      {"__nv_hadd", fp(+[](int32_t x, int32_t y) { return static_cast<int32_t>((int64_t{x} + y) >> 1); })},
      {"__nv_rhadd", fp(+[](int32_t x, int32_t y) { return static_cast<int32_t>((int64_t{x} + y + 1) >> 1); })},
      {"__nv_uhadd", fp(+[](uint32_t x, uint32_t y) { return static_cast<uint32_t>((uint64_t{x} + y) >> 1); })},
      {"__nv_urhadd", fp(+[](uint32_t x, uint32_t y) { return static_cast<uint32_t>((uint64_t{x} + y + 1) >> 1); })},
      {"__nv_max", fp(+[](int32_t x, int32_t y) { return x > y ? x : y; })},
      {"__nv_min", fp(+[](int32_t x, int32_t y) { return x < y ? x : y; })},
      {"__nv_umax", fp(+[](uint32_t x, uint32_t y) { return x > y ? x : y; })},
      {"__nv_umin", fp(+[](uint32_t x, uint32_t y) { return x < y ? x : y; })},
      {"__nv_llmax", fp(+[](int64_t x, int64_t y) { return x > y ? x : y; })},
      {"__nv_llmin", fp(+[](int64_t x, int64_t y) { return x < y ? x : y; })},
      {"__nv_ullmax", fp(+[](uint64_t x, uint64_t y) { return x > y ? x : y; })},
      {"__nv_ullmin", fp(+[](uint64_t x, uint64_t y) { return x < y ? x : y; })},
      {"__nv_mul24", fp(+[](int32_t x, int32_t y) { return static_cast<int32_t>(int64_t{low24(x)} * low24(y)); })},
      {"__nv_umul24", fp(+[](uint32_t x, uint32_t y) { return (x & 0xFFFFFFu) * (y & 0xFFFFFFu); })},
      {"__nv_mulhi", fp(+[](int32_t x, int32_t y) { return static_cast<int32_t>((int64_t{x} * y) >> 32); })},
      {"__nv_umulhi", fp(+[](uint32_t x, uint32_t y) { return static_cast<uint32_t>((uint64_t{x} * y) >> 32); })},
      {"__nv_mul64hi", fp(+[](int64_t x, int64_t y) { return static_cast<int64_t>((__int128{x} * y) >> 64); })},
      {"__nv_umul64hi", fp(+[](uint64_t x, uint64_t y) {
         return static_cast<uint64_t>((static_cast<unsigned __int128>(x) * y) >> 64);
       })},
      {"__nv_sad", fp(+[](int32_t x, int32_t y, uint32_t z) {
         return static_cast<uint32_t>(x > y ? int64_t{x} - y : int64_t{y} - x) + z;
       })},
      {"__nv_usad", fp(+[](uint32_t x, uint32_t y, uint32_t z) { return (x > y ? x - y : y - x) + z; })},
      // Bit casts.
      {"__nv_double2hiint", fp(+[](double x) { return static_cast<int32_t>(bits<uint64_t>(x) >> 32); })},
      {"__nv_double2loint", fp(+[](double x) { return static_cast<int32_t>(bits<uint64_t>(x)); })},
      {"__nv_hiloint2double", fp(+[](uint32_t hi, uint32_t lo) { return bits<double>((uint64_t{hi} << 32) | lo); })},
      {"__nv_double_as_longlong", fp(+[](double x) { return bits<int64_t>(x); })},
      {"__nv_longlong_as_double", fp(+[](int64_t x) { return bits<double>(x); })},
      {"__nv_float_as_int", fp(+[](float x) { return bits<int32_t>(x); })},
      {"__nv_int_as_float", fp(+[](int32_t x) { return bits<float>(x); })},
      // float16 bits (an int16) to and from float32; the compiler runtime's conversions for LLVM's half type.
      {"__nv_float2half_rn", fp(+[](float x) { return bits<uint16_t>(static_cast<_Float16>(x)); })},
      {"__nv_half2float", fp(+[](uint16_t h) { return static_cast<float>(bits<_Float16>(h)); })},
      {"__extendhfsf2", fp(+[](_Float16 h) { return static_cast<float>(h); })},
      {"__truncsfhf2", fp(+[](float x) { return static_cast<_Float16>(x); })},
      {"__truncdfhf2", fp(+[](double x) { return static_cast<_Float16>(x); })},
  };
}

#undef CUJIT_LIBM1
#undef CUJIT_LIBM2
#undef CUJIT_WIDE1
#undef CUJIT_WIDE2

const std::vector<HostMathFunction>& table() {
  static const std::vector<HostMathFunction> all = [] {
    std::vector<HostMathFunction> out = own_entries();
    for (auto part : {&host_math_special, &host_math_rounding}) {
      std::size_t n = 0;
      const HostMathFunction* entries = part(&n);
      out.insert(out.end(), entries, entries + n);
    }
    return out;
  }();
  return all;
}

}  // namespace

const HostMathFunction* host_math_functions(std::size_t* count) {
  *count = table().size();
  return table().data();
}

std::vector<std::string> host_math_names() {
  std::vector<std::string> names;
  for (const auto& f : table()) names.push_back(f.name);
  return names;
}

bool is_host_math(std::string_view name) {
  static const std::unordered_set<std::string_view> names = [] {
    std::unordered_set<std::string_view> out;
    for (const auto& f : table()) out.insert(f.name);
    return out;
  }();
  return names.count(name) != 0;
}

llvm::Error add_host_math(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap symbols;
  for (const auto& f : table())
    symbols[jit.mangleAndIntern(f.name)] = {llvm::orc::ExecutorAddr::fromPtr(f.address),
                                            llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  return jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

}  // namespace cujit::hostgen
