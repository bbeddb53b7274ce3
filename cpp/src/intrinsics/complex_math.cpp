// cmath: the functions numba-cuda supports on complex64 and complex128 values
// (real arguments convert to complex, as numba's overloads let them). Each is
// written with the real libdevice functions of the component type (float32 for
// complex64, float64 for complex128), by the textbook identities: exp, log and
// sqrt directly; the trigonometric and hyperbolic functions through their real
// parts; the inverse ones through log and sqrt, using their symmetries to stay
// clear of cancellation on the left half-plane.
#include <cmath>

#include <llvm/IR/Constants.h>

#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

using llvm::Value;

struct Cx {
  Value* re;
  Value* im;
};

// Complex arithmetic on one component type, emitted at the builder's position.
class ComplexMath {
 public:
  ComplexMath(Emitter& em, TypeRef complex)
      : em_(em), b_(em.builder()), f32_(complex->bitwidth() == 64), ft_(f32_ ? b_.getFloatTy() : b_.getDoubleTy()) {}

  llvm::IRBuilder<>& builder() { return b_; }
  Emitter& emitter() { return em_; }
  TypeRef component_type() const { return f32_ ? types::float32() : types::float64(); }
  Value* c(double v) { return llvm::ConstantFP::get(ft_, v); }
  // A libdevice function of the component type: __nv_sin / __nv_sinf.
  Value* f(const std::string& name, std::vector<Value*> args) {
    return em_.call_function("__nv_" + name + (f32_ ? "f" : ""), ft_, std::move(args));
  }
  Cx unpack(Value* z) { return {b_.CreateExtractValue(z, 0), b_.CreateExtractValue(z, 1)}; }
  Value* pack(Cx z) {
    Value* out = llvm::UndefValue::get(llvm::StructType::get(ft_, ft_));
    out = b_.CreateInsertValue(out, z.re, 0);
    return b_.CreateInsertValue(out, z.im, 1);
  }
  Value* select(Value* cond, Value* a, Value* b) { return b_.CreateSelect(cond, a, b); }
  Cx select(Value* cond, Cx a, Cx b) { return {select(cond, a.re, b.re), select(cond, a.im, b.im)}; }

  Cx add(Cx a, Cx b) { return {b_.CreateFAdd(a.re, b.re), b_.CreateFAdd(a.im, b.im)}; }
  Cx sub(Cx a, Cx b) { return {b_.CreateFSub(a.re, b.re), b_.CreateFSub(a.im, b.im)}; }
  Cx neg(Cx a) { return {b_.CreateFNeg(a.re), b_.CreateFNeg(a.im)}; }
  Cx mul(Cx a, Cx b) {
    return {b_.CreateFSub(b_.CreateFMul(a.re, b.re), b_.CreateFMul(a.im, b.im)),
            b_.CreateFAdd(b_.CreateFMul(a.re, b.im), b_.CreateFMul(a.im, b.re))};
  }
  Cx div(Cx a, Cx b) {
    Value* d = b_.CreateFAdd(b_.CreateFMul(b.re, b.re), b_.CreateFMul(b.im, b.im));
    Value* re = b_.CreateFAdd(b_.CreateFMul(a.re, b.re), b_.CreateFMul(a.im, b.im));
    Value* im = b_.CreateFSub(b_.CreateFMul(a.im, b.re), b_.CreateFMul(a.re, b.im));
    return {b_.CreateFDiv(re, d), b_.CreateFDiv(im, d)};
  }
  Cx scale(Cx a, Value* s) { return {b_.CreateFMul(a.re, s), b_.CreateFMul(a.im, s)}; }
  Cx times_i(Cx a) { return {b_.CreateFNeg(a.im), a.re}; }        // i z
  Cx times_minus_i(Cx a) { return {a.im, b_.CreateFNeg(a.re)}; }  // -i z

  Value* abs(Cx z) { return f("hypot", {z.re, z.im}); }
  Value* phase(Cx z) { return f("atan2", {z.im, z.re}); }

