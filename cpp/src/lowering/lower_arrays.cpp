// Arrays: numba's array struct {meminfo, parent, nitems, itemsize, data,
// shape[], strides[]}, element addressing (shape-based for C/F layouts so
// the index math is what nvcc would emit, strides for A), views from slices
// with Python's slice semantics, and shared, local and constant arrays.
#include <algorithm>
#include <string_view>

#include <llvm/IR/Constants.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/MDBuilder.h>

#include "function_lowering.h"

namespace cujit::lowering {

using ir::Expr;
using ir::ExprKind;
using llvm::Value;
using K = ir::GlobalValue::Kind;

Value* FunctionLowering::array_field(Value* ary, int field, int dim) {
  if (dim < 0) return b_.CreateExtractValue(ary, static_cast<unsigned>(field));
  return b_.CreateExtractValue(ary, {static_cast<unsigned>(field), static_cast<unsigned>(dim)});
}

Value* FunctionLowering::make_array(TypeRef aty, Value* data, const std::vector<Value*>& shape,
                                    const std::vector<Value*>& strides) {
  auto* ptr = llvm::PointerType::get(ctx_, 0);
  Value* out = llvm::UndefValue::get(state_.model.value_type(aty));
  out = b_.CreateInsertValue(out, llvm::ConstantPointerNull::get(ptr), kMeminfo);
  out = b_.CreateInsertValue(out, llvm::ConstantPointerNull::get(ptr), kParent);
  Value* nitems = b_.getInt64(1);
  for (Value* s : shape) nitems = b_.CreateMul(nitems, s, "", false, true);
  out = b_.CreateInsertValue(out, nitems, kNitems);
  out = b_.CreateInsertValue(out, b_.getInt64(types::itemsize(aty->element(0))), kItemsize);
  out = b_.CreateInsertValue(out, data, kData);
  for (size_t d = 0; d < shape.size(); ++d) {
    out = b_.CreateInsertValue(out, shape[d], {kShape, static_cast<unsigned>(d)});
    out = b_.CreateInsertValue(out, strides[d], {kStrides, static_cast<unsigned>(d)});
  }
  return out;
}

// Python's negative indices count from the end.
Value* FunctionLowering::wrap_index(Value* index, Value* extent) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(index))
    if (!c->isNegative()) return index;
  Value* negative = b_.CreateICmpSLT(index, b_.getInt64(0));
  return b_.CreateSelect(negative, b_.CreateAdd(index, extent), index);
}

Value* FunctionLowering::element_pointer(Value* ary, TypeRef aty, const std::vector<Value*>& indices,
                                         const std::vector<bool>& non_negative) {
  TypeRef dtype = aty->element(0);
  int ndim = aty->ndim();
  std::vector<Value*> idx;
  for (int d = 0; d < ndim; ++d) {
    bool known = d < static_cast<int>(non_negative.size()) && non_negative[d];
    idx.push_back(known ? indices[d] : wrap_index(indices[d], array_field(ary, kShape, d)));
  }
  Value* data = array_field(ary, kData);
  llvm::Type* elem = state_.model.storage_type(dtype);
  if (aty->layout() == 'C' || aty->layout() == 'F') {
    // Contiguous: a linear element index from the shape (no strides, no byte math).
    Value* linear = nullptr;
    for (int k = 0; k < ndim; ++k) {
      int d = aty->layout() == 'C' ? k : ndim - 1 - k;
      if (linear == nullptr) {
        linear = idx[d];
      } else {
        Value* extent = array_field(ary, kShape, d);
        linear = b_.CreateAdd(b_.CreateMul(linear, extent, "", false, true), idx[d], "", false, true);
      }
    }
    if (linear == nullptr) return data;
    Value* ptr = b_.CreateInBoundsGEP(elem, data, linear);
    return state_.options.bounds_check ? bounds_checked(ptr, ary, aty, indices, idx) : ptr;
  }
  Value* offset = b_.getInt64(0);
  for (int d = 0; d < ndim; ++d)
    offset =
        b_.CreateAdd(offset, b_.CreateMul(idx[d], array_field(ary, kStrides, d), "", false, true), "", false, true);
  Value* ptr = b_.CreateInBoundsGEP(b_.getInt8Ty(), data, offset);
  return state_.options.bounds_check && ndim > 0 ? bounds_checked(ptr, ary, aty, indices, idx) : ptr;
}

