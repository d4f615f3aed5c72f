//===- Diagnostics.cpp - how kiln prints diagnostics ----------------------===//

#include "compiler/Driver/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln {

void describeLoc(mlir::Location loc, LocInfo &info) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (!info.isNode)
      info.node = name.getName().str();
    info.isNode = true;
    describeLoc(name.getChildLoc(), info);
  } else if (auto flc = dyn_cast<FileLineColLoc>(loc)) {
    if (info.file.empty()) {
      info.file = flc.getFilename().str();
      info.index = static_cast<int>(flc.getLine());
    }
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations())
      describeLoc(l, info);
  } else if (auto cs = dyn_cast<CallSiteLoc>(loc)) {
    describeLoc(cs.getCallee(), info);
    LocInfo parent;
    describeLoc(cs.getCaller(), parent);
    if (parent.isNode)
      info.context += " in a subgraph of node '" + parent.node + "' (#" +
                      std::to_string(parent.index) + ")" + parent.context;
  }
}

mlir::LogicalResult printDiagnostic(mlir::Diagnostic &diag) {
  return writeDiagnostic(diag, llvm::errs());
}

mlir::LogicalResult writeDiagnostic(mlir::Diagnostic &diag, llvm::raw_ostream &os) {
  LocInfo info;
  describeLoc(diag.getLocation(), info);
  os << "kiln: ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: os << "error: "; break;
  case DiagnosticSeverity::Warning: os << "warning: "; break;
  case DiagnosticSeverity::Note: os << "note: "; break;
  case DiagnosticSeverity::Remark: os << "remark: "; break;
  }
  if (!info.file.empty())
    os << info.file << ": ";
  if (info.isNode)
    os << describeNode(info) << ": ";
  os << diag.str() << "\n";
  for (Diagnostic &note : diag.getNotes())
    (void)writeDiagnostic(note, os);
  return success();
}

std::string describeNode(const LocInfo &info) {
  if (!info.isNode)
    return "";
  std::string s = "node '" + info.node + "'";
  if (info.index >= 0)
    s += " (#" + std::to_string(info.index) + info.context + ")";
  return s;
}

} // namespace kiln
