// The results of collective operations once their group has arrived
// (fiber_scheduler.h): syncthreads_count/_and/_or over a block, and the warp
// functions over the lanes of their mask that have not returned, as PTX defines
// shfl.sync (a source lane out of range, or not in the group, gives the lane its
// own value), vote.sync and match.sync.
#include <cstdint>

#include "fiber_scheduler.h"

namespace cujit::hostrt::detail {
namespace {

// The lane a shuffle reads for lane `lane`, or -1 when it reads its own value (PTX's pval false).
int64_t shuffle_source(HostCollective kind, uint32_t lane, uint32_t operand) {
  int64_t j = -1;
  switch (kind) {
    case HostCollective::ShuffleIdx:
      j = operand & 31;
      break;  // c = 0x1f: lane[4:0] = b[4:0]
    // The GPU reads the lane offset's low 5 bits (an H100 shuffles down by 40 as by 8).
    case HostCollective::ShuffleUp:
      j = int64_t{lane} - int64_t{operand & 31};
      break;
    case HostCollective::ShuffleDown:
      j = int64_t{lane} + int64_t{operand & 31};
      break;
    case HostCollective::ShuffleXor:
      j = int64_t{lane ^ (operand & 31)};
      break;
    default:
      break;
  }
  return j >= 0 && j <= 31 ? j : -1;
}

}  // namespace

bool is_block_barrier(HostCollective kind) {
  return kind == HostCollective::Barrier || kind == HostCollective::BarrierCount ||
         kind == HostCollective::BarrierAnd || kind == HostCollective::BarrierOr;
}

bool is_warp_function(HostCollective kind) {
  return kind >= HostCollective::ShuffleIdx && kind <= HostCollective::SyncWarp;
}

const char* collective_name(HostCollective kind) {
  switch (kind) {
    case HostCollective::Barrier:
      return "cuda.syncthreads()";
    case HostCollective::BarrierCount:
      return "cuda.syncthreads_count()";
    case HostCollective::BarrierAnd:
      return "cuda.syncthreads_and()";
    case HostCollective::BarrierOr:
      return "cuda.syncthreads_or()";
    case HostCollective::ShuffleIdx:
      return "cuda.shfl_sync()";
    case HostCollective::ShuffleUp:
      return "cuda.shfl_up_sync()";
    case HostCollective::ShuffleDown:
      return "cuda.shfl_down_sync()";
    case HostCollective::ShuffleXor:
      return "cuda.shfl_xor_sync()";
    case HostCollective::VoteAll:
      return "cuda.all_sync()";
    case HostCollective::VoteAny:
      return "cuda.any_sync()";
    case HostCollective::VoteEq:
      return "cuda.eq_sync()";
    case HostCollective::VoteBallot:
      return "cuda.ballot_sync()";
    case HostCollective::MatchAny:
      return "cuda.match_any_sync()";
    case HostCollective::MatchAll:
      return "cuda.match_all_sync()";
    case HostCollective::SyncWarp:
      return "cuda.syncwarp()";
    case HostCollective::ActiveMask:
      return "cuda.activemask()";
    case HostCollective::GridSync:
      return "grid.sync()";
    case HostCollective::Yield:
      return "cuda.nanosleep()";
    case HostCollective::Spin:
      return "an atomic or fence (spinning)";
  }
  return "a collective";
}

uint64_t block_reduction(HostCollective kind, uint32_t true_count, uint32_t live) {
  switch (kind) {
    case HostCollective::BarrierCount:
      return true_count;
    case HostCollective::BarrierAnd:
      return true_count == live ? 1 : 0;
    case HostCollective::BarrierOr:
      return true_count > 0 ? 1 : 0;
    default:
      return 0;
  }
}

void warp_results(HostCollective kind, uint32_t group, uint32_t mask, const uint64_t (&value)[32],
                  const uint32_t (&operand)[32], uint64_t (&result)[32]) {
  auto in_group = [group](int64_t lane) { return lane >= 0 && (group >> lane & 1) != 0; };
  uint32_t true_lanes = 0;
  bool all_equal = true;
  int first = -1;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!in_group(l)) continue;
    if (value[l] != 0) true_lanes |= 1u << l;
    if (first < 0)
      first = static_cast<int>(l);
    else
      all_equal = all_equal && value[l] == value[first];
  }
  for (uint32_t l = 0; l < 32; ++l) {
    if (!in_group(l)) continue;
    switch (kind) {
      case HostCollective::ShuffleIdx:
      case HostCollective::ShuffleUp:
      case HostCollective::ShuffleDown:
      case HostCollective::ShuffleXor: {
        int64_t src = shuffle_source(kind, l, operand[l]);
        result[l] = in_group(src) ? value[src] : value[l];
        break;
      }
      case HostCollective::VoteAll:
        result[l] = true_lanes == group;
        break;
      case HostCollective::VoteAny:
        result[l] = true_lanes != 0;
        break;
      case HostCollective::VoteEq:
        result[l] = true_lanes == 0 || true_lanes == group;
        break;
      case HostCollective::VoteBallot:
        result[l] = true_lanes;
        break;
      case HostCollective::MatchAny: {
        uint32_t same = 0;
        for (uint32_t m = 0; m < 32; ++m)
          if (in_group(m) && value[m] == value[l]) same |= 1u << m;
        result[l] = same;
        break;
      }
      case HostCollective::MatchAll:
        result[l] = all_equal ? (uint64_t{mask} | uint64_t{1} << 32) : 0;
        break;
      default:
        result[l] = 0;
        break;
    }
  }
}

}  // namespace cujit::hostrt::detail