  Cx exp(Cx z) {
    Value* r = f("exp", {z.re});
    Cx general{b_.CreateFMul(r, f("cos", {z.im})), b_.CreateFMul(r, f("sin", {z.im}))};
    // exp(x + 0j) keeps its zero imaginary part exact (and inf * 0 out of it).
    return select(b_.CreateFCmpOEQ(z.im, c(0)), Cx{r, z.im}, general);
  }
  Cx log(Cx z) { return {f("log", {abs(z)}), phase(z)}; }
  Cx sqrt(Cx z) {
    Value* ax = f("fabs", {z.re});
    Value* ay = f("fabs", {z.im});
    Value* t = f("sqrt", {b_.CreateFMul(b_.CreateFAdd(ax, f("hypot", {ax, ay})), c(0.5))});
    Value* two_t = b_.CreateFMul(t, c(2));
    Cx right{t, b_.CreateFDiv(z.im, two_t)};
    Cx left{b_.CreateFDiv(ay, two_t), f("copysign", {t, z.im})};
    Cx general = select(b_.CreateFCmpOGE(z.re, c(0)), right, left);
    Value* zero = b_.CreateAnd(b_.CreateFCmpOEQ(z.re, c(0)), b_.CreateFCmpOEQ(z.im, c(0)));
    return select(zero, Cx{c(0), z.im}, general);
  }
  Cx sinh(Cx z) {
    return {b_.CreateFMul(f("sinh", {z.re}), f("cos", {z.im})), b_.CreateFMul(f("cosh", {z.re}), f("sin", {z.im}))};
  }
  Cx cosh(Cx z) {
    return {b_.CreateFMul(f("cosh", {z.re}), f("cos", {z.im})), b_.CreateFMul(f("sinh", {z.re}), f("sin", {z.im}))};
  }
  Cx tanh(Cx z) {
    // Kahan's form: t = tan(y), s = sinh(x), beta = 1 + t^2; large |x| saturates to +-1.
    Value* t = f("tan", {z.im});
    Value* s = f("sinh", {z.re});
    Value* beta = b_.CreateFAdd(c(1), b_.CreateFMul(t, t));
    Value* rho = f("sqrt", {b_.CreateFAdd(c(1), b_.CreateFMul(s, s))});
    Value* denom = b_.CreateFAdd(c(1), b_.CreateFMul(beta, b_.CreateFMul(s, s)));
    Cx general{b_.CreateFDiv(b_.CreateFMul(beta, b_.CreateFMul(rho, s)), denom), b_.CreateFDiv(t, denom)};
    Value* ax = f("fabs", {z.re});
    Value* four_sc = b_.CreateFMul(c(4), b_.CreateFMul(f("sin", {z.im}), f("cos", {z.im})));
    Cx saturated{f("copysign", {c(1), z.re}), b_.CreateFMul(four_sc, f("exp", {b_.CreateFMul(c(-2), ax)}))};
    return select(b_.CreateFCmpOGT(ax, c(f32_ ? 9 : 20)), saturated, general);
  }
  Cx asinh(Cx z) {
    // asinh(-z) = -asinh(z): evaluate on the right half-plane.
    Value* flip = b_.CreateFCmpOLT(z.re, c(0));
    Cx w = select(flip, neg(z), z);
    Cx r = log(add(w, sqrt(add(mul(w, w), Cx{c(1), c(0)}))));
    return select(flip, neg(r), r);
  }
  Cx atanh(Cx z) {
    Cx one{c(1), c(0)};
    return scale(sub(log(add(one, z)), log(sub(one, z))), c(0.5));
  }
  Cx acosh(Cx z) {
    Cx one{c(1), c(0)};
    return log(add(z, mul(sqrt(add(z, one)), sqrt(sub(z, one)))));
  }
  // a ** b as CPython's complex power (numba's): an integral real exponent of at most 100 in magnitude by
  // repeated squaring (its reciprocal for a negative one), any other through polar form; b == 0 gives 1, a == 0
  // gives 0 for an exponent with a positive real part and no imaginary part, NaN otherwise.
  Cx pow(Cx a, Cx b) {
    Value* vabs = f("hypot", {a.re, a.im});
    Value* at = phase(a);
    Value* len = f("pow", {vabs, b.re});
    Value* angle = b_.CreateFMul(at, b.re);
    Value* has_im = b_.CreateFCmpUNE(b.im, c(0));
    len = select(has_im, b_.CreateFDiv(len, f("exp", {b_.CreateFMul(at, b.im)})), len);
    angle = select(has_im, b_.CreateFAdd(angle, b_.CreateFMul(b.im, f("log", {vabs}))), angle);
    Cx general{b_.CreateFMul(len, f("cos", {angle})), b_.CreateFMul(len, f("sin", {angle}))};

    Value* integral = b_.CreateAnd(b_.CreateNot(has_im), b_.CreateAnd(b_.CreateFCmpOEQ(f("floor", {b.re}), b.re),
                                                                      b_.CreateFCmpOLE(f("fabs", {b.re}), c(100))));
    Value* n = b_.CreateFPToSI(select(integral, b.re, c(0)), b_.getInt32Ty());
    Value* m = b_.CreateSelect(b_.CreateICmpSLT(n, b_.getInt32(0)), b_.CreateNeg(n), n);
    Cx r{c(1), c(0)}, x = a;
    for (int bit = 0; bit < 7; ++bit) {  // |n| <= 100 < 2**7
      Value* set = b_.CreateICmpNE(b_.CreateAnd(m, b_.getInt32(1 << bit)), b_.getInt32(0));
      r = select(set, mul(r, x), r);
      x = mul(x, x);
    }
    Cx powi = select(b_.CreateICmpSLT(n, b_.getInt32(0)), div(Cx{c(1), c(0)}, r), r);
    Cx result = select(integral, powi, general);

    Value* a_zero = b_.CreateAnd(b_.CreateFCmpOEQ(a.re, c(0)), b_.CreateFCmpOEQ(a.im, c(0)));
    Value* zero_ok = b_.CreateAnd(b_.CreateNot(has_im), b_.CreateFCmpOGT(b.re, c(0)));
    Value* nan = c(std::nan(""));
    result = select(a_zero, select(zero_ok, Cx{c(0), c(0)}, Cx{nan, nan}), result);
    Value* b_zero = b_.CreateAnd(b_.CreateFCmpOEQ(b.re, c(0)), b_.CreateNot(has_im));
    return select(b_zero, Cx{c(1), c(0)}, result);
  }

