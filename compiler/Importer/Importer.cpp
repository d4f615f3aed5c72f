//===- Importer.cpp - ONNX model to onnx dialect ---------------------------===//
//
// The importer's public entry points: load the model, build the module,
// verify it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/ImporterInternal.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln {

bool parseInputShape(StringRef text, InputShape &shape, std::string &error) {
  auto [name, dims] = text.rsplit('=');
  if (dims.empty() || name.empty() || !text.contains('=')) {
    error = "expected NAME=DIMS (e.g. input=1x3x224x224), got '" +
            text.str() + "'";
    return false;
  }
  shape.name = name.str();
  shape.dims.clear();
  SmallVector<StringRef> parts;
  dims.split(parts, dims.contains(',') ? ',' : 'x');
  for (StringRef p : parts) {
    p = p.trim();
    if (p == "?") {
      shape.dims.push_back(-1);
      continue;
    }
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0 || d > importer::kMaxDim) {
      error = "invalid dim '" + p.str() + "' in '" + text.str() + "'";
      return false;
    }
    shape.dims.push_back(d);
  }
  return true;
}

void registerImporterDialects(MLIRContext &context) {
  context.loadDialect<kiln::onnx::OnnxDialect, func::FuncDialect>();
}

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context, StringRef path,
                                      const ImportOptions &options) {
  registerImporterDialects(context);
  importer::LoadedModel model;
  if (failed(importer::loadModel(context, path, options, model)))
    return {};
  Location loc = importer::modelLoc(context, model);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  Builder b(&context);
  const ::onnx::ModelProto &m = model.proto;
  module->getOperation()->setAttr("onnx.ir_version",
                                  b.getI64IntegerAttr(m.ir_version()));
  module->getOperation()->setAttr("onnx.opset",
                                  b.getI64IntegerAttr(model.opsets[""]));
  if (!m.producer_name().empty())
    module->getOperation()->setAttr(
        "onnx.producer",
        b.getStringAttr(m.producer_name() +
                        (m.producer_version().empty()
                             ? ""
                             : " " + m.producer_version())));
  if (failed(importer::importGraph(model, *module)))
    return {};
  if (failed(verify(*module)))
    return {};
  return module;
}

StringAttr itemBatchDim(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  for (unsigned i = 0; main && i < main.getNumArguments(); ++i)
    if (auto dim = main.getArgAttrOfType<StringAttr>(i, "kiln.dynamic_dim"))
      return dim;
  return {};
}

double fewRowsPerItemShare(ModuleOp module, int64_t fewRows) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return 0;
  auto staticType = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.hasStaticShape() ? type : RankedTensorType();
  };
  auto isConstant = [](Value v) { return bool(v.getDefiningOp<onnx::ConstantOp>()); };
  // Multiply-adds of every contraction (output elements times K), and of
  // those with a constant 2-D weight and fewer than `fewRows` rows (A's
  // elements over K).
  double all = 0, few = 0;
  bool unknown = false;
  auto count = [&](Value a, Value b, Value y, bool transA) {
    RankedTensorType aType = staticType(a), bType = staticType(b), yType = staticType(y);
    if (!aType || !bType || !yType || aType.getRank() < 1) {
      unknown = true;
      return;
    }
    int64_t k = aType.getDimSize(transA ? 0 : aType.getRank() - 1);
    if (k == 0)
      return;
    double macs = double(yType.getNumElements()) * double(k);
    all += macs;
    if (isConstant(b) && bType.getRank() == 2 &&
        aType.getNumElements() / k < fewRows)
      few += macs;
  };
  main.walk([&](Operation *op) {
    if (auto mm = dyn_cast<onnx::MatMulOp>(op))
      count(mm.getA(), mm.getB(), mm.getY(), false);
    else if (auto mm = dyn_cast<onnx::MatMulIntegerOp>(op))
      count(mm.getA(), mm.getB(), mm.getY(), false);
    else if (auto gemm = dyn_cast<onnx::GemmOp>(op))
      count(gemm.getA(), gemm.getB(), gemm.getY(), gemm.getTransA());
    else if (auto conv = dyn_cast<onnx::ConvOp>(op)) {
      // Output elements times the weight's elements per output channel.
      RankedTensorType y = staticType(conv.getY()), w = staticType(conv.getW());
      if (!y || !w || w.getRank() < 1 || w.getDimSize(0) == 0)
        unknown = true;
      else
        all += double(y.getNumElements()) * double(w.getNumElements() / w.getDimSize(0));
    }
  });
  return unknown || all == 0 ? 0 : few / all;
}

} // namespace kiln
