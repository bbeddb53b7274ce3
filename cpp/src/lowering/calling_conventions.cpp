// numba's data model and the three calling conventions (docs/numba_abi.md: Data model, Calling conventions): the numba
// device ABI (i32 status, return value through the first pointer), the C ABI
// (value returned directly) and the kernel ABI (void, PTX_Kernel).
#include <llvm/IR/Constants.h>

#include "function_lowering.h"
#include "record_abi.h"
#include "vector_abi.h"

namespace cujit::lowering {

using llvm::Type;
using llvm::Value;

Type* DataModel::value_type(TypeRef t) const {
  switch (t->kind()) {
    case TypeKind::Boolean:
    case TypeKind::BooleanLiteral:
      return Type::getInt1Ty(ctx_);
    case TypeKind::Integer:
    case TypeKind::IntegerLiteral:
      return Type::getIntNTy(ctx_, t->bitwidth());
    case TypeKind::Datetime:
    case TypeKind::Timedelta:
      return Type::getInt64Ty(ctx_);  // a count of its unit
    case TypeKind::Float:
      return t->bitwidth() == 16   ? Type::getHalfTy(ctx_)
             : t->bitwidth() == 32 ? Type::getFloatTy(ctx_)
                                   : Type::getDoubleTy(ctx_);
    case TypeKind::Complex: {
      Type* part = value_type(types::float_(t->bitwidth() / 2));
      return llvm::StructType::get(ctx_, {part, part});
    }
    case TypeKind::UniTuple:
      return llvm::ArrayType::get(value_type(t->element(0)), t->count());
    case TypeKind::Tuple: {
      std::vector<Type*> elems;
      for (TypeRef e : t->elements()) elems.push_back(value_type(e));
      return llvm::StructType::get(ctx_, elems);
    }
    case TypeKind::CPointer:
    case TypeKind::VoidPtr:
    case TypeKind::Record:
    case TypeKind::CharSeq:
    case TypeKind::UnicodeCharSeq:
      return llvm::PointerType::get(ctx_, 0);  // a record (a fixed-width string) is the address of its bytes
    case TypeKind::None:
      return Type::getInt8Ty(ctx_);
    case TypeKind::Range: {  // {start, stop, step}
      Type* index = value_type(t->element(0));
      return llvm::StructType::get(ctx_, {index, index, index});
    }
    case TypeKind::Opaque:
      return Type::getInt64Ty(ctx_);  // handles (a cooperative grid group)
    case TypeKind::NumberClass:
    case TypeKind::Function:
    case TypeKind::Dispatcher:
      return Type::getInt8Ty(ctx_);  // compile-time values: nothing is read from them
    case TypeKind::Optional:
      return llvm::StructType::get(ctx_, {value_type(t->element(0)), Type::getInt1Ty(ctx_)});
    case TypeKind::BFloat16:
      return Type::getInt16Ty(ctx_);  // its bits
    case TypeKind::FP8:
      return Type::getInt8Ty(ctx_);  // its bits
    case TypeKind::FP8Packed:
      return Type::getIntNTy(ctx_, static_cast<unsigned>(t->bitwidth()));  // its bits
    case TypeKind::Vector:
      return vector_value_type(ctx_, t);
    case TypeKind::Array: {
      // {meminfo, parent, nitems, itemsize, data, shape[ndim], strides[ndim]}
      auto* ptr = llvm::PointerType::get(ctx_, 0);
      auto* i64 = Type::getInt64Ty(ctx_);
      auto* dims = llvm::ArrayType::get(i64, t->ndim());
      return llvm::StructType::get(ctx_, {ptr, ptr, i64, i64, ptr, dims, dims});
    }
    default:
      fail(ErrorKind::Internal, "no data model for type " + t->name());
  }
}

Type* DataModel::data_type(TypeRef t) const {
  switch (t->kind()) {
    case TypeKind::Boolean:
    case TypeKind::BooleanLiteral:
      return Type::getInt8Ty(ctx_);
    case TypeKind::Float:
      if (t->bitwidth() == 16) return Type::getInt16Ty(ctx_);
      return value_type(t);
    case TypeKind::UniTuple:
      return llvm::ArrayType::get(data_type(t->element(0)), t->count());
    case TypeKind::Tuple: {
      std::vector<Type*> elems;
      for (TypeRef e : t->elements()) elems.push_back(data_type(e));
      return llvm::StructType::get(ctx_, elems);
    }
    case TypeKind::Optional:
      return llvm::StructType::get(ctx_, {data_type(t->element(0)), Type::getInt8Ty(ctx_)});
    case TypeKind::Vector:
      return vector_data_type(ctx_, t);  // CUDA's layout (vector_abi.h)
    default:
      return value_type(t);
  }
}

Type* DataModel::storage_type(TypeRef t) const {
  if (t->kind() == TypeKind::Record || t->kind() == TypeKind::NestedArray || types::is_charseq(t))
    return llvm::ArrayType::get(Type::getInt8Ty(ctx_), static_cast<uint64_t>(types::itemsize(t)));
  return data_type(t);
}

void DataModel::flatten_arg_types(TypeRef t, std::vector<Type*>& out, bool records_by_value) const {
  for (const types::ArgumentLeaf& leaf : types::argument_leaves(t)) {
    if (records_by_value && leaf.type->kind() == TypeKind::Record) {
      out.push_back(record_by_value_type(ctx_, leaf.type));
      continue;
    }
    if (leaf.type->kind() != TypeKind::Array) {
      out.push_back(data_type(leaf.type));
      continue;
    }
    auto* st = llvm::cast<llvm::StructType>(value_type(leaf.type));
    for (unsigned i = 0; i < kShape; ++i) out.push_back(st->getElementType(i));
    for (int d = 0; d < 2 * leaf.type->ndim(); ++d) out.push_back(Type::getInt64Ty(ctx_));
  }
}

Value* DataModel::value_to_data(llvm::IRBuilder<>& b, Value* v, TypeRef t) const {
  if (t->is_boolean()) return b.CreateZExt(v, Type::getInt8Ty(ctx_));
  if (t->kind() == TypeKind::Optional) {
    Value* out = llvm::UndefValue::get(data_type(t));
    out = b.CreateInsertValue(out, value_to_data(b, b.CreateExtractValue(v, 0), t->element(0)), 0);
    return b.CreateInsertValue(out, value_to_data(b, b.CreateExtractValue(v, 1), types::boolean()), 1);
  }
  if (t->is_float() && t->bitwidth() == 16) return b.CreateBitCast(v, Type::getInt16Ty(ctx_));
  if (t->kind() == TypeKind::Vector) return vector_to_data(b, v, t);
  if (t->is_tuple()) {
    Value* out = llvm::UndefValue::get(data_type(t));
    for (size_t i = 0; i < t->count(); ++i)
      out = b.CreateInsertValue(out, value_to_data(b, b.CreateExtractValue(v, i), t->element(i)), i);
    return out;
  }
  return v;
}

Value* DataModel::data_to_value(llvm::IRBuilder<>& b, Value* v, TypeRef t) const {
  if (t->is_boolean()) return b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (t->kind() == TypeKind::Optional) {
    Value* out = llvm::UndefValue::get(value_type(t));
    out = b.CreateInsertValue(out, data_to_value(b, b.CreateExtractValue(v, 0), t->element(0)), 0);
    return b.CreateInsertValue(out, data_to_value(b, b.CreateExtractValue(v, 1), types::boolean()), 1);
  }
  if (t->is_float() && t->bitwidth() == 16) return b.CreateBitCast(v, Type::getHalfTy(ctx_));
  if (t->kind() == TypeKind::Vector) return vector_from_data(b, v, t);
  if (t->is_tuple()) {
    Value* out = llvm::UndefValue::get(value_type(t));
    for (size_t i = 0; i < t->count(); ++i)
      out = b.CreateInsertValue(out, data_to_value(b, b.CreateExtractValue(v, i), t->element(i)), i);
    return out;
  }
  return v;
}

void DataModel::flatten_arg_values(llvm::IRBuilder<>& b, Value* v, TypeRef t, std::vector<Value*>& out,
                                   bool records_by_value) const {
  for (const types::ArgumentLeaf& leaf : types::argument_leaves(t)) {
    Value* part = leaf.path.empty() ? v : b.CreateExtractValue(v, leaf.path);
    if (records_by_value && leaf.type->kind() == TypeKind::Record) {  // its bytes, as the C struct
      out.push_back(
          b.CreateAlignedLoad(record_by_value_type(ctx_, leaf.type), part, llvm::Align(types::alignment(leaf.type))));
      continue;
    }
    if (leaf.type->kind() != TypeKind::Array) {
      out.push_back(value_to_data(b, part, leaf.type));
      continue;
    }
    for (unsigned i = 0; i < kShape; ++i) out.push_back(b.CreateExtractValue(part, i));
    for (unsigned f = kShape; f <= kStrides; ++f)
      for (int d = 0; d < leaf.type->ndim(); ++d)
        out.push_back(b.CreateExtractValue(part, {f, static_cast<unsigned>(d)}));
  }
}

Value* DataModel::unflatten_args(llvm::IRBuilder<>& b, TypeRef t, llvm::Function::arg_iterator& next,
                                 bool records_by_value) const {
  if (t->kind() == TypeKind::None) return llvm::ConstantInt::get(Type::getInt8Ty(ctx_), 0);
  Value* out = llvm::UndefValue::get(value_type(t));
  for (const types::ArgumentLeaf& leaf : types::argument_leaves(t)) {
    Value* part;
    if (leaf.type->kind() == TypeKind::Array) {
      part = llvm::UndefValue::get(value_type(leaf.type));
      for (unsigned i = 0; i < kShape; ++i) part = b.CreateInsertValue(part, &*next++, i);
      for (unsigned f = kShape; f <= kStrides; ++f)
        for (int d = 0; d < leaf.type->ndim(); ++d)
          part = b.CreateInsertValue(part, &*next++, {f, static_cast<unsigned>(d)});
    } else if (records_by_value && leaf.type->kind() == TypeKind::Record) {  // the C struct, kept in a stack slot
      llvm::AllocaInst* slot = b.CreateAlloca(record_by_value_type(ctx_, leaf.type), nullptr, "record.arg");
      slot->setAlignment(llvm::Align(types::alignment(leaf.type)));
      b.CreateStore(&*next++, slot);
      part = slot;
    } else {
      part = data_to_value(b, &*next++, leaf.type);
    }
    out = leaf.path.empty() ? part : b.CreateInsertValue(out, part, leaf.path);
  }
  return out;
}

// launch_bounds -> .maxntid / .minnctapersm / .maxclusterrank, through the
// nvvm.annotations NVPTX reads.
void FunctionLowering::annotate_launch_bounds(llvm::Function* f) {
  const LoweringOptions& o = state_.options;
  if (o.max_threads <= 0 && o.min_blocks <= 0 && o.max_cluster <= 0) return;
  llvm::NamedMDNode* annotations = state_.module.getOrInsertNamedMetadata("nvvm.annotations");
  auto add = [&](const char* key, int value) {
    if (value <= 0) return;
    llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx_, key),
                            llvm::ConstantAsMetadata::get(b_.getInt32(value))};
    annotations->addOperand(llvm::MDNode::get(ctx_, md));
  };
  add("maxntidx", o.max_threads);
  if (o.max_threads > 0) {
    add("maxntidy", 1);
    add("maxntidz", 1);
  }
  add("minctasm", o.min_blocks);
  add("maxclusterrank", o.max_cluster);
}

