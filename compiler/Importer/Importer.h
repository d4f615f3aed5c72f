//===- Importer.h - ONNX model to onnx dialect --------------------*- C++ -*-===//
//
// The public entry point of the importer: reads a `.onnx` file (with its
// external data), runs ONNX's reference shape inference on it, and builds a
// module holding one `func.func @main` in the onnx dialect.
//
// Errors are reported as MLIR diagnostics located at the offending node
// (`NameLoc(node name, FileLineColLoc(model path, node index, 0))`) or at the
// model file; the caller installs the diagnostic handler.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORTER_IMPORTER_H
#define KILN_COMPILER_IMPORTER_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// A user-pinned shape for one graph input (`--input-shape NAME=1x3x224x224`).
/// A dim of -1 leaves that dim as the model declares it.
struct InputShape {
  std::string name;
  std::vector<int64_t> dims;
};

struct ImportOptions {
  std::vector<InputShape> inputShapes;
  /// Run ::onnx::shape_inference::InferShapes (with data propagation) first.
  bool onnxShapeInference = true;
  /// Keep only the element types ONNX inferred for node outputs and forget
  /// their shapes, so that kiln's own shape functions must find them (a
  /// testing aid: see test/onnx-backend/shape_parity.py).
  bool eraseInferredShapes = false;
  /// A symbolic leading dim of graph inputs (not pinned by inputShapes) is
  /// taken as a dynamic batch: the graph is imported with it at 1, and the
  /// inputs carry `kiln.dynamic_dim = "<name>"`; the onnx phase's
  /// kiln-dynamic-batch pass checks that items are independent.
  bool dynamicBatch = true;
  /// With dynamicBatch: keep that dim symbolic instead (named as declared,
  /// "batch" when unnamed, one name for every input's), so that the model
  /// runs a whole batch at once (--target=cuda: the batch one more grid
  /// dim of each kernel); `main` carries `kiln.batch_dim = "<name>"`.
  bool symbolicBatch = false;
};

/// Parses "NAME=1x3x224x224" (or "NAME=1,3,224,224"; "?" for a dim left as
/// declared). Returns false with `error` set on malformed text.
bool parseInputShape(llvm::StringRef text, InputShape &shape,
                     std::string &error);

/// Imports the model at `path`. On failure, diagnostics have been emitted and
/// a null module is returned.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &context,
                                                  llvm::StringRef path,
                                                  const ImportOptions &options);

/// The dynamic batch an imported module runs one item at a time: the name
/// its `main`'s batched arguments carry as `kiln.dynamic_dim`
/// (dynamicBatch without symbolicBatch); null when there is none.
mlir::StringAttr itemBatchDim(mlir::ModuleOp module);

/// The share of the multiply-adds of the contractions (MatMul,
/// MatMulInteger, Gemm, Conv) of `module`'s `main` done by matmuls whose
/// weight is a constant matrix and which take fewer than `fewRows` rows
/// (an MLP's layers per item of a dynamic batch: each reads its whole
/// weight for a row or a few). 0 when some contraction's shape is not
/// static.
double fewRowsPerItemShare(mlir::ModuleOp module, int64_t fewRows);

/// A graph input or output as the model declares it: dims are numbers,
/// symbolic names, or "?".
struct ValueSummary {
  std::string name, dtype;
  std::vector<std::string> dims;
};

/// One op type of a model (subgraphs included) and where it is used.
struct OpSummary {
  std::string domain; ///< "" for the default domain.
  std::string opType;
  int64_t opset = 0;  ///< The model's opset import for the domain.
  int64_t count = 0;
};

/// What `kiln check` reports about a model before compiling anything.
struct ModelSummary {
  std::string producer;
  int64_t irVersion = 0;
  std::vector<ValueSummary> inputs, outputs; ///< Initializers left out.
  int64_t initializers = 0, parameters = 0, parameterBytes = 0;
  std::vector<OpSummary> ops; ///< In order of first use.
  /// Index into `ops` of each top-level node, by node index.
  std::vector<size_t> nodeOps;
};

/// Reads the model at `path` (without validating or importing it) into
/// `summary`. On failure (unreadable, not an ONNX model) a diagnostic has
/// been emitted.
mlir::LogicalResult summarizeOnnxModel(mlir::MLIRContext &context, llvm::StringRef path,
                                       ModelSummary &summary);

/// One weighted node of a QDQ export: its weights as --quantize=int8
/// quantised them (kiln::quantization::StaticQuantization).
struct QdqNode {
  int nodeIndex = -1; ///< In the main graph: a Conv, MatMul or Gemm.
  std::vector<int8_t> weights; ///< Conv: [M, C, K...]; MatMul, Gemm: [K, N].
  std::vector<int64_t> weightShape;
  std::vector<float> weightScales; ///< Per output channel.
  int64_t weightAxis = 0;
};

/// One input of a node of the main graph that reads a quantised
/// activation (kiln::quantization::ActivationQuantization): uint8 per
/// tensor.
struct QdqInput {
  int nodeIndex = -1;
  std::string opType; ///< The node's op type, as kiln imported it (checked).
  int input = 0;
  float scale = 1.0f;
  uint8_t zeroPoint = 0;
};

/// Writes the model at `input` to `output` as a QDQ model (`kiln compile
/// --quantize=int8 --emit=onnx`): each input of `inputs` reads
/// DequantizeLinear(QuantizeLinear(x)) (one pair per tensor), each node
/// of `nodes` DequantizeLinear of its int8 weights (per output channel, a
/// new initializer), a Gemm becoming MatMul (+ Add of C); the float
/// weights nothing else reads go. False with `error` set when the file
/// cannot be read or written, holds external data, has an opset below 13,
/// or an index is not such a node or input.
bool writeQdqModel(const std::string &input, const std::string &output,
                   const std::vector<QdqNode> &nodes, const std::vector<QdqInput> &inputs,
                   std::string &error);

/// Registers the dialects the importer creates ops of.
void registerImporterDialects(mlir::MLIRContext &context);

} // namespace kiln

#endif // KILN_COMPILER_IMPORTER_IMPORTER_H
