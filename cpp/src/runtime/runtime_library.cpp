// libcujit_runtime.so (CMakeLists.txt): the runtime components, linked whole from their static libraries. This
// file only gives the library a source of its own; what it exports is theirs.
namespace cujit::runtime {}
