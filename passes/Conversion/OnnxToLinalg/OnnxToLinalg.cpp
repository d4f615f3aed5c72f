//===- OnnxToLinalg.cpp - convert-onnx-to-linalg pass ----------------------===//
//
// Drives the onnx -> linalg patterns of this folder with the dialect
// conversion framework. Control flow (If, Loop, Scan) first becomes scf
// around the subgraphs' onnx ops (ControlFlow.cpp). Before converting,
// every onnx op is checked for
// what the CPU backend cannot compile yet (an op without a lowering, a
// dynamic shape), and all such ops are reported at once. A pattern that
// declines an op (an attribute value or element type it does not handle)
// says why through unsupported(); the pass turns that reason into the
// error on the op, instead of MLIR's generic "failed to legalize".
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Passes.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "convert-onnx-to-linalg"

namespace kiln {
#define GEN_PASS_DEF_CONVERTONNXTOLINALGPASS
#include "passes/Conversion/OnnxToLinalg/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln::lowering;

namespace {

bool isOnnxOp(Operation *op) {
  return op->getDialect() &&
         op->getDialect()->getNamespace() ==
             kiln::onnx::OnnxDialect::getDialectNamespace();
}

/// Ops that need no pattern: `none` values disappear with their users.
bool isStructural(Operation *op) { return isa<kiln::onnx::NoValueOp>(op); }

/// Ops whose lowering handles the model's dynamic dims (besides every
/// elementwise op), in the order the unsupported-op message lists them;
/// each refuses, naming why, what it cannot do with them.
constexpr const char *kDynamicReady[] = {
    "ArgMax", "ArgMin", "AveragePool", "BatchNormalization", "Concat", "ConstantOfShape", "Conv",
    "ConvTranspose", "CumSum", "DepthToSpace", "DequantizeLinear", "Dropout",
    "DynamicQuantizeLinear", "Einsum", "Expand", "EyeLike", "Flatten", "Gather", "GatherElements",
    "GatherND", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "GRU", "Hardmax", "Identity",
    "InstanceNormalization", "LayerNormalization", "LogSoftmax", "LpNormalization", "LRN", "LSTM",
    "MatMul", "MatMulInteger", "MaxPool", "MeanVarianceNormalization", "OneHot", "Pad",
    "QLinearMatMul", "QuantizeLinear", "Range", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum",
    "ReduceSumSquare", "Reshape", "Resize", "ReverseSequence", "RNN", "ScatterElements",
    "ScatterND", "Shape", "Size", "Slice", "Softmax", "Split", "Squeeze", "Tile", "TopK",
    "Transpose", "Trilu", "Unsqueeze"};

struct ConvertOnnxToLinalgPass
    : public kiln::impl::ConvertOnnxToLinalgPassBase<ConvertOnnxToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    setBackendName(backend);
    // If/Loop/Scan become scf around their subgraphs' onnx ops first.
    if (failed(lowerControlFlow(module)))
      return signalPassFailure();
    // Which symbolic dim each `?` is, for the patterns' tensor.empty sizes.
    DimSymbolTable symbols;
    symbols.build(module);
    setDimSymbols(&symbols);
    llvm::scope_exit unset([] { setDimSymbols(nullptr); });
    OnnxTypeConverter converter;
    RewritePatternSet patterns(context);
    llvm::StringSet<> dynamicReady;
    for (const char *name : kDynamicReady)
      dynamicReady.insert(std::string("onnx.") + name);
    populateElementwisePatterns(converter, patterns, &dynamicReady);
    populateLinearPatterns(converter, patterns);
    populateConvolutionPatterns(converter, patterns, winograd);
    populatePoolingPatterns(converter, patterns);
    populateReductionPatterns(converter, patterns);
    populateDataMovementPatterns(converter, patterns);
    populateSlicingPatterns(converter, patterns);
    populateNormalizationPatterns(converter, patterns);
    populateIndexingPatterns(converter, patterns);
    populateGatherScatterPatterns(converter, patterns);
    populateLossPatterns(converter, patterns);
    populateResizePatterns(converter, patterns);
    populateQuantizePatterns(converter, patterns);
    populateRecurrentPatterns(converter, patterns);
    populateSamplingPatterns(converter, patterns);
    populateSelectionPatterns(converter, patterns);
    populateTextPatterns(converter, patterns);
    populateMatrixPatterns(converter, patterns);
    populateSpectralPatterns(converter, patterns);
    populateStringPatterns(converter, patterns);

