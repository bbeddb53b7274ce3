// Thread indexing: cuda.threadIdx/blockIdx/blockDim/gridDim (Dim3 values) and their .{x,y,z}, laneid,
// warpsize (values), cuda.grid(n) and cuda.gridsize(n) (64-bit, as numba).
#include "cujit/target.h"
#include "cujit/vector_types.h"
#include "intrinsic_families.h"

namespace cujit::intrinsics {
namespace {

using target::SpecialRegister;

const char* const kRegisters[] = {"threadIdx", "blockIdx", "blockDim", "gridDim"};

// threadIdx.x ... gridDim.z, as the target reads them.
llvm::Value* read_register(Emitter& em, int reg, int axis) {
  return em.target().special_register(em.builder(), em.target_context(), static_cast<SpecialRegister>(reg), axis);
}

void add_value(Table& t, const std::string& name, TypeRef type, Lowerer lower) {
  t[name] = Intrinsic{Intrinsic::Kind::Value, name, {}, fixed_typer({}, type), std::move(lower)};
}

// cuda.grid(n) / cuda.gridsize(n): n is a literal 1, 2 or 3.
std::optional<OpSignature> grid_like(const std::vector<TypeRef>& args) {
  if (args.size() != 1 || args[0]->kind() != TypeKind::IntegerLiteral) return std::nullopt;
  int64_t n = args[0]->literal_value();
  if (n < 1 || n > 3) return std::nullopt;
  TypeRef r = n == 1 ? types::int64() : types::uni_tuple(types::int64(), static_cast<int>(n));
  return OpSignature{{args[0]}, r};
}

Lowerer grid_lowering(bool grid) {
  return [grid](Emitter& em, std::vector<llvm::Value*>, const CallTypes& types) -> llvm::Value* {
    auto& b = em.builder();
    int n = static_cast<int>(types.params[0]->literal_value());
    std::vector<llvm::Value*> dims;
    for (int axis = 0; axis < n; ++axis) {
      // 64-bit arithmetic on zero-extended registers: mul.wide.u32, no overflow.
      auto reg = [&](int r) { return b.CreateZExt(read_register(em, r, axis), b.getInt64Ty()); };
      dims.push_back(grid ? b.CreateAdd(b.CreateMul(reg(1), reg(2), "", true, true), reg(0), "", true, true)
                          : b.CreateMul(reg(2), reg(3), "", true, true));
    }
    return n == 1 ? dims[0] : em.build_tuple(dims, types.result);
  };
}

}  // namespace

void add_thread_indexing(Table& t) {
  // cuda.threadIdx (blockIdx...) as a value: numba-cuda's Dim3 of its x, y and z registers.
  for (int reg = 0; reg < 4; ++reg)
    add_value(t, std::string("cuda.") + kRegisters[reg], types::dim3(), [reg](Emitter& em, auto, const CallTypes& ct) {
      std::vector<llvm::Value*> axes;
      for (int axis = 0; axis < 3; ++axis) axes.push_back(read_register(em, reg, axis));
      return em.build_tuple(axes, ct.result);
    });
  for (int reg = 0; reg < 4; ++reg)
    for (int axis = 0; axis < 3; ++axis)
      add_value(t, std::string("cuda.") + kRegisters[reg] + "." + "xyz"[axis], types::int32(),
                [reg, axis](Emitter& em, auto, const CallTypes&) { return read_register(em, reg, axis); });
  add_value(t, "cuda.laneid", types::int32(),
            [](Emitter& em, auto, const CallTypes&) { return em.target().lane_id(em.builder(), em.target_context()); });
  add_value(t, "cuda.warpsize", types::int32(),
            [](Emitter& em, auto, const CallTypes&) -> llvm::Value* { return em.builder().getInt32(32); });
  add(t, "cuda.grid", grid_like, grid_lowering(true), {"ndim"});
  add(t, "cuda.gridsize", grid_like, grid_lowering(false), {"ndim"});
}

}  // namespace cujit::intrinsics