llvm::Function* FunctionLowering::declare() {
  const DataModel& m = state_.model;
  std::vector<Type*> params;
  bool has_context = state_.options.target->has_context();
  if (has_context) params.push_back(llvm::PointerType::get(ctx_, 0));  // the target's context
  if (!tf_.c_abi && !tf_.kernel) params.push_back(llvm::PointerType::get(ctx_, 0));  // .ret
  for (TypeRef a : tf_.sig.args) m.flatten_arg_types(a, params, tf_.c_abi);
  Type* ret;
  if (tf_.kernel)
    ret = Type::getVoidTy(ctx_);
  else if (!tf_.c_abi)
    ret = Type::getInt32Ty(ctx_);
  else if (tf_.sig.return_type->kind() == TypeKind::None)
    ret = Type::getVoidTy(ctx_);
  else if (tf_.sig.return_type->kind() == TypeKind::Record)
    ret = record_by_value_type(ctx_, tf_.sig.return_type);
  else
    ret = m.data_type(tf_.sig.return_type);
  auto* fty = llvm::FunctionType::get(ret, params, false);
  auto linkage = is_top_ || tf_.external ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage;
  llvm::Function* f = llvm::Function::Create(fty, linkage, tf_.symbol, state_.module);
  if (f->getName() != tf_.symbol)
    fail(ErrorKind::Internal, "symbol '" + tf_.symbol + "' is defined twice in one module");
  f->addFnAttr(llvm::Attribute::NoUnwind);
  if (tf_.always_inline) f->addFnAttr(llvm::Attribute::AlwaysInline);
  if (tf_.kernel && !has_context) {
    f->setCallingConv(llvm::CallingConv::PTX_Kernel);
    annotate_launch_bounds(f);
  }
  auto arg = f->arg_begin();
  if (has_context) {
    arg->setName(".context");
    arg->addAttr(llvm::Attribute::NoAlias);
    ++arg;
  }
  if (!tf_.c_abi && !tf_.kernel) {
    arg->setName(".ret");
    // A record's slot may be an argument too: the record a previous call at the caller's site returned.
    if (tf_.sig.return_type->kind() != TypeKind::Record) arg->addAttr(llvm::Attribute::NoAlias);
    arg->addAttr(llvm::Attribute::getWithCaptureInfo(ctx_, llvm::CaptureInfo::none()));
    ++arg;
  }
  for (size_t i = 0; i < tf_.sig.args.size(); ++i) {
    std::vector<Type*> parts;
    m.flatten_arg_types(tf_.sig.args[i], parts, tf_.c_abi);
    const std::string& name = fn_.vars[fn_.params[i]].name;
    for (size_t p = 0; p < parts.size(); ++p, ++arg) {
      arg->setName(parts.size() == 1 ? name : name + "." + std::to_string(p));
      // An array flattens to meminfo, parent, nitems, itemsize, data, shape..., strides...
      if (p == kData && tf_.kernel && is_top_ && state_.options.noalias_arrays &&
          tf_.sig.args[i]->kind() == TypeKind::Array)
        arg->addAttr(llvm::Attribute::NoAlias);
      // A kernel's array has fewer than 2**62 items along each axis: `while i < a.size: ... i += step` then cannot
      // wrap, so LLVM counts the loop's trips (and unrolls it, codegen/target.cpp) as nvcc does a C loop's.
      if (tf_.kernel && is_top_ && tf_.sig.args[i]->kind() == TypeKind::Array &&
          (p == kNitems || (p >= kShape && p < kShape + static_cast<size_t>(tf_.sig.args[i]->ndim()))))
        arg->addAttr(llvm::Attribute::get(ctx_, llvm::Attribute::Range,
                                          llvm::ConstantRange(llvm::APInt(64, 0), llvm::APInt(64, 1ULL << 62))));
    }
  }
  if (state_.options.fastmath) {
    for (const char* a :
         {"unsafe-fp-math", "no-infs-fp-math", "no-nans-fp-math", "no-signed-zeros-fp-math", "approx-func-fp-math"})
      f->addFnAttr(a, "true");
    f->addFnAttr("denormal-fp-math-f32", "preserve-sign,preserve-sign");
  }
  // numba emits an environment global for every numba-ABI function.
  if (is_top_ && !tf_.env_symbol.empty()) {
    auto* ptr = llvm::PointerType::get(ctx_, 0);
    auto* env = new llvm::GlobalVariable(state_.module, ptr, false, llvm::GlobalValue::CommonLinkage,
                                         llvm::ConstantPointerNull::get(ptr), tf_.env_symbol, nullptr,
                                         llvm::GlobalValue::NotThreadLocal, has_context ? 0 : 1);
    env->setAlignment(llvm::Align(8));
  }
  return f;
}

