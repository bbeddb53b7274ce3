// The architectures cujit compiles for and links on (cujit/codegen.h): which compute capabilities are supported,
// the one a compile targets for a request, and the one a kernel links for on a device. No LLVM: the launch path
// (a kernel from the disk cache) asks these too.
#include <string>
#include <vector>

#include "cujit/codegen.h"

namespace cujit::codegen {

const std::vector<int>& supported_archs() {
  static const std::vector<int> archs = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
  return archs;
}

Expected<TargetArch> resolve_arch(const ComputeCapability& cc) {
  if (cc.suffix != "" && cc.suffix != "a" && cc.suffix != "f")
    return Error{ErrorKind::ValueError,
                 "Invalid architecture suffix '" + cc.suffix + "' in compute capability (" + std::to_string(cc.major) +
                     ", " + std::to_string(cc.minor) + ", '" + cc.suffix + "'). Expected '', 'a', or 'f'.",
                 {}};
  if (cc.major < 0 || cc.minor < 0 || cc.minor > 9)
    return Error{ErrorKind::ValueError,
                 "Invalid compute capability (" + std::to_string(cc.major) + ", " + std::to_string(cc.minor) + ")",
                 {}};
  int wanted = cc.major * 10 + cc.minor;
  if ((cc.suffix == "a" && wanted < 90) || (cc.suffix == "f" && wanted < 100))
    return Error{ErrorKind::ValueError,
                 "Invalid architecture suffix '" + cc.suffix + "' for compute capability " + std::to_string(cc.major) +
                     "." + std::to_string(cc.minor) +
                     ": arch-specific ('a') targets start at 9.0, family ('f') "
                     "targets at 10.0",
                 {}};
  const auto& archs = supported_archs();
  if (wanted < archs.front())
    return Error{ErrorKind::CCSupport,
                 "GPU compute capability " + std::to_string(cc.major) + "." + std::to_string(cc.minor) +
                     " is not supported (requires >=7.5)",
                 {}};
  int found = archs.front();
  for (int a : archs)
    if (a <= wanted) found = a;
  if (!cc.suffix.empty() && found != wanted)
    return Error{ErrorKind::ValueError,
                 "Can't use arch-specific compute_" + std::to_string(wanted) + cc.suffix +
                     " with closest found compute capability compute_" + std::to_string(found),
                 {}};
  return TargetArch{found, cc.suffix};
}

std::string device_arch(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor) + (major >= 9 ? "a" : "");
}

}  // namespace cujit::codegen
