// A host kernel's code as a relocatable object (host_object.h): emitted from the
// optimised module by this machine's backend, loaded by ORC's LLJIT (JITLink)
// beside the host runtime's symbols. A fresh compile and a disk cache entry
// take the same path, so a cached kernel is the same code.
#include "host_object.h"

#include <mutex>

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include "cujit/hostgen.h"
#include "host_checks.h"
#include "host_interrupts.h"
#include "host_math.h"
#include "host_print.h"

namespace cujit::hostgen {

Error jit_error(const std::string& what, llvm::Error e) {
  return Error{ErrorKind::Runtime, "the CPU target's JIT failed (" + what + "): " + llvm::toString(std::move(e)), {}};
}

namespace {

// The address of the global `name` the JIT defines, or null when the object has none.
template <typename T>
T* find_global(llvm::orc::LLJIT& jit, const char* name) {
  auto found = jit.lookup(name);
  if (!found) {
    llvm::consumeError(found.takeError());
    return nullptr;
  }
  return found->toPtr<T*>();
}

}  // namespace

Expected<llvm::orc::JITTargetMachineBuilder> host_machine_builder(bool opt) {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return jit_error("detecting the host", jtmb.takeError());
  jtmb->setCodeGenOptLevel(opt ? llvm::CodeGenOptLevel::Aggressive : llvm::CodeGenOptLevel::None);
  // What LLJIT itself asks of the code it links with JITLink (x86-64 and AArch64 ELF).
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  return std::move(*jtmb);
}

std::string host_machine_id() {
  static const std::string id = [] {  // (the same for the process's life: read once)
    auto jtmb = host_machine_builder(true);
    if (!jtmb) return std::string();
    return jtmb->getTargetTriple().str() + " " + jtmb->getCPU() + " " + jtmb->getFeatures().getString();
  }();
  return id;
}

uint64_t host_global_address(const HostKernel& kernel, const std::string& name) {
  return kernel.jit ? reinterpret_cast<uint64_t>(find_global<void>(*kernel.jit, name.c_str())) : 0;
}

Expected<std::string> emit_object(llvm::Module& module, llvm::TargetMachine& tm, const HostFacts& facts) {
  auto* i64 = llvm::Type::getInt64Ty(module.getContext());
  auto* type = llvm::ArrayType::get(i64, 4);
  auto* value = llvm::ConstantArray::get(
      type, {llvm::ConstantInt::get(i64, facts.frame_bytes), llvm::ConstantInt::get(i64, facts.block_thread_bytes),
             llvm::ConstantInt::get(i64, facts.uses_barrier ? 1 : 0),
             llvm::ConstantInt::get(i64, static_cast<uint64_t>(facts.blocks_axis))});
  new llvm::GlobalVariable(module, type, true, llvm::GlobalValue::ExternalLinkage, value, kHostFactsSymbol);
  llvm::orc::SimpleCompiler compile(tm);
  auto object = compile(module);
  if (!object) return jit_error("emitting the object", object.takeError());
  return std::string((*object)->getBuffer());
}

Expected<std::shared_ptr<HostKernel>> load_object(std::string object, const std::string& symbol,
                                                  const std::string& qualname) {
  auto jtmb = host_machine_builder(true);
  if (!jtmb) return jtmb.error();
  auto made = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!made) return jit_error("creating the JIT", made.takeError());
  llvm::orc::LLJIT& jit = **made;
  if (auto e = add_host_math(jit)) return jit_error("defining the host's libdevice", std::move(e));
  if (auto e = add_host_print(jit)) return jit_error("defining the host's vprintf", std::move(e));
  if (auto e = add_host_checks(jit)) return jit_error("defining the checks' recorder", std::move(e));
  if (auto e = add_shared_checks(jit)) return jit_error("defining the debug checks' recorder", std::move(e));
  if (auto e = add_interrupt_symbols(jit)) return jit_error("defining the interrupt flag", std::move(e));
  if (auto e = jit.addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, symbol)))
    return jit_error("adding the object", std::move(e));

  auto kernel = std::make_shared<HostKernel>();
  kernel->symbol = symbol;
  kernel->qualname = qualname;
  auto entry = jit.lookup(kHostEntrySymbol);  // links the object: an unresolved symbol fails here
  if (!entry) return jit_error("finding the kernel's entry", entry.takeError());
  kernel->entry = entry->toPtr<HostKernelEntry>();
  const uint64_t* facts = find_global<const uint64_t>(jit, kHostFactsSymbol);
  if (facts == nullptr)
    return Error{ErrorKind::Runtime,
                 "the CPU target's object of '" + qualname + "' has no facts (" + std::string(kHostFactsSymbol) +
                     "): not one cujit made",
                 {}};
  kernel->frame_bytes = facts[0];
  kernel->block_thread_bytes = facts[1];
  kernel->uses_barrier = facts[2] != 0;
  kernel->blocks_axis = facts[3] == 1 ? 1 : 0;
  kernel->block_entry = reinterpret_cast<HostKernelEntry>(find_global<void>(jit, kHostBlockEntrySymbol));
  if (const uint64_t* shared = find_global<const uint64_t>(jit, target::kHostSharedBytesSymbol))
    kernel->static_shared_bytes = *shared;
  kernel->index_error = find_global<target::HostIndexError>(jit, target::kHostIndexErrorSymbol);
  if (auto** state = find_global<HostSharedChecks*>(jit, target::kHostSharedChecksSymbol)) {
    kernel->shared_checks = make_shared_checks();
    *state = kernel->shared_checks.get();
  }
  kernel->object = std::move(object);
  kernel->jit = std::move(*made);
  return kernel;
}

}  // namespace cujit::hostgen
