// The bytecode frontend's decoder (python/cujit/_bytecode_decode.py calls it): a code object's instructions as
// the reader's `_Ins` records, each opcode read by the running version's plan. The plan (`BytecodePlan`) is built
// once per version in Python, from the tables of bytecode/_ops.py, so what each version's opcodes mean stays in
// that one place; here are only the mechanics of applying it (cujit/bytecode_units.h reads the bytes).
#include <Python.h>
#include <structmember.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "cujit/bytecode_units.h"

namespace cujit::bindings {
namespace {

namespace bc = frontend::bytecode;

// How an opcode's argument reads: the numbers of _bytecode_decode.py's _PLAIN ... _SUPER.
enum class ArgKind : int {
  Plain = 0,
  Local,
  Const,
  Name,
  Jump,
  Binary,
  Compare,
  Operator,
  CommonConstant,
  Intrinsic,
  Split,
  Super
};

struct OpcodeRule {
  py::object name;  // dis's name
  py::object op;    // the reader's name; None: the instruction means nothing to the reader
  ArgKind kind = ArgKind::Plain;
  // by kind. Name: the name index's `shift`, and whether the argument moves up a bit (`widened`: 3.10's
  // LOAD_GLOBAL, which has no NULL flag). Jump: `absolute` (3.10) or relative, `backward`, whether its name
  // follows its direction (`directional`: JUMP_ABSOLUTE), and whether the reader follows it (`targets`: its
  // `target` is the index of the instruction it goes to). Local: a `cell` or free variable by 3.10's numbering.
  // Operator: its operator (`text`). Split, Super: the `parts`.
  int shift = 0;
  bool widened = false, absolute = false, backward = false, directional = false, targets = false, cell = false;
  py::object text;
  std::vector<std::pair<py::object, int>> parts;  // Split: (name, argument); Super: (name, -1)
};

// The `_Ins` slots the decoder sets, in this order.
constexpr const char* kSlots[] = {"index", "offset", "op", "arg", "argval", "argrepr", "target", "pos", "name", "loc"};
constexpr size_t kSlotCount = sizeof(kSlots) / sizeof(kSlots[0]);
constexpr size_t kTarget = 6;

class BytecodePlan {
 public:
  BytecodePlan(py::list opcodes, py::list caches, int extended_arg, py::list binary, py::tuple compare,
               int compare_shift, py::tuple common, py::tuple intrinsic, py::object ins_type, py::object position_type)
      : binary_(std::move(binary)),
        compare_(std::move(compare)),
        compare_shift_(compare_shift),
        common_(std::move(common)),
        intrinsic_(std::move(intrinsic)),
        ins_type_(std::move(ins_type)),
        position_type_(std::move(position_type)) {
    if (opcodes.size() != 256 || caches.size() != 256)
      throw py::value_error("BytecodePlan: a rule and a cache size for each of the 256 opcodes");
    extended_arg_ = static_cast<uint8_t>(extended_arg);
    for (size_t i = 0; i < 256; ++i) {
      caches_[i] = caches[i].cast<uint8_t>();
      py::tuple entry = opcodes[i].cast<py::tuple>();  // (name, op, kind, extra)
      OpcodeRule& rule = rules_[i];
      rule.name = entry[0];
      rule.op = entry[1];
      int kind = entry[2].cast<int>();
      if (kind < 0 || kind > static_cast<int>(ArgKind::Super))
        throw py::value_error("BytecodePlan: opcode " + std::to_string(i) + " has no argument kind " +
                              std::to_string(kind));
      rule.kind = static_cast<ArgKind>(kind);
      py::object extra = entry[3];
      switch (rule.kind) {
        case ArgKind::Name: {
          auto t = extra.cast<py::tuple>();
          rule.shift = t[0].cast<int>();
          rule.widened = t[1].cast<bool>();
          break;
        }
        case ArgKind::Jump: {
          auto t = extra.cast<py::tuple>();
          rule.absolute = t[0].cast<bool>();
          rule.backward = t[1].cast<bool>();
          rule.directional = t[2].cast<bool>();
          rule.targets = t[3].cast<bool>();
          break;
        }
        case ArgKind::Local:
          rule.cell = extra.cast<bool>();
          break;
        case ArgKind::Operator:
          rule.text = extra;
          break;
        case ArgKind::Split:
          for (py::handle part : extra) {
            auto t = part.cast<py::tuple>();
            rule.parts.emplace_back(t[0], t[1].cast<int>());
          }
          break;
        case ArgKind::Super:
          for (py::handle part : extra) rule.parts.emplace_back(py::reinterpret_borrow<py::object>(part), -1);
          break;
        default:
          break;
      }
    }
    for (size_t k = 0; k < kSlotCount; ++k) {
      py::object descr = py::getattr(ins_type_, kSlots[k], py::none());
      if (!Py_IS_TYPE(descr.ptr(), &PyMemberDescr_Type))
        throw py::type_error(std::string("BytecodePlan: the instruction class has no slot ") + kSlots[k]);
      slots_[k] = reinterpret_cast<PyMemberDescrObject*>(descr.ptr())->d_member;
    }
    if (!PyType_Check(position_type_.ptr()) ||
        !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(position_type_.ptr()), &PyTuple_Type))
      throw py::type_error("BytecodePlan: the position class is a tuple's");
  }