 private:
  Emitter& em_;
  llvm::IRBuilder<>& b_;
  bool f32_;
  llvm::Type* ft_;
};

using ComplexFn = std::function<Value*(ComplexMath&, std::vector<Value*>&)>;

// Overloads on complex64 and complex128: `arity` complex arguments, the result given for each complex type.
void add_cmath(Table& t, const std::string& name, int arity, std::function<TypeRef(TypeRef)> result, ComplexFn body) {
  Typer typer = [arity, result](const std::vector<TypeRef>& args) {
    std::vector<OpSignature> candidates;
    for (TypeRef c : {types::complex64(), types::complex128()})
      candidates.push_back({std::vector<TypeRef>(arity, c), result(c)});
    return choose_overload(candidates, args);
  };
  add(t, "cmath." + name, typer, [body](Emitter& em, std::vector<Value*> args, const CallTypes& ct) {
    ComplexMath m(em, ct.params[0]);
    return body(m, args);
  });
}

TypeRef same(TypeRef c) { return c; }
TypeRef component(TypeRef c) { return types::float_(c->bitwidth() / 2); }
TypeRef truth(TypeRef) { return types::boolean(); }

void add_complex_unary(Table& t, const std::string& name, Cx (*fn)(ComplexMath&, Cx)) {
  add_cmath(t, name, 1, same, [fn](ComplexMath& m, std::vector<Value*>& a) { return m.pack(fn(m, m.unpack(a[0]))); });
}

}  // namespace

