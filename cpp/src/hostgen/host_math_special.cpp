// libdevice's functions that the C library lacks, on the CPU target (part of
// host_math.cpp's table): sinpi/cospi/sincospi, erfinv, erfcinv, erfcx,
// normcdf, normcdfinv, rcbrt, rsqrt. Each is computed in long double (x87's 64
// significant bits) from long double libm functions and rounded once to the
// result's type, so it lands within an ulp of the exact value.
#include <cmath>
#include <limits>

#include "host_math.h"

namespace cujit::hostgen {
namespace {

using LD = long double;
constexpr LD kPi = 3.141592653589793238462643383279502884L;
constexpr LD kTwoOverSqrtPi = 1.128379167095512573896158903121545172L;
constexpr LD kSqrt2 = 1.414213562373095048801688724209698079L;

// sin(pi x) for a finite x: the exact remainder of x modulo 2 folded into [0, 1/2] (every step exact), then
// sinl or cosl of a quarter period at most.
LD sinpi_l(LD x) {
  LD r = std::remainder(x, 2.0L);  // [-1, 1], exact
  LD a = std::fabs(r);
  if (a > 0.5L) a = 1.0L - a;
  LD v = a <= 0.25L ? std::sin(kPi * a) : std::cos(kPi * (0.5L - a));
  if (v == 0) return std::copysign(0.0L, x);  // sinpi(n) is +0 for n >= 0, -0 for n <= -0
  return std::copysign(v, r);
}

LD cospi_l(LD x) {
  LD a = std::fabs(std::remainder(x, 2.0L));  // [0, 1]
  if (a <= 0.25L) return std::cos(kPi * a);
  if (a <= 0.75L) return std::sin(kPi * (0.5L - a));  // cospi(n + 1/2) is +0
  return -std::cos(kPi * (1.0L - a));
}

double sinpi(double x) { return std::isfinite(x) ? static_cast<double>(sinpi_l(x)) : x - x; }
float sinpif(float x) { return std::isfinite(x) ? static_cast<float>(sinpi_l(x)) : x - x; }
double cospi(double x) { return std::isfinite(x) ? static_cast<double>(cospi_l(x)) : x - x; }
float cospif(float x) { return std::isfinite(x) ? static_cast<float>(cospi_l(x)) : x - x; }
void sincospi(double x, double* s, double* c) {
  *s = sinpi(x);
  *c = cospi(x);
}
void sincospif(float x, float* s, float* c) {
  *s = sinpif(x);
  *c = cospif(x);
}

// erfinv for |x| <= 1/2 (the result in [-0.48, 0.48]): Halley's iteration on erf from the series' first term.
LD erfinv_small(LD x) {
  LD y = x / kTwoOverSqrtPi;
  for (int i = 0; i < 8; ++i) {
    LD f = std::erf(y) - x;
    LD step = f / (kTwoOverSqrtPi * std::exp(-y * y));
    LD next = y - step / (1 + y * step);
    if (next == y) break;
    y = next;
  }
  return y;
}

// erfcinv for 0 < z < 2 (z exact, a float32 or float64).
LD erfcinv_l(LD z) {
  if (z > 1) return -erfcinv_l(2 - z);        // exact
  if (z >= 0.5L) return erfinv_small(1 - z);  // exact
  // z < 1/2: Newton's iteration on log(erfc(y)) - log(z), well conditioned however small z is.
  const LD target = std::log(z);
  LD y = std::sqrt(-target);
  for (int i = 0; i < 40; ++i) {
    LD e = std::erfc(y);
    LD step = (std::log(e) - target) / (-kTwoOverSqrtPi * std::exp(-y * y) / e);
    LD next = y - step;
    if (next == y || std::fabs(step) <= std::fabs(y) * 1e-19L) {
      y = next;
      break;
    }
    y = next;
  }
  return y;
}

template <class T>
T erfcinv_t(T z) {
  if (std::isnan(z) || z < 0 || z > 2) return std::numeric_limits<T>::quiet_NaN();
  if (z == 0) return std::numeric_limits<T>::infinity();
  if (z == 2) return -std::numeric_limits<T>::infinity();
  return static_cast<T>(erfcinv_l(z));
}

template <class T>
T erfinv_t(T x) {
  if (std::isnan(x) || std::fabs(x) > 1) return std::numeric_limits<T>::quiet_NaN();
  if (std::fabs(x) <= T(0.5)) return x == 0 ? x : static_cast<T>(erfinv_small(x));
  T r = erfcinv_t<T>(1 - std::fabs(x));  // exact for |x| >= 1/2
  return std::copysign(r, x);
}

double erfinv(double x) { return erfinv_t(x); }
float erfinvf(float x) { return erfinv_t(x); }
double erfcinv(double x) { return erfcinv_t(x); }
float erfcinvf(float x) { return erfcinv_t(x); }

// erfcx(x) = exp(x^2) erfc(x): x^2 split exactly into hi + lo for the exponential; beyond 50 the asymptotic
// series (its terms past the last kept are below 1e-19 of the sum).
LD erfcx_l(LD x) {
  if (std::isnan(x)) return x;
  if (x >= 50) {
    LD t = 1 / (2 * x * x), sum = 1, term = 1;
    for (int k = 1; k <= 6; ++k) {
      term *= -(2 * k - 1) * t;
      sum += term;
    }
    return sum / (x * std::sqrt(kPi));
  }
  LD hi = x * x;
  LD lo = std::fma(x, x, -hi);
  return std::exp(hi) * (1 + lo) * std::erfc(x);
}

double erfcx(double x) { return static_cast<double>(erfcx_l(x)); }
float erfcxf(float x) { return static_cast<float>(erfcx_l(x)); }
double normcdf(double x) { return static_cast<double>(0.5L * std::erfc(-static_cast<LD>(x) / kSqrt2)); }
float normcdff(float x) { return static_cast<float>(0.5L * std::erfc(-static_cast<LD>(x) / kSqrt2)); }

template <class T>
T normcdfinv_t(T p) {
  if (std::isnan(p) || p < 0 || p > 1) return std::numeric_limits<T>::quiet_NaN();
  if (p == 0) return -std::numeric_limits<T>::infinity();
  if (p == 1) return std::numeric_limits<T>::infinity();
  return static_cast<T>(-kSqrt2 * erfcinv_l(2 * static_cast<LD>(p)));
}

double normcdfinv(double p) { return normcdfinv_t(p); }
float normcdfinvf(float p) { return normcdfinv_t(p); }
double rcbrt(double x) { return static_cast<double>(1 / std::cbrt(static_cast<LD>(x))); }
float rcbrtf(float x) { return static_cast<float>(1 / std::cbrt(static_cast<LD>(x))); }
double rsqrt(double x) { return static_cast<double>(1 / std::sqrt(static_cast<LD>(x))); }
float rsqrtf(float x) { return static_cast<float>(1 / std::sqrt(static_cast<LD>(x))); }

template <class F>
void* fp(F f) {
  return reinterpret_cast<void*>(f);
}

const HostMathFunction kSpecial[] = {
    {"__nv_sinpi", fp(&sinpi)},           {"__nv_sinpif", fp(&sinpif)},
    {"__nv_cospi", fp(&cospi)},           {"__nv_cospif", fp(&cospif)},
    {"__nv_sincospi", fp(&sincospi)},     {"__nv_sincospif", fp(&sincospif)},
    {"__nv_erfinv", fp(&erfinv)},         {"__nv_erfinvf", fp(&erfinvf)},
    {"__nv_erfcinv", fp(&erfcinv)},       {"__nv_erfcinvf", fp(&erfcinvf)},
    {"__nv_erfcx", fp(&erfcx)},           {"__nv_erfcxf", fp(&erfcxf)},
    {"__nv_normcdf", fp(&normcdf)},       {"__nv_normcdff", fp(&normcdff)},
    {"__nv_normcdfinv", fp(&normcdfinv)}, {"__nv_normcdfinvf", fp(&normcdfinvf)},
    {"__nv_rcbrt", fp(&rcbrt)},           {"__nv_rcbrtf", fp(&rcbrtf)},
    {"__nv_rsqrt", fp(&rsqrt)},           {"__nv_rsqrtf", fp(&rsqrtf)},
    {"__nv_frsqrt_rn", fp(&rsqrtf)},
};

}  // namespace

const HostMathFunction* host_math_special(std::size_t* count) {
  *count = sizeof(kSpecial) / sizeof(kSpecial[0]);
  return kSpecial;
}

}  // namespace cujit::hostgen
