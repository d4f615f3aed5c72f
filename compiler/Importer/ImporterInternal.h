//===- ImporterInternal.h - Shared parts of the ONNX importer -----*- C++ -*-===//
//
// Declarations shared by the importer's source files. Only the importer
// includes this header: it pulls in ONNX's protobuf classes, which are built
// with exceptions and RTTI, so the files that include it are compiled with
// `-fexceptions` (see compiler/Importer/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORTER_IMPORTERINTERNAL_H
#define KILN_COMPILER_IMPORTER_IMPORTERINTERNAL_H

#include "compiler/Importer/Importer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <string>

namespace kiln::importer {

/// A parsed model and what the importer needs to know about where it lives.
struct LoadedModel {
  ::onnx::ModelProto proto;
  /// Path as given by the user (used in locations and messages).
  std::string path;
  /// Canonical folder of the model; external data must stay inside it.
  std::string dir;
  /// Opset version per domain ("" is the default domain).
  std::map<std::string, int> opsets;
  /// ONNX shape inference's message for the first node it could not infer
  /// (empty if it inferred everything).
  std::string inferenceError;
  /// See ImportOptions::eraseInferredShapes.
  bool eraseInferredShapes = false;
  /// Graph inputs whose symbolic leading dim was pinned to 1 for a dynamic
  /// batch (ImportOptions::dynamicBatch): input name -> the dim's name.
  std::map<std::string, std::string> dynamicBatchInputs;
  /// Graph outputs the model declares with that dim leading.
  std::set<std::string> dynamicBatchOutputs;
  /// The name of a dynamic batch kept symbolic (ImportOptions::
  /// symbolicBatch); empty when there is none.
  std::string symbolicBatch;
  /// The index each node had in its graph as the file gives it, for the
  /// graphs whose nodes moved when inlineLocalFunctions or
  /// rewriteNewerOpsets added some (the nodes they add get the index of
  /// the node they come from: the call, the node rewritten).
  std::unordered_map<const ::onnx::NodeProto *, int> nodeIndex;
};

/// Oldest and newest default-domain opsets the importer accepts.
constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 24;

/// The newest default-domain opset of libonnx's schemas (Debian's ONNX
/// 1.12), which are the dialect's: models of a newer opset are rewritten
/// into it (rewriteNewerOpsets).
constexpr int kLibonnxOpset = 17;

/// Adds every value name of `graph` and the graphs inside it (inputs,
/// outputs, value_info, initializers, node inputs and outputs) to `names`,
/// so that names made up for new values do not clash.
void collectValueNames(const ::onnx::GraphProto &graph, std::set<std::string> &names);

/// Replaces every call of a model-local function (ModelProto.functions)
/// by the function's body, recursively, and drops the functions. An error
/// naming the call for what cannot be inlined.
mlir::LogicalResult inlineLocalFunctions(mlir::MLIRContext &context, LoadedModel &model);

/// Rewrites the nodes of a model of opset 18 to kMaxOpset whose ops
/// changed after kLibonnxOpset into their opset-17 form, and sets the
/// proto's default opset to kLibonnxOpset (model.opsets keeps the declared
/// one). An error naming the node for what has no such form.
mlir::LogicalResult rewriteNewerOpsets(mlir::MLIRContext &context, LoadedModel &model);

/// Loads and parses `path`, checks the model header, pins input shapes and
/// runs ONNX's shape inference. Emits diagnostics on failure.
mlir::LogicalResult loadModel(mlir::MLIRContext &context, llvm::StringRef path,
                              const ImportOptions &options,
                              LoadedModel &model);

/// Only parses `path` into `model.proto` (no checks, no inference).
mlir::LogicalResult readModelProto(mlir::MLIRContext &context, llvm::StringRef path,
                                   LoadedModel &model);

/// The location of node `index` of a graph:
/// NameLoc(node name, FileLineColLoc(model path, index, 0)), with the
/// node's index in the file where model.nodeIndex has it.
mlir::Location nodeLoc(mlir::MLIRContext &context, const LoadedModel &model,
                       const ::onnx::NodeProto &node, int index);

/// "Conv" or "com.microsoft.Attention": the op type a message names.
std::string qualifiedOpType(const ::onnx::NodeProto &node);

/// The largest dim and element count the importer accepts (2^40): anything
/// larger cannot be a real tensor and would overflow size computations.
constexpr int64_t kMaxDim = int64_t(1) << 40;

/// The location of the model file itself.
mlir::Location modelLoc(mlir::MLIRContext &context, const LoadedModel &model);

/// Maps an ONNX TensorProto data type to an MLIR element type; null when the
/// type has no MLIR equivalent.
mlir::Type importElementType(int32_t dataType, mlir::MLIRContext &context);

/// The name of an ONNX data type ("float", "int64", ...), for messages.
std::string dataTypeName(int32_t dataType);

/// Converts a TypeProto. `what` names the value in messages.
mlir::FailureOr<mlir::Type> importType(const ::onnx::TypeProto &type,
                                       mlir::Location loc,
                                       llvm::StringRef what);

/// Converts a TensorProto to an elements attribute. Large tensors become
/// dense resources that take ownership of the protobuf's `raw_data` (no
/// copy); small ones become DenseElementsAttr so that folders can read them.
/// External data is read from the model's folder, never outside it.
mlir::FailureOr<mlir::ElementsAttr> importTensor(::onnx::TensorProto &tensor,
                                                 const LoadedModel &model,
                                                 mlir::Location loc,
                                                 bool forceDense = false);

/// Converts a SparseTensorProto to a dense elements attribute.
mlir::FailureOr<mlir::ElementsAttr>
importSparseTensor(::onnx::SparseTensorProto &sparse, const LoadedModel &model,
                   mlir::Location loc);

/// One node on its way to becoming an op: the importer fills it from the
/// NodeProto, `normalizeNode` rewrites older opset forms into the form of
/// the dialect (the newest opset), then the importer creates the op.
struct NodeState {
  explicit NodeState(mlir::Location loc) : loc(loc) {}
  const ::onnx::NodeProto *node = nullptr;
  mlir::Location loc;
  /// Opset of the node's domain in the model.
  int opset = 0;
  /// Op type to create (may differ from the node's, e.g. Upsample -> Resize).
  std::string opType;
  /// Operands aligned with the node's inputs (`none` for skipped ones).
  llvm::SmallVector<mlir::Value> operands;
  /// ONNX attributes not yet converted, by name.
  std::map<std::string, const ::onnx::AttributeProto *> attrs;
  /// Attributes already in their dialect form.
  mlir::NamedAttrList converted;
  /// The model (for external data of tensors in attributes).
  const LoadedModel *model = nullptr;
  /// Result types the rewrite fixes itself (by result index), instead of
  /// the types ONNX inferred for the node's outputs.
  std::map<unsigned, mlir::Type> resultTypes;
  /// Applied to a result after the op is built (e.g. to undo a Flatten).
  std::map<unsigned,
           std::function<mlir::Value(mlir::OpBuilder &, mlir::Value)>>
      wrapResults;
};

/// Rewrites an older opset's interface into the dialect's (newest) one:
/// attributes that became inputs, renamed or deprecated ops, changed
/// semantics. The only place where opset differences are handled.
mlir::LogicalResult normalizeNode(mlir::OpBuilder &builder, NodeState &state);

/// Creates `onnx.<name>` with the given operands, result types and
/// attributes (no verification).
mlir::Operation *createOnnxOp(mlir::OpBuilder &builder, mlir::Location loc,
                              llvm::StringRef name, mlir::ValueRange operands,
                              mlir::TypeRange results,
                              llvm::ArrayRef<mlir::NamedAttribute> attrs = {});

/// An `onnx.Constant` holding `values` as a 1-D i64 tensor (or a scalar).
mlir::Value createI64Constant(mlir::OpBuilder &builder, mlir::Location loc,
                              llvm::ArrayRef<int64_t> values,
                              bool scalar = false);

/// An `onnx.Constant` holding one f32 (or element type `type`) scalar.
mlir::Value createScalarConstant(mlir::OpBuilder &builder, mlir::Location loc,
                                 mlir::Type type, double value);

/// An `onnx.NoValue`.
mlir::Value createNone(mlir::OpBuilder &builder, mlir::Location loc);

/// ONNX's training preview domain, whose deterministic ops the importer
/// expands into default-domain ops (TrainingOps.cpp).
constexpr const char *kTrainingDomain = "ai.onnx.preview.training";

/// The ops of kTrainingDomain that kiln expands.
constexpr llvm::StringLiteral kTrainingOps[] = {"Adagrad", "Adam", "Momentum",
                                                "Gradient"};

/// Whether `domain` is kTrainingDomain.
bool isTrainingDomain(const std::string &domain);

/// Expands a node of kTrainingDomain (Adagrad, Adam, Momentum, Gradient)
/// into default-domain ops; `results` gets one value per node output.
/// `lookup` finds a graph value by name (Gradient's `xs`, `y` and `zs`).
mlir::LogicalResult
expandTrainingNode(mlir::OpBuilder &builder, const NodeState &state,
                   llvm::function_ref<mlir::Value(llvm::StringRef)> lookup,
                   llvm::SmallVectorImpl<mlir::Value> &results);

/// Builds the main function of `model` into `module`.
mlir::LogicalResult importGraph(LoadedModel &model, mlir::ModuleOp module);

} // namespace kiln::importer

#endif // KILN_COMPILER_IMPORTER_IMPORTERINTERNAL_H