void FunctionLowering::bind_parameters() {
  auto arg = llfn_->arg_begin();
  if (state_.options.target->has_context()) context_ = &*arg++;
  if (!tf_.c_abi && !tf_.kernel) ret_slot_ = &*arg++;
  for (size_t i = 0; i < tf_.sig.args.size(); ++i) {
    TypeRef t = tf_.sig.args[i];
    Value* v = state_.model.unflatten_args(b_, t, arg, tf_.c_abi);

    int var = fn_.params[i];
    if (fn_.vars[var].type != nullptr) write_variable(var, v, t);
  }
}

void FunctionLowering::emit_return(Value* value, TypeRef type) {
  TypeRef rt = tf_.sig.return_type;
  if (tf_.kernel) {
    b_.CreateRetVoid();
    return;
  }
  bool returns_none = rt->kind() == TypeKind::None;
  Value* data = nullptr;
  if (!returns_none) {
    Value* v = value ? cast(value, type, rt) : zero_value(rt);
    data = state_.model.value_to_data(b_, v, rt);
  }
  if (tf_.c_abi) {
    if (returns_none)
      b_.CreateRetVoid();
    else if (rt->kind() == TypeKind::Record)  // the C struct of its bytes
      b_.CreateRet(b_.CreateAlignedLoad(record_by_value_type(ctx_, rt), data, llvm::Align(types::alignment(rt))));
    else
      b_.CreateRet(data);
    return;
  }
  if (rt->kind() == TypeKind::Record) {  // a record is returned by value: its bytes, into the caller's slot
    llvm::Align align(types::alignment(rt));
    b_.CreateMemMove(ret_slot_, align, data, align, types::itemsize(rt));  // (it may be the slot itself)
  } else if (!returns_none) {
    b_.CreateStore(data, ret_slot_);
  }
  b_.CreateRet(b_.getInt32(0));
}