  // The instructions that mean something to the reader, each with its index in the list and, on a jump the
  // reader follows, the index of the instruction it goes to (of the first kept one from there on).
  py::list decode(py::handle code) const {
    py::bytes raw = code.attr("co_code");
    std::string_view bytes(PyBytes_AS_STRING(raw.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(raw.ptr())));
    std::vector<bc::CodeUnit> units = bc::code_units(bytes, caches_, extended_arg_);
    std::vector<py::object> positions = code_positions(code, bytes.size() / 2);
    py::tuple consts = code.attr("co_consts");
    py::tuple names = code.attr("co_names");
    py::object varname, varnames, cells;  // the local slots' names (3.11 on), or 3.10's two lists (when used)
    py::list kept;
    std::vector<int> index_of(bytes.size() / 2 + 1, -1);  // by code unit: the instruction there or after
    std::vector<std::pair<py::object, uint32_t>> jumps;     // (instruction, the offset it goes to)
    std::vector<uint32_t> pending;
    py::object none = py::none(), empty = py::str("");
    auto place = [&](uint32_t offset, int n) {
      if (offset / 2 < index_of.size()) index_of[offset / 2] = n;
    };
    for (const bc::CodeUnit& unit : units) {
      const OpcodeRule& rule = rules_[unit.opcode];
      if (rule.op.is_none()) {
        pending.push_back(unit.start);
        continue;
      }
      int n = static_cast<int>(PyList_GET_SIZE(kept.ptr()));
      for (uint32_t off : pending) place(off, n);
      pending.clear();
      place(unit.start, n);
      uint32_t arg = unit.arg;
      py::object op = rule.op, argval, argrepr = empty;
      uint32_t target = 0;
      switch (rule.kind) {
        case ArgKind::Local:
          argval = local_name(code, rule, arg, varname, varnames, cells);
          break;
        case ArgKind::Const:
          argval = item(consts, arg, "constant");
          break;
        case ArgKind::Name:
          argval = item(names, arg >> rule.shift, "name");
          if (rule.widened) arg <<= 1;
          break;
        case ArgKind::Jump: {
          target = bc::jump_target(unit, rule.absolute, rule.backward);
          argval = py::int_(target);
          if (rule.directional) op = py::str(target <= unit.offset ? "JUMP_BACKWARD" : "JUMP_FORWARD");
          break;
        }
        case ArgKind::Binary: {
          auto entry = item(binary_, arg, "binary operator").cast<py::tuple>();  // (argrepr, op or None)
          argrepr = entry[0];
          if (!entry[1].is_none()) op = entry[1];
          break;
        }
        case ArgKind::Compare:
          argval = item(compare_, arg >> compare_shift_, "comparison");
          break;
        case ArgKind::Operator:
          argval = argrepr = rule.text;
          break;
        case ArgKind::CommonConstant:
          op = arg < static_cast<size_t>(PyTuple_GET_SIZE(common_.ptr())) ? py::object(common_[arg]) : none;
          if (op.is_none()) op = rule.name;
          break;
        case ArgKind::Intrinsic:
          argrepr = item(intrinsic_, arg, "intrinsic");
          break;
        default:
          break;
      }
      if (!argval) argval = py::int_(arg);
      py::object pos = position(positions, unit.offset / 2);
      py::int_ offset(unit.offset);
      if (rule.kind == ArgKind::Split || rule.kind == ArgKind::Super) {  // several instructions, one argument each
        for (size_t k = 0; k < rule.parts.size(); ++k) {
          const auto& [sub, split_arg] = rule.parts[k];
          uint32_t sub_arg =
              rule.kind == ArgKind::Split ? static_cast<uint32_t>(split_arg) : (k == 0 ? unit.arg >> 4 : unit.arg & 15);
          py::object sub_argval = rule.kind == ArgKind::Split
                                      ? py::int_(sub_arg)
                                      : local_name(code, rule, sub_arg, varname, varnames, cells);
          append(kept, {py::int_(PyList_GET_SIZE(kept.ptr())), offset, sub, py::int_(sub_arg), sub_argval, argrepr,
                        none, pos, rule.name, none});
        }
        continue;
      }
      py::object x =
          append(kept, {py::int_(n), offset, op, py::int_(arg), argval, argrepr, none, pos, rule.name, none});
      if (rule.targets) jumps.emplace_back(std::move(x), target);
    }
    int end = static_cast<int>(PyList_GET_SIZE(kept.ptr()));
    for (uint32_t off : pending) place(off, end);
    for (auto& [x, target] : jumps) {
      int to = target / 2 < index_of.size() ? index_of[target / 2] : -1;
      if (to < 0)
        throw py::value_error("bytecode: a jump to offset " + std::to_string(target) + ", where no instruction is");
      set_slot(x, kTarget, py::int_(to));
    }
    return kept;
  }

