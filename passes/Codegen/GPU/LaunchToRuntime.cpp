//===- LaunchToRuntime.cpp - the host side of --target=cuda ----*- C++ -*-===//
//
// kiln-gpu-launch-to-runtime and kiln-gpu-device-weights (see Passes.td):
// the host function of a --target=cuda library calls the runtime's CUDA
// loader (runtime/src/cuda.c) for each launch and for the weights' device
// copies.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_GPULAUNCHTORUNTIMEPASS
#define GEN_PASS_DEF_GPUDEVICEWEIGHTSPASS
#include "passes/Codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kProgram = "kiln_cuda_program";
constexpr StringLiteral kLaunch = "kiln_cuda_launch";
constexpr StringLiteral kWeights = "kiln_cuda_weights";
constexpr StringLiteral kRead = "kiln_cuda_read";

/// A private declaration of `name` in `module`, made once.
func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

/// `v` (index, an integer or a float of up to 64 bits) as the i64 whose
/// low bytes hold its bits.
FailureOr<Value> asI64(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  Type type = v.getType();
  if (type.isIndex())
    return arith::IndexCastUIOp::create(b, loc, i64, v).getResult();
  if (auto f = dyn_cast<FloatType>(type)) {
    if (f.getWidth() > 64)
      return failure();
    v = arith::BitcastOp::create(b, loc, b.getIntegerType(f.getWidth()), v);
    type = v.getType();
  }
  auto i = dyn_cast<IntegerType>(type);
  if (!i || i.getWidth() > 64)
    return failure();
  if (i.getWidth() == 64)
    return v;
  return arith::ExtUIOp::create(b, loc, i64, v).getResult();
}

struct GpuLaunchToRuntimePass
    : public kiln::impl::GpuLaunchToRuntimePassBase<GpuLaunchToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // The kernels, in order.
    SmallVector<Attribute> names;
    DenseMap<StringAttr, int32_t> index;
    for (auto kernels : module.getOps<gpu::GPUModuleOp>())
      for (auto f : kernels.getOps<gpu::GPUFuncOp>()) {
        index[f.getNameAttr()] = int32_t(names.size());
        names.push_back(f.getNameAttr());
      }
    module->setAttr("kiln.gpu_kernels", ArrayAttr::get(ctx, names));
    Type idx = IndexType::get(ctx), i32 = IntegerType::get(ctx, 32),
         i64 = IntegerType::get(ctx, 64);
    func::FuncOp program = declare(module, kProgram, FunctionType::get(ctx, {}, {idx}));
    func::FuncOp launch =
        declare(module, kLaunch,
                FunctionType::get(ctx, {idx, i32, i64, i64, i64, i64, i64, i64, idx, i32}, {}));
    auto readFunction = [&] {
      return declare(module, kRead, FunctionType::get(ctx, {idx, idx, i32}, {i64}));
    };
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      // Loads left on the host (kiln-gpu-map-loops: a size, an index or a
      // condition the host needs, in the function's body or in a loop or
      // branch the host runs) read device memory.
      SmallVector<memref::LoadOp> loads;
      func.walk([&](memref::LoadOp load) { loads.push_back(load); });
      for (memref::LoadOp load : loads)
        if (failed(rewriteRead(load, program, readFunction())))
          return signalPassFailure();
      SmallVector<gpu::LaunchFuncOp> launches;
      func.walk([&](gpu::LaunchFuncOp op) { launches.push_back(op); });
      if (launches.empty())
        continue;
      // One stack buffer for every launch's parameters (cuLaunchKernel
      // copies them), as large as the largest list.
      int64_t most = 1;
      for (gpu::LaunchFuncOp op : launches)
        most = std::max(most, numParams(op));
      OpBuilder b(&func.getBody().front(), func.getBody().front().begin());
      Value buffer = memref::AllocaOp::create(b, func.getLoc(),
                                              MemRefType::get({most}, b.getI64Type()));
      for (gpu::LaunchFuncOp op : launches) {
        auto it = index.find(op.getKernelName());
        if (it == index.end()) {
          op.emitError("internal error: a launch of a kernel that is not in the gpu.module");
          return signalPassFailure();
        }
        if (failed(rewrite(op, it->second, program, launch, buffer)))
          return signalPassFailure();
      }
    }
    for (auto kernels : llvm::to_vector(module.getOps<gpu::GPUModuleOp>()))
      kernels.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  /// `load` as kiln_cuda_read of its element's bytes at the buffer's
  /// aligned pointer plus the element's offset.
  static LogicalResult rewriteRead(memref::LoadOp load, func::FuncOp program,
                                   func::FuncOp read) {
    OpBuilder b(load);
    Location loc = load.getLoc();
    Type type = load.getType();
    unsigned bits = type.isIntOrFloat() ? type.getIntOrFloatBitWidth() : 0;
    if (bits == 0 || bits > 64)
      return load.emitError() << "--target=cuda: the host reads a " << type
                              << " from device memory; not supported yet";
    Value memref = load.getMemref();
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    Value element = meta.getOffset();
    for (auto [index, stride] : llvm::zip(load.getIndices(), meta.getStrides()))
      element = arith::AddIOp::create(b, loc, element,
                                      arith::MulIOp::create(b, loc, index, stride));
    int64_t bytes = (bits + 7) / 8;
    Value address = arith::AddIOp::create(
        b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref),
        arith::MulIOp::create(b, loc, element, arith::ConstantIndexOp::create(b, loc, bytes)));
    Value prog = func::CallOp::create(b, loc, program, ValueRange{}).getResult(0);
    Value word =
        func::CallOp::create(
            b, loc, read,
            ValueRange{prog, address, arith::ConstantIntOp::create(b, loc, b.getI32Type(), bytes)})
            .getResult(0);
    Value value = word;
    if (bits < 64)
      value = arith::TruncIOp::create(b, loc, b.getIntegerType(bits), value);
    if (isa<FloatType>(type))
      value = arith::BitcastOp::create(b, loc, type, value);
    load.replaceAllUsesWith(value);
    load.erase();
    return success();
  }

  /// The kernel's parameters once the NVVM lowering expanded its memrefs.
  static int64_t numParams(gpu::LaunchFuncOp op) {
    int64_t n = 0;
    for (Value v : op.getKernelOperands()) {
      auto type = dyn_cast<MemRefType>(v.getType());
      n += type ? 3 + 2 * type.getRank() : 1;
    }
    return n;
  }

  LogicalResult rewrite(gpu::LaunchFuncOp op, int32_t kernel, func::FuncOp program,
                        func::FuncOp launch, Value buffer) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    // The parameters, as the NVVM lowering expands them.
    SmallVector<Value> params;
    for (Value v : op.getKernelOperands()) {
      if (auto type = dyn_cast<MemRefType>(v.getType())) {
        auto meta = memref::ExtractStridedMetadataOp::create(b, loc, v);
        Value aligned = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
        params.push_back(aligned); // allocated: the kernels do not use it
        params.push_back(aligned);
        params.push_back(meta.getOffset());
        llvm::append_range(params, meta.getSizes());
        llvm::append_range(params, meta.getStrides());
        continue;
      }
      params.push_back(v);
    }
    for (auto [i, v] : llvm::enumerate(params)) {
      FailureOr<Value> bits = asI64(b, loc, v);
      if (failed(bits))
        return op.emitError() << "--target=cuda: a kernel parameter of type " << v.getType()
                              << " is not supported yet";
      Value at = arith::ConstantIndexOp::create(b, loc, int64_t(i));
      memref::StoreOp::create(b, loc, *bits, buffer, ValueRange{at});
    }
    Value prog = func::CallOp::create(b, loc, program, ValueRange{}).getResult(0);
    SmallVector<Value> args = {
        prog, arith::ConstantIntOp::create(b, loc, b.getI32Type(), kernel)};
    for (Value v : {op.getGridSizeX(), op.getGridSizeY(), op.getGridSizeZ(), op.getBlockSizeX(),
                    op.getBlockSizeY(), op.getBlockSizeZ()})
      args.push_back(arith::IndexCastUIOp::create(b, loc, b.getI64Type(), v));
    args.push_back(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer));
    args.push_back(arith::ConstantIntOp::create(b, loc, b.getI32Type(), int64_t(params.size())));
    func::CallOp::create(b, loc, launch, args);
    op.erase();
    return success();
  }
};