Value* FunctionLowering::bounds_checked(Value* ptr, Value* ary, TypeRef aty, const std::vector<Value*>& indices,
                                        const std::vector<Value*>& wrapped) {
  Value* inside = b_.getTrue();
  std::vector<Value*> shape;
  for (int d = 0; d < aty->ndim(); ++d) {
    shape.push_back(array_field(ary, kShape, d));
    inside = b_.CreateAnd(inside, b_.CreateICmpULT(wrapped[d], shape.back()));
  }
  // The bad access reads or writes a scratch slot of the element's size instead (one per check).
  auto* slot_ty = llvm::ArrayType::get(b_.getInt8Ty(), std::max<int64_t>(16, types::itemsize(aty->element(0))));
  auto* scratch = new llvm::GlobalVariable(state_.module, slot_ty, false, llvm::GlobalValue::InternalLinkage,
                                           llvm::ConstantAggregateZero::get(slot_ty), "index.scratch");
  scratch->setAlignment(llvm::Align(16));
  std::vector<Value*> address{ptr};
  report_outside(inside, array_field(ary, kData), indices, shape, address, {scratch});
  return address[0];
}

void FunctionLowering::report_outside(Value* inside, Value* data, const std::vector<Value*>& indices,
                                      const std::vector<Value*>& shape, std::vector<Value*>& inside_value,
                                      const std::vector<Value*>& outside_value) {
  llvm::BasicBlock* bad = llvm::BasicBlock::Create(ctx_, "index.out", llfn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "index.in", llfn_);
  llvm::BasicBlock* checked = b_.GetInsertBlock();
  b_.CreateCondBr(inside, done, bad, llvm::MDBuilder(ctx_).createLikelyBranchWeights());
  b_.SetInsertPoint(bad);
  // (an access made by an intrinsic has its array argument's name; "an array" if that is no variable)
  target().index_error(b_, context_, index_site_.empty() ? "an array" : index_site_, data, indices, shape);
  llvm::BasicBlock* reported = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  for (std::size_t i = 0; i < inside_value.size(); ++i) {
    llvm::PHINode* merged = b_.CreatePHI(inside_value[i]->getType(), 2);
    merged->addIncoming(inside_value[i], checked);
    merged->addIncoming(outside_value[i], reported);
    inside_value[i] = merged;
  }
}

std::string FunctionLowering::index_site(const Expr& array) const {
  std::string what = array.kind == ExprKind::Var && array.var >= 0 ? "array '" + fn_.vars[array.var].name + "'"
                                                                   : std::string("an array");
  if (!array.loc.known()) return what;
  return what + " at " + fn_.filename + ":" + std::to_string(array.loc.line);
}

Value* FunctionLowering::load_element(Value* ptr, TypeRef dtype, int64_t align) {
  if (dtype->kind() == TypeKind::Record || types::is_charseq(dtype)) return ptr;
  if (state_.options.shared_checks)
    target().memory_access(b_, context_, ptr, types::itemsize(dtype), /*write=*/false, index_site_);
  llvm::Type* t = state_.model.data_type(dtype);
  auto* load = b_.CreateAlignedLoad(t, ptr, llvm::Align(align ? align : types::alignment(dtype)));
  return state_.model.data_to_value(b_, load, dtype);
}