 private:
  static py::object item(const py::handle& sequence, size_t i, const char* what) {
    if (i >= static_cast<size_t>(PySequence_Size(sequence.ptr())))
      throw py::value_error(std::string("bytecode: no ") + what + " at index " + std::to_string(i));
    return py::reinterpret_steal<py::object>(PySequence_GetItem(sequence.ptr(), static_cast<Py_ssize_t>(i)));
  }

  // The names of a code object's local slots (CPython 3.11 on), numbered as instructions number them: its locals,
  // the cells that are not also locals, its free variables (bytecode/_decode.py's local_slots, from the public
  // attributes rather than CPython's private code._varname_from_oparg).
  static py::object local_slots(py::handle code) {
    py::object varnames = code.attr("co_varnames");
    py::list slots(varnames);
    for (py::handle cell : code.attr("co_cellvars"))
      if (PySequence_Contains(varnames.ptr(), cell.ptr()) == 0) slots.append(cell);
    for (py::handle free : code.attr("co_freevars")) slots.append(free);
    return py::tuple(slots);
  }

  // The local (or cell, or free variable) an instruction reads or writes.
  static py::object local_name(py::handle code, const OpcodeRule& rule, uint32_t arg, py::object& varname,
                               py::object& varnames, py::object& cells) {
    if (PY_VERSION_HEX >= 0x030B0000) {
      if (!varname) varname = local_slots(code);
      return item(varname, arg, "local");
    }
    if (rule.cell) {
      if (!cells) {
        py::object both = py::reinterpret_steal<py::object>(
            PySequence_Concat(code.attr("co_cellvars").ptr(), code.attr("co_freevars").ptr()));
        if (!both) throw py::error_already_set();
        cells = both;
      }
      return item(cells, arg, "cell");
    }
    if (!varnames) varnames = code.attr("co_varnames");
    return item(varnames, arg, "local");
  }

