// Deadlock reports (fiber_scheduler.h): when no thread of the resident blocks
// can go on, the launch fails with a message naming the kernel and, for each
// block still running, which threads wait at which call (the collective, its
// mask for warp functions, its source line) and which have returned.
#include <cstdio>
#include <string>
#include <vector>

#include "fiber_scheduler.h"

namespace cujit::hostrt::detail {
namespace {

constexpr std::size_t kMaxBlocksListed = 4;
constexpr std::size_t kMaxRunsListed = 4;

std::string triple(uint64_t linear, const Dim3& d) {
  return "(" + std::to_string(linear % d.x) + ", " + std::to_string(linear / d.x % d.y) + ", " +
         std::to_string(linear / (uint64_t{d.x} * d.y)) + ")";
}

// "threads (0, 0, 0)..(15, 0, 0), (32, 0, 0)" for linear ids in increasing order.
std::string thread_list(const std::vector<uint32_t>& ids, const Dim3& block) {
  std::string out = ids.size() == 1 ? "thread " : std::to_string(ids.size()) + " threads ";
  std::size_t runs = 0;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (runs == kMaxRunsListed) {
      out += ", ... (" + std::to_string(ids.size() - i) + " more)";
      break;
    }
    out += (runs == 0 ? "" : ", ") + triple(ids[i], block);
    if (j > i) out += ".." + triple(ids[j], block);
    ++runs;
    i = j + 1;
  }
  return out;
}

std::string call_description(const Wait& w) {
  std::string out = collective_name(w.kind);
  if (is_warp_function(w.kind)) {
    char mask[32];
    std::snprintf(mask, sizeof mask, " with mask 0x%08x", w.mask);
    out += mask;
  }
  if (w.where != nullptr && *w.where != '\0') out += std::string(" at ") + w.where;
  return out;
}

bool same_call(const Wait& a, const Wait& b) {
  return a.kind == b.kind && a.where == b.where && (!is_warp_function(a.kind) || a.mask == b.mask);
}

// One block's lines: the threads waiting at each call, then those that have returned.
std::string block_lines(const HostLaunch& config, const std::vector<Fiber>& fibers, const ResidentBlock& block) {
  const uint32_t n = static_cast<uint32_t>(config.block.count());
  std::vector<std::pair<Wait, std::vector<uint32_t>>> calls;
  std::vector<uint32_t> returned;
  for (uint32_t t = 0; t < n; ++t) {
    const Fiber& f = fibers[block.first + t];
    if (f.state == Fiber::State::Done) {
      returned.push_back(t);
      continue;
    }
    auto it = calls.begin();
    while (it != calls.end() && !same_call(it->first, f.wait)) ++it;
    if (it == calls.end())
      calls.push_back({f.wait, {t}});
    else
      it->second.push_back(t);
  }
  std::string out = "  block " + triple(block.linear, config.grid) + ":\n";
  for (const auto& [wait, ids] : calls)
    out += "    " + thread_list(ids, config.block) + " wait at " + call_description(wait) + "\n";
  if (!returned.empty()) out += "    " + thread_list(returned, config.block) + " returned\n";
  return out;
}

}  // namespace

std::string kernel_label(const std::string& kernel_name) {
  return kernel_name.empty() ? "the kernel" : "kernel '" + kernel_name + "'";
}

std::string deadlock_report(const HostLaunch& config, const std::vector<Fiber>& fibers,
                            const std::vector<ResidentBlock>& blocks, const std::string& why, const char* what) {
  std::string out = kernel_label(config.kernel_name) + " " + what + ": " + why + ".\n";
  std::size_t listed = 0, running = 0, whole = 0;
  std::string returned_blocks;
  for (const ResidentBlock& block : blocks) {
    if (block.live == 0) {
      if (whole++ < kMaxBlocksListed) returned_blocks += (whole == 1 ? "" : ", ") + triple(block.linear, config.grid);
      continue;
    }
    ++running;
    if (listed++ < kMaxBlocksListed) out += block_lines(config, fibers, block);
  }
  if (running > kMaxBlocksListed)
    out += "  ... and " + std::to_string(running - kMaxBlocksListed) + " more blocks still running\n";
  if (whole > 0 && running > 0 && config.cooperative)
    out += "  " + std::to_string(whole) + " block" + (whole == 1 ? "" : "s") + " of the grid returned whole (" +
           returned_blocks + (whole > kMaxBlocksListed ? ", ..." : "") + "): a grid sync waits for every block\n";
  out +=
      "A barrier completes when every thread of the block that has not returned waits at it; a warp function "
      "when every lane of its mask that has not returned calls it with the same mask.";
  return out;
}

}  // namespace cujit::hostrt::detail