// A floating-point value stored below its natural alignment (a packed record's field) as the integer of its bits,
// made by a `mov.bN` the optimiser cannot see through. LLVM 22 splits such a store into byte stores of the
// untyped register the arithmetic wrote (`add.f64 %rd1, ...; st.global.b8 [p], %rd1`), and ptxas of CUDA 13.0
// takes that first byte store as a float-to-u8 conversion (F2I.U8.F64.TRUNC): the byte came out 0 on an H100.
static Value* as_integer_bits(llvm::IRBuilder<>& b, Value* data) {
  llvm::Type* t = data->getType();
  const unsigned bits = t->getPrimitiveSizeInBits();
  const char* in = t->isDoubleTy() ? "d" : t->isFloatTy() ? "f" : "h";
  const char* out = bits == 64 ? "=l" : bits == 32 ? "=r" : "=h";
  llvm::Type* it = b.getIntNTy(bits);
  auto* mov = llvm::InlineAsm::get(llvm::FunctionType::get(it, {t}, false), "mov.b" + std::to_string(bits) + " $0, $1;",
                                   std::string(out) + "," + in,
                                   /*hasSideEffects=*/false);
  return b.CreateCall(mov, {data});
}

void FunctionLowering::store_element(Value* ptr, Value* value, TypeRef dtype, int64_t align) {
  llvm::Align a(align ? align : types::alignment(dtype));
  if (state_.options.shared_checks)
    target().memory_access(b_, context_, ptr, types::itemsize(dtype), /*write=*/true, index_site_);
  if (dtype->kind() == TypeKind::Record || types::is_charseq(dtype)) {
    b_.CreateMemCpy(ptr, a, value, a, types::itemsize(dtype));
    return;
  }
  Value* data = state_.model.value_to_data(b_, value, dtype);
  llvm::Type* t = data->getType();
  const bool ptx = std::string_view(state_.options.target->name()) == "nvptx";  // the workaround is for ptxas
  if (ptx && align != 0 && align < types::alignment(dtype) && (t->isDoubleTy() || t->isFloatTy() || t->isHalfTy()))
    data = as_integer_bits(b_, data);
  b_.CreateAlignedStore(data, ptr, a);
}

std::vector<FunctionLowering::IndexItem> FunctionLowering::lower_index(const Expr& index, int ndim) {
  std::vector<IndexItem> items;
  auto is_ellipsis = [](const Expr& e) { return e.kind == ExprKind::Const && e.global.kind == K::Ellipsis; };
  size_t given = index.kind == ExprKind::Tuple ? index.operands.size() : 1;
  auto one = [&](const Expr& e) {
    if (is_ellipsis(e)) {  // whole slices for the dimensions the other indices leave
      IndexItem whole;
      whole.is_slice = true;
      for (int d = static_cast<int>(given) - 1; d < ndim; ++d) items.push_back(whole);
      return;
    }
    IndexItem item;
    if (e.kind == ExprKind::Slice) {
      item.is_slice = true;
      Value** parts[] = {&item.start, &item.stop, &item.step};
      for (int i = 0; i < 3; ++i) {
        const auto& p = e.operands[i];
        if (p && p->type->kind() != TypeKind::None) *parts[i] = lower_as(*p, types::int64());
      }
    } else {
      item.index = lower_as(e, types::int64());
      item.non_negative = non_negative_.expr(e);
    }
    items.push_back(item);
  };
  if (index.kind == ExprKind::Tuple) {
    for (auto& e : index.operands) one(*e);
  } else if (index.type->is_tuple()) {  // a tuple of integers held in a variable
    Value* t = lower_expr(index);
    for (size_t i = 0; i < index.type->count(); ++i) {
      IndexItem item;
      item.index = cast(b_.CreateExtractValue(t, i), index.type->element(i), types::int64());
      items.push_back(item);
    }
  } else {
    one(index);
  }
  return items;
}

Value* FunctionLowering::array_getitem(const Expr& e) {
  TypeRef aty = e.operands[0]->type;
  Value* ary = lower_expr(*e.operands[0]);
  std::vector<IndexItem> items = lower_index(*e.operands[1], aty->ndim());
  if (state_.options.bounds_check || state_.options.shared_checks) index_site_ = index_site(*e.operands[0]);
  Value* out = e.type->kind() != TypeKind::Array
                   ? load_element(item_pointer(ary, aty, items), aty->element(0), aty->aligned() ? 0 : 1)
                   : array_view(ary, aty, items, e.type);
  index_site_.clear();
  return out;
}