    llvm::StringSet<> lowered;
    for (const auto &p : patterns.getNativePatterns())
      if (std::optional<OperationName> root = p->getRootKind())
        lowered.insert(root->getStringRef());

    if (failed(checkSupported(module, lowered, dynamicReady, symbols)))
      return signalPassFailure();

    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    ConversionTarget target(*context);
    target.addIllegalDialect<kiln::onnx::OnnxDialect>();
    target.addLegalOp<kiln::onnx::NoValueOp>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           scf::SCFDialect, LLVM::LLVMDialect>();
    target.addLegalOp<func::CallOp>();
    // The entry function's string results, exported once it is lowered.
    SmallVector<unsigned> stringResults;
    auto entry = module.lookupSymbol<func::FuncOp>("main");
    if (entry)
      for (auto [i, t] : llvm::enumerate(entry.getResultTypes()))
        if (isStringType(t))
          stringResults.push_back(i);
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>(
        [&](func::ReturnOp r) { return converter.isLegal(r); });
    target.addLegalOp<UnrealizedConversionCastOp>();
    // scf ops carry onnx types from the control flow step: retype them.
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);

    llvm::DenseMap<Operation *, std::string> reasons;
    setFailureLog(&reasons);
    ConversionConfig config;
    // MLIR's own "failed to legalize" error is replaced by the reason.
    Operation *failedOp = nullptr;
    LogicalResult result = success();
    {
      ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error &&
            StringRef(diag.str()).contains("failed to legalize")) {
          // The ops an importer rewrite made from one node share its
          // location: the one whose pattern said why it failed, else the
          // first.
          if (!failedOp || !reasons.count(failedOp))
            module.walk([&](Operation *op) {
              if (isOnnxOp(op) && !isStructural(op) && op->getLoc() == diag.getLocation() &&
                  (!failedOp || (!reasons.count(failedOp) && reasons.count(op))))
                failedOp = op;
            });
          return success();
        }
        return failure(); // Not ours: pass it on.
      });
      result = applyPartialConversion(module, target, std::move(patterns),
                                      config);
    }
    setFailureLog(nullptr);
    if (succeeded(result) && !symbols.failures.empty()) {
      for (auto &[loc, why] : symbols.failures)
        emitError(loc) << symbols.labelAt(loc) << ": not supported by " << backendName() << ": "
                       << why;
      return signalPassFailure();
    }
    if (failed(result)) {
      if (failedOp) {
        auto it = reasons.find(failedOp);
        std::string why = it != reasons.end()
                              ? it->second
                              : std::string("this combination of attributes "
                                            "and types is not supported yet");
        failedOp->emitError() << kiln::onnx::opLabel(failedOp)
                              << ": not supported by " << backendName() << ": " << why;
      } else {
        module.emitError("lowering onnx to linalg failed");
      }
      return signalPassFailure();
    }
    if (entry)
      exportStringResults(entry, stringResults);
    // `none` placeholders have no users left.
    module.walk([](kiln::onnx::NoValueOp op) {
      if (op->use_empty())
        op->erase();
    });
  }

  /// The model's dynamic dims (besides a batch run item by item), from the
  /// module's `kiln.symbolic_dims` (the names of the inputs' `?` dims);
  /// empty when there are none. Each `?` the lowering makes is one of them
  /// (dynamicDimSize).
  FailureOr<SmallVector<std::string>> dynamicDimNames(ModuleOp module) {
    SmallVector<std::string> list;
    auto names = module->getAttrOfType<ArrayAttr>("kiln.symbolic_dims");
    if (!names)
      return list;
    for (StringRef name : names.getAsValueRange<StringAttr>())
      list.push_back(name.str());
    if (auto main = module.lookupSymbol<func::FuncOp>("main"))
      for (unsigned i = 0; i < main.getNumArguments(); ++i)
        if (auto b = main.getArgAttrOfType<StringAttr>(i, "kiln.dynamic_dim");
            b && llvm::is_contained(list, b.getValue()))
          return main.emitError() << "the dynamic dim '" << b.getValue()
                                  << "' is both the leading batch dim and another dim; pin "
                                     "it with --input-shape";
    return list;
  }

  /// Whether every element of the shape value `v` is a constant or a dim
  /// read by Shape (moved by Gather, Concat and the reshaping ops).
  static bool unknownsAreShapeDims(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (isa<kiln::onnx::ShapeOp>(def) || def->hasTrait<OpTrait::ConstantLike>())
      return true;
    if (isa<kiln::onnx::ConcatOp>(def))
      return llvm::all_of(def->getOperands(), unknownsAreShapeDims);
    if (isa<kiln::onnx::UnsqueezeOp, kiln::onnx::SqueezeOp, kiln::onnx::ReshapeOp,
            kiln::onnx::IdentityOp, kiln::onnx::CastOp>(def))
      return unknownsAreShapeDims(def->getOperand(0));
    if (auto gather = dyn_cast<kiln::onnx::GatherOp>(def))
      return kiln::onnx::constantInts(gather.getIndices()) &&
             unknownsAreShapeDims(gather.getData());
    return false;
  }

  /// Reports every op without a lowering and every dynamic shape the
  /// lowering cannot handle.
  LogicalResult checkSupported(ModuleOp module, const llvm::StringSet<> &lowered,
                               const llvm::StringSet<> &dynamicReady,
                               const DimSymbolTable &symbols) {
    FailureOr<SmallVector<std::string>> dynamicNames = dynamicDimNames(module);
    if (failed(dynamicNames))
      return failure();
    std::string quoted; // 'seq' or 'src', 'tgt'
    for (auto [i, n] : llvm::enumerate(*dynamicNames))
      quoted += (i ? ", '" : "'") + n + "'";
    bool ok = true;
    // Control flow (already scf) with a dynamic result: its `?` need not be
    // the model's dim (a Loop's trip count), which the lowering assumes.
    module.walk([&](Operation *op) {
      if (isOnnxOp(op) || !op->getNumRegions() || isa<func::FuncOp>(op))
        return;
      for (Type t : op->getResultTypes())
        if (!isa<NoneType>(t) && isa<TensorType>(t) && !isStaticTensor(t)) {
          op->emitError() << "control flow with a dynamic shape is not supported by "
                          << backendName()
                          << " yet (pin the model's input shapes with --input-shape)";
          ok = false;
          return;
        }
    });
    // With every input of the function static, a dynamic size comes from
    // data (a Range of computed bounds): pinning input shapes would not help.
    auto inputsStatic = [](Operation *op) {
      auto f = op->getParentOfType<func::FuncOp>();
      return f && llvm::all_of(f.getArgumentTypes(), [](Type t) {
               auto shaped = dyn_cast<ShapedType>(t);
               return !shaped || shaped.hasStaticShape();
             });
    };
    // Ops that handle string tensors: besides the ones that read or make
    // text, those that only move elements (their addresses).
    static const llvm::StringSet<> stringReady = {
        "onnx.Cast",      "onnx.CastLike", "onnx.StringNormalizer", "onnx.Identity",
        "onnx.Reshape",   "onnx.Flatten",  "onnx.Squeeze",          "onnx.Unsqueeze",
        "onnx.Transpose", "onnx.Gather",   "onnx.Concat",           "onnx.Slice",
        "onnx.Shape",     "onnx.Size"};
    module.walk([&](Operation *op) {
      if (!isOnnxOp(op) || isStructural(op))
        return;
      std::string name = kiln::onnx::opLabel(op);
      if (!lowered.contains(op->getName().getStringRef())) {
        op->emitError() << name
                        << ": operator not supported by " << backendName() << " yet";
        ok = false;
        return;
      }
      if (!stringReady.contains(op->getName().getStringRef()) &&
          (llvm::any_of(op->getOperandTypes(), isStringType) ||
           llvm::any_of(op->getResultTypes(), isStringType))) {
        op->emitError() << name
                        << ": string tensors are not supported by " << backendName()
                        << " in this op "
                           "yet (they are in Cast, CastLike, StringNormalizer and in Identity, "
                           "Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Gather, Concat, "
                           "Slice, Shape, Size)";
        ok = false;
        return;
      }
      bool ready = !dynamicNames->empty() && dynamicReady.contains(op->getName().getStringRef());
      // Without kiln-dim-symbols' records (a dynamic batch alone), a
      // shape's unknown elements are taken to be the dynamic dim: only when
      // they are dims read by Shape (not, say, twice one). With them, each
      // `?` of the result is checked below like any other.
      if (isa<kiln::onnx::ConstantOfShapeOp>(op) && symbols.numSymbols == 0)
        ready = ready && unknownsAreShapeDims(op->getOperand(0));
      auto check = [&](Value v, StringRef what, unsigned i) {
        if (isa<NoneType>(v.getType()) || isStaticTensor(v.getType()))
          return true;
        std::string type;
        llvm::raw_string_ostream os(type);
        v.getType().print(os);
        // Each `?` must be one of the dynamic dims, an affine expression of
        // them, a window's output size or the product of two such dims
        // (not, say, the product of three after a Reshape).
        if (ready && symbols.numSymbols > 0 && isa<RankedTensorType>(v.getType())) {
          SmallVector<int64_t> s = symbols.symbolsOf(v);
          auto t = cast<RankedTensorType>(v.getType());
          for (int64_t d = 0; d < t.getRank(); ++d)
            if (t.isDynamicDim(d) && (d >= int64_t(s.size()) || s[d] < 0)) {
              op->emitError() << name << ": " << what << " #" << i << " has type " << type
                              << "; its dim " << d
                              << " is not one of the model's dynamic dims (" << quoted
                              << "), a sum of them with whole coefficients and a "
                                 "constant, a conv's or pool's output size of one, nor the "
                                 "product of two such dims, which kiln does not compile yet; "
                                 "pin them with --input-shape";
              ok = false;
              return false;
            }
        }
        if (ready && isa<RankedTensorType>(v.getType()))
          return true;
        auto diag = op->emitError() << name << ": " << what << " #" << i << " has type "
                                    << type;
        if (dynamicNames->empty() && inputsStatic(op))
          diag << "; its size depends on values computed at run time, which " << backendName()
               << " does not support yet (sizes must follow from the input shapes)";
        else if (dynamicNames->empty())
          diag << "; only static shapes are supported (pin the model's input shapes "
                  "with --input-shape)";
        else
          diag << "; " << backendName() << " does not handle the dynamic dim"
               << (dynamicNames->size() > 1 ? "s " : " ") << quoted
               << " in this op yet (it does in elementwise ops and in "
               << llvm::join(ArrayRef<const char *>(kDynamicReady), ", ")
               << "); pin it with --input-shape";
        ok = false;
        return false;
      };
      for (auto [i, v] : llvm::enumerate(op->getOperands()))
        if (!check(v, "operand", i))
          return;
      for (auto [i, v] : llvm::enumerate(op->getResults()))
        if (!check(v, "result", i))
          return;
    });
    return success(ok);
  }
};

} // namespace