struct GpuDeviceWeightsPass
    : public kiln::impl::GpuDeviceWeightsPassBase<GpuDeviceWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Type i64 = IntegerType::get(ctx, 64), ptr = LLVM::LLVMPointerType::get(ctx);
    auto program = module.lookupSymbol<LLVM::LLVMFuncOp>(kProgram);
    SmallVector<LLVM::AddressOfOp> uses;
    module.walk([&](LLVM::AddressOfOp op) {
      if (op->getParentOfType<LLVM::LLVMFuncOp>())
        uses.push_back(op);
    });
    if (uses.empty())
      return;
    if (!program) {
      module.emitError("internal error: no kiln_cuda_program for the weights");
      return signalPassFailure();
    }
    LLVM::LLVMFuncOp weights = module.lookupSymbol<LLVM::LLVMFuncOp>(kWeights);
    if (!weights) {
      OpBuilder b(module.getBodyRegion());
      weights = LLVM::LLVMFuncOp::create(b, module.getLoc(), kWeights,
                                         LLVM::LLVMFunctionType::get(i64, {i64, i64, i64}));
    }
    DataLayout layout(module);
    for (LLVM::AddressOfOp op : uses) {
      auto global = dyn_cast_or_null<LLVM::GlobalOp>(
          SymbolTable::lookupNearestSymbolFrom(op, op.getGlobalNameAttr()));
      if (!global)
        continue; // A function's address.
      if (!global.getConstant()) {
        op.emitError("--target=cuda: a mutable global is not supported on the GPU");
        return signalPassFailure();
      }
      OpBuilder b(op);
      b.setInsertionPointAfter(op);
      Location loc = op.getLoc();
      Value prog = LLVM::CallOp::create(b, loc, program, ValueRange{}).getResult();
      Value host = LLVM::PtrToIntOp::create(b, loc, i64, op.getResult());
      Value bytes = LLVM::ConstantOp::create(
          b, loc, i64, b.getI64IntegerAttr(int64_t(layout.getTypeSize(global.getGlobalType()))));
      Value device =
          LLVM::CallOp::create(b, loc, weights, ValueRange{prog, host, bytes}).getResult();
      Value address = LLVM::IntToPtrOp::create(b, loc, ptr, device);
      op.getResult().replaceAllUsesExcept(address, host.getDefiningOp());
    }
  }
};

} // namespace