void add_complex_math(Table& t) {
  add_complex_unary(t, "exp", [](ComplexMath& m, Cx z) { return m.exp(z); });
  add_complex_unary(t, "sqrt", [](ComplexMath& m, Cx z) { return m.sqrt(z); });
  add_complex_unary(t, "log10", [](ComplexMath& m, Cx z) { return m.scale(m.log(z), m.c(1 / std::log(10.0))); });
  add_complex_unary(t, "sin", [](ComplexMath& m, Cx z) { return m.times_minus_i(m.sinh(m.times_i(z))); });
  add_complex_unary(t, "cos", [](ComplexMath& m, Cx z) { return m.cosh(m.times_i(z)); });
  add_complex_unary(t, "tan", [](ComplexMath& m, Cx z) { return m.times_minus_i(m.tanh(m.times_i(z))); });
  add_complex_unary(t, "sinh", [](ComplexMath& m, Cx z) { return m.sinh(z); });
  add_complex_unary(t, "cosh", [](ComplexMath& m, Cx z) { return m.cosh(z); });
  add_complex_unary(t, "tanh", [](ComplexMath& m, Cx z) { return m.tanh(z); });
  add_complex_unary(t, "asinh", [](ComplexMath& m, Cx z) { return m.asinh(z); });
  add_complex_unary(t, "asin", [](ComplexMath& m, Cx z) { return m.times_minus_i(m.asinh(m.times_i(z))); });
  add_complex_unary(t, "acos", [](ComplexMath& m, Cx z) {
    Cx s = m.times_minus_i(m.asinh(m.times_i(z)));  // acos z = pi/2 - asin z
    return m.sub(Cx{m.c(M_PI / 2), m.c(0)}, s);
  });
  add_complex_unary(t, "atanh", [](ComplexMath& m, Cx z) { return m.atanh(z); });
  add_complex_unary(t, "atan", [](ComplexMath& m, Cx z) { return m.times_minus_i(m.atanh(m.times_i(z))); });
  add_complex_unary(t, "acosh", [](ComplexMath& m, Cx z) { return m.acosh(z); });

  // log(z) and log(z, base)
  Typer log_typer = [](const std::vector<TypeRef>& args) {
    std::vector<OpSignature> candidates;
    for (TypeRef c : {types::complex64(), types::complex128()})
      candidates.push_back({std::vector<TypeRef>(args.size() == 2 ? 2 : 1, c), c});
    return args.size() == 1 || args.size() == 2 ? choose_overload(candidates, args) : std::nullopt;
  };
  add(t, "cmath.log", log_typer, [](Emitter& em, std::vector<Value*> a, const CallTypes& ct) {
    ComplexMath m(em, ct.params[0]);
    Cx r = m.log(m.unpack(a[0]));
    if (a.size() == 2) r = m.div(r, m.log(m.unpack(a[1])));
    return m.pack(r);
  });

  // a ** b and pow(a, b) on complex numbers (lowering calls this row for the operator).
  add_cmath(t, "__pow__", 2, same,
            [](ComplexMath& m, std::vector<Value*>& a) { return m.pack(m.pow(m.unpack(a[0]), m.unpack(a[1]))); });
  add_cmath(t, "phase", 1, component, [](ComplexMath& m, std::vector<Value*>& a) { return m.phase(m.unpack(a[0])); });
  add_cmath(
      t, "polar", 1, [](TypeRef c) { return types::uni_tuple(component(c), 2); },
      [](ComplexMath& m, std::vector<Value*>& a) {
        Cx z = m.unpack(a[0]);
        return m.emitter().build_tuple({m.abs(z), m.phase(z)}, types::uni_tuple(m.component_type(), 2));
      });
  add_cmath(t, "isnan", 1, truth, [](ComplexMath& m, std::vector<Value*>& a) {
    Cx z = m.unpack(a[0]);
    auto& b = m.builder();
    return b.CreateOr(b.CreateFCmpUNO(z.re, z.re), b.CreateFCmpUNO(z.im, z.im));
  });
  add_cmath(t, "isinf", 1, truth, [](ComplexMath& m, std::vector<Value*>& a) {
    Cx z = m.unpack(a[0]);
    auto& b = m.builder();
    Value* inf = m.c(INFINITY);
    return b.CreateOr(b.CreateFCmpOEQ(m.f("fabs", {z.re}), inf), b.CreateFCmpOEQ(m.f("fabs", {z.im}), inf));
  });
  add_cmath(t, "isfinite", 1, truth, [](ComplexMath& m, std::vector<Value*>& a) {
    Cx z = m.unpack(a[0]);
    auto& b = m.builder();
    Value* inf = m.c(INFINITY);
    return b.CreateAnd(b.CreateFCmpOLT(m.f("fabs", {z.re}), inf), b.CreateFCmpOLT(m.f("fabs", {z.im}), inf));
  });
  // rect(r, phi): two floats to a complex128 (numba's only signature).
  add(t, "cmath.rect", fixed_typer({types::float64(), types::float64()}, types::complex128()),
      [](Emitter& em, std::vector<Value*> a, const CallTypes&) {
        ComplexMath m(em, types::complex128());
        auto& b = m.builder();
        Cx general{b.CreateFMul(a[0], m.f("cos", {a[1]})), b.CreateFMul(a[0], m.f("sin", {a[1]}))};
        // A zero angle keeps the imaginary part exactly zero (also for an infinite modulus).
        return m.pack(m.select(b.CreateFCmpOEQ(a[1], m.c(0)), Cx{a[0], a[1]}, general));
      });
}

}  // namespace cujit::intrinsics