// The address of the element selected by integer index items.
Value* FunctionLowering::item_pointer(Value* ary, TypeRef aty, const std::vector<IndexItem>& items) {
  std::vector<Value*> idx;
  std::vector<bool> known;
  for (const IndexItem& it : items) {
    idx.push_back(it.index);
    known.push_back(it.non_negative);
  }
  return element_pointer(ary, aty, idx, known);
}

// p[i] through a CPointer(T): the T at byte offset i * sizeof(T).
Value* FunctionLowering::pointer_item(const Expr& e) {
  TypeRef pointee = e.operands[0]->type->element(0);
  Value* base = lower_expr(*e.operands[0]);
  Value* index = lower_as(*e.operands[1], types::int64());
  return b_.CreateGEP(state_.model.storage_type(pointee), base, index);
}

void FunctionLowering::array_setitem(const Expr& target, Value* value, TypeRef type) {
  TypeRef aty = target.operands[0]->type;
  if (aty->kind() == TypeKind::CPointer) {
    TypeRef pointee = aty->element(0);
    store_element(pointer_item(target), cast(value, type, pointee), pointee);
    return;
  }
  Value* ary = lower_expr(*target.operands[0]);
  std::vector<IndexItem> items = lower_index(*target.operands[1], aty->ndim());
  if (state_.options.bounds_check || state_.options.shared_checks) index_site_ = index_site(*target.operands[0]);
  if (target.type->kind() == TypeKind::Array) {  // a slice: every element of the view
    assign_to_view(array_view(ary, aty, items, target.type), target.type, value, type);
    index_site_.clear();
    return;
  }
  Value* ptr = item_pointer(ary, aty, items);
  TypeRef dtype = aty->element(0);
  store_element(ptr, cast(value, type, dtype), dtype, aty->aligned() ? 0 : 1);
  index_site_.clear();
}

// A view: integer indices drop a dimension, slices keep it with Python's
// start/stop/step clamping; trailing dimensions are taken whole.
Value* FunctionLowering::array_view(Value* ary, TypeRef aty, const std::vector<IndexItem>& items, TypeRef result) {
  Value* data = array_field(ary, kData);
  Value* offset = b_.getInt64(0);
  std::vector<Value*> shape, strides;
  Value* zero = b_.getInt64(0);
  Value* one = b_.getInt64(1);
  // Bounds checks: the integer indices (a view's out-of-bounds one is reported, and the view made empty).
  std::vector<Value*> checked_index, checked_shape;
  Value* inside = b_.getTrue();
  for (int d = 0; d < aty->ndim(); ++d) {
    Value* extent = array_field(ary, kShape, d);
    Value* stride = array_field(ary, kStrides, d);
    if (d >= static_cast<int>(items.size())) {
      shape.push_back(extent);
      strides.push_back(stride);
      continue;
    }
    const IndexItem& it = items[d];
    if (!it.is_slice) {
      Value* wrapped = wrap_index(it.index, extent);
      offset = b_.CreateAdd(offset, b_.CreateMul(wrapped, stride));
      if (state_.options.bounds_check) {
        checked_index.push_back(it.index);
        checked_shape.push_back(extent);
        inside = b_.CreateAnd(inside, b_.CreateICmpULT(wrapped, extent));
      }
      continue;
    }
    Value* step = it.step ? it.step : one;
    Value* up = b_.CreateICmpSGT(step, zero);
    // Defaults and clamping as Python's PySlice_AdjustIndices.
    auto adjust = [&](Value* v, Value* dflt_up, Value* dflt_down) -> Value* {
      Value* dflt = b_.CreateSelect(up, dflt_up, dflt_down);
      if (v == nullptr) return dflt;
      Value* lo = b_.CreateSelect(up, zero, b_.getInt64(-1));
      Value* hi = b_.CreateSelect(up, extent, b_.CreateSub(extent, one));
      Value* wrapped = b_.CreateSelect(b_.CreateICmpSLT(v, zero), b_.CreateAdd(v, extent), v);
      Value* clamped_lo = b_.CreateSelect(b_.CreateICmpSLT(wrapped, lo), lo, wrapped);
      return b_.CreateSelect(b_.CreateICmpSGT(clamped_lo, hi), hi, clamped_lo);
    };
    Value* start = adjust(it.start, zero, b_.CreateSub(extent, one));
    Value* stop = adjust(it.stop, extent, b_.getInt64(-1));
    Value* span_up = b_.CreateSub(stop, start);
    Value* span_down = b_.CreateSub(start, stop);
    Value* abs_step = b_.CreateSelect(up, step, b_.CreateNeg(step));
    Value* span = b_.CreateSelect(up, span_up, span_down);
    Value* len = b_.CreateSelect(b_.CreateICmpSGT(span, zero),
                                 b_.CreateSDiv(b_.CreateAdd(span, b_.CreateSub(abs_step, one)), abs_step), zero);
    offset = b_.CreateAdd(offset, b_.CreateMul(start, stride));
    shape.push_back(len);
    strides.push_back(b_.CreateMul(stride, step));
  }
  if (!checked_index.empty()) {
    std::vector<Value*> values{offset}, zeros{zero};
    values.insert(values.end(), shape.begin(), shape.end());
    zeros.resize(values.size(), zero);
    report_outside(inside, data, checked_index, checked_shape, values, zeros);
    offset = values[0];
    std::copy(values.begin() + 1, values.end(), shape.begin());
  }
  Value* new_data = b_.CreateInBoundsGEP(b_.getInt8Ty(), data, offset);
  return make_array(result, new_data, shape, strides);
}