// A call lowered with the callee's ABI (docs/numba_abi.md: Calling conventions): numba's return slot and
// status, or a plain C call.
Value* FunctionLowering::emit_device_call(const ir::Expr& call, std::vector<Value*> args) {
  const ir::TypedFunction& callee = *call.callee;
  llvm::Function* target = get_or_lower(state_, callee, false);
  TypeRef rt = callee.sig.return_type;
  if (callee.c_abi) {
    std::vector<Value*> flat;
    if (context_ != nullptr) flat.push_back(context_);
    for (size_t i = 0; i < args.size(); ++i)
      state_.model.flatten_arg_values(b_, args[i], callee.sig.args[i], flat, /*records_by_value=*/true);
    Value* result = b_.CreateCall(target, flat);
    if (rt->kind() == TypeKind::None) return b_.getInt8(0);
    if (rt->kind() == TypeKind::Record) {  // the C struct, kept in a slot of this frame
      llvm::AllocaInst* slot = entry_alloca(result->getType(), "callee.record");
      slot->setAlignment(llvm::Align(types::alignment(rt)));
      b_.CreateStore(result, slot);
      return slot;
    }
    return state_.model.data_to_value(b_, result, rt);
  }
  // A record comes back by value: the slot holds its bytes, and the record is the slot.
  const bool record = rt->kind() == TypeKind::Record;
  Type* slot_type = rt->kind() == TypeKind::None ? Type::getInt8Ty(ctx_)
                    : record                     ? state_.model.storage_type(rt)
                                                 : state_.model.data_type(rt);
  llvm::AllocaInst* slot = entry_alloca(slot_type, "callee.ret");
  // (A record's slot is not cleared first: an argument may be the record a previous call at this site returned.)
  if (record)
    slot->setAlignment(llvm::Align(types::alignment(rt)));
  else
    b_.CreateStore(llvm::Constant::getNullValue(slot_type), slot);
  std::vector<Value*> flat;
  if (context_ != nullptr) flat.push_back(context_);
  flat.push_back(slot);
  for (size_t i = 0; i < args.size(); ++i) state_.model.flatten_arg_values(b_, args[i], callee.sig.args[i], flat);
  Value* status = b_.CreateCall(target, flat);
  // A numba-ABI caller propagates a callee's error status; others ignore it.
  if (!tf_.c_abi) {
    llvm::BasicBlock* fail_bb = llvm::BasicBlock::Create(ctx_, "callee.error", llfn_);
    llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "callee.ok", llfn_);
    b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(0)), fail_bb, ok_bb);
    b_.SetInsertPoint(fail_bb);
    return_status(status);
    b_.SetInsertPoint(ok_bb);
  }
  if (rt->kind() == TypeKind::None) return b_.getInt8(0);
  if (record) return slot;
  return state_.model.data_to_value(b_, b_.CreateLoad(slot_type, slot), rt);
}

}  // namespace cujit::lowering
