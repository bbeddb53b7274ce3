// The NVPTX codegen pass pipeline, as LLVM's TargetMachine builds it for PTX
// output, with changes for compile speed that leave the PTX as good:
// - Straight-line strength reduction and n-ary reassociation (NVPTX's own
//   additions), and the two EarlyCSE runs that clean up after them, are left
//   out: ptxas strength-reduces after us. Over the ~2,500 functions the test
//   suite compiles, one function's PTX got longer without them (by 7 of the
//   suite's 57,500 instructions) and none other; the tiled matmul's PTX is the
//   same, compiled in 6% less time. Constant hoisting is left out too: NVPTX
//   immediates cost nothing to rematerialise, and no test-suite PTX changed.
// - The PTX printer writes through a stream that does not track the output
//   column of every byte (LLVM's formatted_raw_ostream does, to align comments,
//   which PTX output without verbose asm has none of): 4% of the compile, and
//   byte-identical PTX.
#include <algorithm>
#include <array>

#include <llvm/ADT/SmallString.h>
#include <llvm/CodeGen/AsmPrinter.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/MC/MCAsmBackend.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCCodeEmitter.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/FormattedStream.h>
#include <llvm/Target/TargetMachine.h>

#include "target_machine.h"

namespace cujit::codegen {
namespace {

// The legacy pass names (LLVM 22) of what is left out.
constexpr std::array<const char*, 3> kLeftOut = {"Straight line strength reduction", "Nary reassociation",
                                                 "Constant Hoisting"};
constexpr const char* kEarlyCse = "Early CSE";
constexpr int kEarlyCseLeftOut = 2;  // the runs after SLSR and NaryReassociate; the third (after the IR passes) stays
constexpr const char* kPrinter = "NVPTX Assembly Printer";

// A formatted_raw_ostream that passes bytes straight to the stream under it.
// (Its column, which nothing asks for here, stays 0.)
class UntrackedStream final : public llvm::formatted_raw_ostream {
 public:
  explicit UntrackedStream(llvm::raw_ostream& out) : formatted_raw_ostream(out), out_(out) {}

 private:
  void write_impl(const char* data, size_t size) override { out_.write(data, size); }
  llvm::raw_ostream& out_;
};

class FilteredCodegenPasses final : public CodegenPasses {
 public:
  FilteredCodegenPasses(llvm::TargetMachine& tm, llvm::raw_pwrite_stream& out) : tm_(tm), out_(out) {}

  void build() {
    mmi_ = new llvm::MachineModuleInfoWrapperPass(&tm_);
    if (tm_.addPassesToEmitFile(*this, out_, nullptr, llvm::CodeGenFileType::AssemblyFile, /*DisableVerify=*/true,
                                mmi_))
      fail(ErrorKind::Internal, "the NVPTX backend cannot emit PTX");
  }

  void add(llvm::Pass* pass) override {
    std::string name = pass->getPassName().str();
    bool leave_out = std::find(kLeftOut.begin(), kLeftOut.end(), name) != kLeftOut.end() ||
                     (name == kEarlyCse && early_cse_seen_++ < kEarlyCseLeftOut);
    offered_.push_back({name, !leave_out});
    if (leave_out) {
      delete pass;
      return;
    }
    if (name == kPrinter) {
      delete pass;
      pass = untracked_printer();
    }
    llvm::legacy::PassManager::add(pass);
  }

 private:
  // The printer CodeGenTargetMachineImpl::addAsmPrinter makes, over an UntrackedStream.
  llvm::Pass* untracked_printer() {
    const llvm::Target& target = tm_.getTarget();
    const llvm::MCAsmInfo& asm_info = *tm_.getMCAsmInfo();
    std::unique_ptr<llvm::MCInstPrinter> inst_printer(
        target.createMCInstPrinter(tm_.getTargetTriple(), asm_info.getAssemblerDialect(), asm_info,
                                   *tm_.getMCInstrInfo(), *tm_.getMCRegisterInfo()));
    std::unique_ptr<llvm::MCAsmBackend> backend(
        target.createMCAsmBackend(*tm_.getMCSubtargetInfo(), *tm_.getMCRegisterInfo(), tm_.Options.MCOptions));
    std::unique_ptr<llvm::MCStreamer> streamer(
        target.createAsmStreamer(mmi_->getMMI().getContext(), std::make_unique<UntrackedStream>(out_),
                                 std::move(inst_printer), nullptr, std::move(backend)));
    llvm::Pass* printer = target.createAsmPrinter(tm_, std::move(streamer));
    if (printer == nullptr) fail(ErrorKind::Internal, "the NVPTX backend has no PTX printer");
    return printer;
  }

  llvm::TargetMachine& tm_;
  llvm::raw_pwrite_stream& out_;
  llvm::MachineModuleInfoWrapperPass* mmi_ = nullptr;  // owned by the pass manager
  int early_cse_seen_ = 0;
};

}  // namespace

std::unique_ptr<CodegenPasses> make_codegen_passes(llvm::TargetMachine& tm, llvm::raw_pwrite_stream& out) {
  auto passes = std::make_unique<FilteredCodegenPasses>(tm, out);
  passes->build();
  return passes;
}

Expected<std::vector<CodegenPass>> codegen_passes(const ComputeCapability& cc) {
  try {
    auto arch = resolve_arch(cc);
    if (!arch) return arch.error();
    std::unique_ptr<llvm::TargetMachine> tm = create_target_machine(*arch, CompileOptions{});
    llvm::SmallString<0> ptx;
    llvm::raw_svector_ostream out(ptx);
    return make_codegen_passes(*tm, out)->offered();
  } catch (CompileError& e) {
    return e.error();
  }
}

}  // namespace cujit::codegen