Value* FunctionLowering::array_attribute(Value* ary, TypeRef aty, const std::string& attr) {
  if (attr == "shape" || attr == "strides") {
    int field = attr == "shape" ? kShape : kStrides;
    std::vector<Value*> items;
    for (int d = 0; d < aty->ndim(); ++d) items.push_back(array_field(ary, field, d));
    return build_tuple(items, types::uni_tuple(types::int64(), aty->ndim()));
  }
  if (attr == "size") return array_field(ary, kNitems);
  if (attr == "itemsize") return array_field(ary, kItemsize);
  if (attr == "nbytes") return b_.CreateMul(array_field(ary, kNitems), array_field(ary, kItemsize));
  if (attr == "ndim") return b_.getInt64(aty->ndim());
  fail(ErrorKind::Internal, "no lowering for array attribute " + attr);
}

// cuda.shared.array / cuda.local.array: a static buffer (shared: the target's,
// one per call site and block; local: an entry-block alloca), or for shape 0 the
// dynamic shared memory given at launch.
Value* FunctionLowering::memory_array(const Expr& e, const std::string& name) {
  TypeRef aty = e.type;
  TypeRef dtype = aty->element(0);
  llvm::Type* elem = state_.model.storage_type(dtype);  // (a record's bytes: its value is only their address)
  int64_t itemsize = types::itemsize(dtype);
  std::vector<int64_t> dims = *ir::literal_shape(*e.operands[1]);
  std::vector<Value*> shape, strides;
  if (name == "cuda.shared.array" && dims.size() == 1 && dims[0] == 0) {
    auto [data, bytes] = target().dynamic_shared(b_, context_, state_.module);
    shape.push_back(b_.CreateUDiv(bytes, b_.getInt64(itemsize)));
    strides.push_back(b_.getInt64(itemsize));
    return make_array(aty, data, shape, strides);
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  auto* buffer_ty = llvm::ArrayType::get(elem, static_cast<uint64_t>(count));
  Value* data;
  if (name == "cuda.shared.array") {
    data = target().static_shared(b_, context_, state_.module, buffer_ty);
  } else {
    llvm::AllocaInst* a = entry_alloca(buffer_ty, "local.array");
    a->setAlignment(llvm::Align(16));
    data = a;
  }
  return make_c_array(aty, data, dims);
}

// An array over a C-contiguous buffer of a static shape.
Value* FunctionLowering::make_c_array(TypeRef aty, Value* data, const std::vector<int64_t>& dims) {
  std::vector<Value*> shape, strides;
  int64_t stride = types::itemsize(aty->element(0));
  for (size_t d = dims.size(); d-- > 0;) {
    shape.insert(shape.begin(), b_.getInt64(dims[d]));
    strides.insert(strides.begin(), b_.getInt64(stride));
    stride *= dims[d];
  }
  return make_array(aty, data, shape, strides);
}

// The element count of an array (its shape collected into `shape`).
Value* FunctionLowering::element_count(Value* ary, int ndim, std::vector<Value*>& shape) {
  Value* total = b_.getInt64(1);
  for (int d = 0; d < ndim; ++d) {
    shape.push_back(array_field(ary, kShape, d));
    total = b_.CreateMul(total, shape.back(), "", true, true);
  }
  return total;
}

std::vector<Value*> FunctionLowering::c_order_index(Value* linear, const std::vector<Value*>& shape) {
  const int n = static_cast<int>(shape.size());
  std::vector<Value*> index(shape.size());
  for (int d = n - 1; d >= 0; --d) {  // C order: the last axis varies fastest
    if (d == 0) {
      index[d] = linear;
    } else {
      index[d] = b_.CreateURem(linear, shape[d]);
      linear = b_.CreateUDiv(linear, shape[d]);
    }
  }
  return index;
}

// numba-cuda captures a global or closure device array by reference: the kernel reads and writes its memory
// through the pointer it had when the kernel was compiled.
Value* FunctionLowering::captured_array(const ir::GlobalValue& g) {
  std::vector<Value*> shape, strides;
  for (int64_t d : g.shape) shape.push_back(b_.getInt64(d));
  for (int64_t s : g.strides) strides.push_back(b_.getInt64(s));
  Value* data = b_.CreateIntToPtr(b_.getInt64(static_cast<uint64_t>(g.int_value)), llvm::PointerType::get(ctx_, 0));
  return make_array(g.type, data, shape, strides);
}

// A global numpy array used in a kernel is frozen into constant memory.
Value* FunctionLowering::constant_array(const ir::GlobalValue& g) {
  TypeRef aty = g.type;
  TypeRef dtype = aty->element(0);
  llvm::Type* elem = state_.model.data_type(dtype);
  int64_t itemsize = types::itemsize(dtype);
  int64_t count = static_cast<int64_t>(g.data.size()) / itemsize;
  llvm::Constant* init;
  if (dtype->kind() == TypeKind::Record) {  // its bytes, as numpy lays them out
    init = llvm::ConstantDataArray::getRaw(g.data, g.data.size(), b_.getInt8Ty());
  } else if (dtype->is_complex()) {
    llvm::Type* part = elem->getStructElementType(0);
    init = llvm::ConstantDataArray::getRaw(g.data, count * 2, part);
    elem = part;
    count *= 2;
  } else {
    init = llvm::ConstantDataArray::getRaw(g.data, count, elem);
  }
  return make_c_array(aty, constant_memory(init, "_cudapy_cmem", 16), g.shape);
}

// A global record (numpy's np.void, a library type's value) is frozen into constant memory: the value is its address.
Value* FunctionLowering::constant_record(const ir::GlobalValue& g) {
  return constant_memory(llvm::ConstantDataArray::getRaw(g.data, g.data.size(), b_.getInt8Ty()), "_cudapy_cmem", 16);
}

// Data frozen into constant memory (a global array's, a record's, a string's characters): a read-only global of the
// constant address space, by its generic address. `mergeable`: its address is not significant (identical ones may
// become one).
Value* FunctionLowering::constant_memory(llvm::Constant* init, const char* name, int64_t align, bool mergeable) {
  auto* g = new llvm::GlobalVariable(state_.module, init->getType(), true, llvm::GlobalValue::InternalLinkage, init,
                                     name, nullptr, llvm::GlobalValue::NotThreadLocal, 4);
  g->setAlignment(llvm::Align(align));
  if (mergeable) g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return b_.CreateAddrSpaceCast(g, llvm::PointerType::get(ctx_, 0));
}

}  // namespace cujit::lowering