  // (line, end line, column, end column) of each code unit: co_positions (3.11 on), or 3.10's lines of co_lines
  // with no columns.
  static std::vector<py::object> code_positions(py::handle code, size_t units) {
    std::vector<py::object> out(units);
    if (py::hasattr(code, "co_positions")) {
      size_t k = 0;
      for (py::handle p : code.attr("co_positions")()) {
        if (k >= units) break;
        out[k++] = py::reinterpret_borrow<py::object>(p);
      }
      return out;
    }
    py::object unknown = py::make_tuple(py::none(), py::none(), py::none(), py::none());
    for (auto& p : out) p = unknown;
    for (py::handle entry : code.attr("co_lines")()) {
      auto t = entry.cast<py::tuple>();
      py::object line = t[2];
      py::object known = py::make_tuple(line, line, py::none(), py::none());
      for (size_t u = t[0].cast<size_t>() / 2; u < t[1].cast<size_t>() / 2 && u < units; ++u) out[u] = known;
    }
    return out;
  }

  // A new `_Position` with the items of the code unit's position.
  py::object position(const std::vector<py::object>& positions, size_t unit) const {
    auto* type = reinterpret_cast<PyTypeObject*>(position_type_.ptr());
    py::object p = py::reinterpret_steal<py::object>(type->tp_alloc(type, 4));
    if (!p) throw py::error_already_set();
    py::handle from = unit < positions.size() ? py::handle(positions[unit]) : py::handle();
    for (Py_ssize_t i = 0; i < 4; ++i) {
      PyObject* v = from ? PyTuple_GET_ITEM(from.ptr(), i) : Py_None;
      Py_INCREF(v);
      PyTuple_SET_ITEM(p.ptr(), i, v);
    }
    return p;
  }

  // Appends a new `_Ins` with the slots' values, in kSlots's order; returns it.
  py::object append(py::list& kept, std::initializer_list<py::handle> values) const {
    auto* type = reinterpret_cast<PyTypeObject*>(ins_type_.ptr());
    py::object x = py::reinterpret_steal<py::object>(type->tp_alloc(type, 0));
    if (!x) throw py::error_already_set();
    size_t k = 0;
    for (py::handle v : values) set_slot(x, k++, v);
    kept.append(x);
    return x;
  }

  void set_slot(const py::object& x, size_t slot, py::handle value) const {
    if (PyMember_SetOne(reinterpret_cast<char*>(x.ptr()), slots_[slot], value.ptr()) < 0) throw py::error_already_set();
  }

  OpcodeRule rules_[256];
  bc::CacheSizes caches_{};
  uint8_t extended_arg_ = 0;
  py::list binary_;
  py::tuple compare_;
  int compare_shift_;
  py::tuple common_;
  py::tuple intrinsic_;
  py::object ins_type_, position_type_;
  PyMemberDef* slots_[kSlotCount] = {};
};

}  // namespace

void register_bytecode(py::module_& m) {
  py::class_<BytecodePlan>(m, "BytecodePlan",
                           "How one CPython version's opcodes read (python/cujit/_bytecode_decode.py builds it).")
      .def(py::init<py::list, py::list, int, py::list, py::tuple, int, py::tuple, py::tuple, py::object, py::object>(),
           py::arg("opcodes"), py::arg("caches"), py::arg("extended_arg"), py::arg("binary"), py::arg("compare"),
           py::arg("compare_shift"), py::arg("common"), py::arg("intrinsic"), py::arg("ins_type"),
           py::arg("position_type"))
      .def("decode", &BytecodePlan::decode, py::arg("code"), "The instructions of code object `code`.");
}

}  // namespace cujit::bindings
