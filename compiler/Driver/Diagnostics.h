//===- Diagnostics.h - how kiln prints diagnostics ----------------*- C++ -*-===//
//
// Diagnostics name the model, the node (its name and index, and the nodes
// whose subgraph holds it) and the reason:
//   kiln: error: MODEL: node 'NAME' (#INDEX): OP: reason
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_DIAGNOSTICS_H
#define KILN_COMPILER_DRIVER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace kiln {

/// What a diagnostic's location says: the model file, the node (NameLoc)
/// and its index (FileLineColLoc), and for nodes inside subgraphs the
/// enclosing nodes (the callers of a CallSiteLoc).
struct LocInfo {
  std::string file, node, context;
  int index = -1;
  bool isNode = false;
};

void describeLoc(mlir::Location loc, LocInfo &info);

/// "node 'NAME' (#INDEX in a subgraph of ...)", or "" for a non-node.
std::string describeNode(const LocInfo &info);

/// Prints `diag` (and its notes) to stderr (to `os`) in kiln's format.
mlir::LogicalResult printDiagnostic(mlir::Diagnostic &diag);
mlir::LogicalResult writeDiagnostic(mlir::Diagnostic &diag, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_DIAGNOSTICS_H
