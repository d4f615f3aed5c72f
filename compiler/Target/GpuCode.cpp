//===- GpuCode.cpp - --target=cuda's device code and entry points ----------===//
//
// The device code of a --target=cuda build: the gpu.module (LLVM/NVVM
// dialects) to PTX through LLVM's NVPTX back end, and PTX to a cubin with
// the CUDA toolkit's ptxas when there is one; and the library's entry
// points around the host code: the program the runtime keeps
// (runtime/src/cuda.c), NAME_run_device (device pointers) and NAME_run
// (host pointers).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CodeGenInternal.h"
#include "compiler/Target/Target.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace kiln {

/// --target=cuda: the device code and the program the runtime keeps
/// (NAME_cuda_program: PTX, kernel names, state), `kiln_cuda_program()`
/// that the host code calls for it, and on device pointers
/// NAME_run_device(inputs, outputs, workspace), NAME_run_dims_device(dims,
/// inputs, outputs, workspace) and their _async forms taking a stream: the
/// generated NAME_run and NAME_run_dims (checks, then the launches) between
/// kiln_cuda_run_begin and kiln_cuda_run_end, which sends the launches,
/// waits for them (not in the async ones) and returns the first failure.
/// NAME_run and NAME_run_dims themselves are finished by finishCudaRun
/// once the descriptor exists.
LogicalResult addCudaEntryPoints(llvm::Module &m, const ModelInfo &info, std::string &error) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  SmallVector<llvm::Constant *> names;
  for (auto [i, k] : llvm::enumerate(info.gpuKernels))
    names.push_back(cString(m, k, info.name + ".kernel" + std::to_string(i)));
  auto *namesTy = llvm::ArrayType::get(ptr, names.size());
  auto *namesArray = new llvm::GlobalVariable(m, namesTy, true, llvm::GlobalValue::PrivateLinkage,
                                              llvm::ConstantArray::get(namesTy, names),
                                              info.name + ".kernels");
  auto *programTy =
      llvm::StructType::create(ctx, {ptr, ptr, i64, i32, ptr, ptr}, "kiln_cuda_program");
  llvm::Constant *null = llvm::ConstantPointerNull::get(cast<llvm::PointerType>(ptr));
  llvm::Constant *cubin = null;
  if (!info.gpuCubin.empty()) {
    llvm::Constant *bytes = llvm::ConstantDataArray::get(
        ctx, ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(info.gpuCubin.data()),
                               info.gpuCubin.size()));
    auto *g = new llvm::GlobalVariable(m, bytes->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, bytes,
                                       info.name + ".cubin");
    g->setAlignment(llvm::Align(64));
    cubin = g;
  }
  auto *program = new llvm::GlobalVariable(
      m, programTy, false, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantStruct::get(
          programTy, {cString(m, info.gpuPtx, info.name + ".ptx"), cubin,
                      llvm::ConstantInt::get(i64, info.gpuCubin.size()),
                      llvm::ConstantInt::get(i32, info.gpuKernels.size()), namesArray, null}),
      info.name + "_cuda_program");
  if (llvm::Function *get = m.getFunction("kiln_cuda_program")) {
    get->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", get));
    b.CreateRet(b.CreatePtrToInt(program, get->getReturnType()));
  }
  llvm::FunctionCallee begin = m.getOrInsertFunction(
      "kiln_cuda_run_begin", llvm::FunctionType::get(i32, {ptr, ptr}, false));
  llvm::FunctionCallee end = m.getOrInsertFunction(
      "kiln_cuda_run_end", llvm::FunctionType::get(i32, {ptr, i32}, false));
  // NAME_run and NAME_run_dims as the host's code generation made them (the
  // checks, then the launches) become NAME_<entry>_checked, wrapped in
  // NAME_<entry>_device(...): on the default stream, waiting for the
  // kernels, and NAME_<entry>_device_async(..., stream): queued on the
  // host's stream, returning at once.
  for (StringRef entryName : {"_run", "_run_dims"}) {
    llvm::Function *checked = m.getFunction(info.name + entryName.str());
    if (!checked) {
      error = "internal error: no NAME" + entryName.str() + " to wrap for the GPU";
      return failure();
    }
    checked->setName(info.name + entryName.str() + "_checked");
    checked->setLinkage(llvm::GlobalValue::InternalLinkage);
    for (bool async : {false, true}) {
      SmallVector<llvm::Type *> params(checked->getFunctionType()->params());
      if (async)
        params.push_back(ptr);
      auto *device = llvm::Function::Create(
          llvm::FunctionType::get(i32, params, false), llvm::GlobalValue::ExternalLinkage,
          info.name + entryName.str() + (async ? "_device_async" : "_device"), m);
      auto *entry = llvm::BasicBlock::Create(ctx, "entry", device);
      auto *run = llvm::BasicBlock::Create(ctx, "run", device);
      auto *failed = llvm::BasicBlock::Create(ctx, "no_gpu", device);
      llvm::IRBuilder<> b(entry);
      llvm::Value *stream = async ? static_cast<llvm::Value *>(device->getArg(params.size() - 1))
                                  : llvm::ConstantPointerNull::get(cast<llvm::PointerType>(ptr));
      llvm::Value *status = b.CreateCall(begin, {program, stream});
      b.CreateCondBr(b.CreateICmpEQ(status, llvm::ConstantInt::get(i32, 0)), run, failed);
      b.SetInsertPoint(failed);
      b.CreateRet(status);
      b.SetInsertPoint(run);
      SmallVector<llvm::Value *> args;
      for (unsigned i = 0; i < checked->getFunctionType()->getNumParams(); ++i)
        args.push_back(device->getArg(i));
      llvm::Value *rc = b.CreateCall(checked, args);
      llvm::Value *done =
          b.CreateCall(end, {program, llvm::ConstantInt::get(i32, async ? 0 : 1)});
      b.CreateRet(b.CreateSelect(b.CreateICmpNE(rc, llvm::ConstantInt::get(i32, 0)), rc, done));
    }
    // NAME_run and NAME_run_dims on host pointers (their bodies in
    // finishCudaRun).
    llvm::Function::Create(checked->getFunctionType(), llvm::GlobalValue::ExternalLinkage,
                           info.name + entryName.str(), m);
  }
  return success();
}

/// NAME_run(inputs, outputs, workspace) and NAME_run_dims(dims, inputs,
/// outputs, workspace) of a --target=cuda library: host pointers, copied
/// through the runtime's device buffers (sized for the dims, grown when a
/// run needs more) around NAME_run_dims_device (kiln_cuda_run_host); the
/// workspace is not used. NAME_run is one batch item (dims NULL for a
/// static model, one for a dynamic batch, symbolic or not); a model with
/// other symbolic dims has no values for it to run with: status 1, as on
/// the host, with a message. A dynamic batch of no items is only
/// checked (nothing runs, nothing is copied).
void finishCudaRun(llvm::Module &m, const ModelInfo &info) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Function *run = m.getFunction(info.name + "_run");
  llvm::Function *runDims = m.getFunction(info.name + "_run_dims");
  llvm::Function *device = m.getFunction(info.name + "_run_dims_device");
  llvm::GlobalVariable *program = m.getGlobalVariable(info.name + "_cuda_program", true);
  llvm::GlobalVariable *desc = m.getGlobalVariable(info.name + "_kiln_desc", true);
  llvm::FunctionCallee host = m.getOrInsertFunction(
      "kiln_cuda_run_host", llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr, ptr}, false));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", run));
  llvm::Constant *noDims = llvm::ConstantPointerNull::get(cast<llvm::PointerType>(ptr));
  {
    // No dims: kiln_cuda_run_host refuses them for a model with symbolic
    // dims (status 1) and says why in kiln_cuda_error.
    llvm::Value *dims = noDims;
    if (info.batchOnly() || (!info.symbolic() && !info.dynamicDim.empty())) {
      // One item of the dynamic batch (run item by item, or symbolic).
      SmallVector<uint64_t> ones(info.numDynamicDims(), 1);
      llvm::Constant *one = llvm::ConstantDataArray::get(ctx, ArrayRef<uint64_t>(ones));
      auto *g = new llvm::GlobalVariable(m, one->getType(), true,
                                         llvm::GlobalValue::PrivateLinkage, one,
                                         info.name + ".one_item");
      dims = g;
    }
    b.CreateRet(b.CreateCall(host, {program, desc, device, dims, run->getArg(0),
                                    run->getArg(1)}));
  }
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", runDims));
  if (!info.dynamicDim.empty()) {
    // No items: nothing runs and nothing is written (outputs that do not
    // depend on the batch included, as on the host), so the host's checks
    // alone, without copying the device buffers' contents back.
    llvm::Function *checked = m.getFunction(info.name + "_run_dims_checked");
    auto *none = llvm::BasicBlock::Create(ctx, "no_items", runDims);
    auto *some = llvm::BasicBlock::Create(ctx, "items", runDims);
    auto *load = llvm::BasicBlock::Create(ctx, "count", runDims);
    llvm::Value *dims = runDims->getArg(0);
    b.CreateCondBr(b.CreateIsNull(dims), some, load);
    b.SetInsertPoint(load);
    b.CreateCondBr(b.CreateICmpEQ(b.CreateLoad(b.getInt64Ty(), dims), b.getInt64(0)), none,
                   some);
    b.SetInsertPoint(none);
    b.CreateRet(b.CreateCall(checked, {dims, runDims->getArg(1), runDims->getArg(2),
                                       runDims->getArg(3)}));
    b.SetInsertPoint(some);
  }
  b.CreateRet(b.CreateCall(host, {program, desc, device, runDims->getArg(0),
                                  runDims->getArg(1), runDims->getArg(2)}));
}

bool isGpuArch(StringRef arch) {
  return arch == "sm_80" || arch == "sm_86" || arch == "sm_89" || arch == "sm_90";
}

std::string gpuArchFor(bool cuda, StringRef requested, std::string &error) {
  if (!cuda) {
    if (!requested.empty())
      error = "--gpu-arch goes with --target=cuda";
    return "";
  }
  std::string arch = requested.empty() ? "sm_80" : requested.str();
  if (!isGpuArch(arch)) {
    error = "--gpu-arch=" + arch + ": expected sm_80, sm_86, sm_89 or sm_90";
    return "";
  }
  return arch;
}

void withoutCpuKernels(TargetDescription &desc) {
  desc.vectorBits = 0;
  desc.prefetchDistance = 0;
  desc.int8DotProduct.clear();
}

LogicalResult emitPtx(ModuleOp module, StringRef arch, int optLevel, std::string &ptx,
                      std::string &error) {
  SmallVector<gpu::GPUModuleOp> kernels = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
  if (kernels.size() > 1) {
    error = "internal error: several gpu.modules after the llvm phase";
    return failure();
  }
  TargetOptions options;
  options.triple = "nvptx64-nvidia-cuda";
  options.cpu = arch.str();
  // PTX ISA 8.0 (CUDA 12.0): every architecture kiln takes, sm_90 included.
  options.features = "+ptx80";
  options.optLevel = optLevel;
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, error);
  if (!tm)
    return failure();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m;
  if (kernels.empty()) {
    m = std::make_unique<llvm::Module>("kiln_kernels", ctx); // Nothing runs on the GPU.
  } else {
    m = translateModuleToLLVMIR(kernels.front(), ctx, "kiln_kernels");
    if (!m) {
      error = "translating the device code to LLVM IR failed";
      return failure();
    }
  }
  m->setTargetTriple(tm->getTargetTriple());
  m->setDataLayout(tm->createDataLayout());
  std::string verifyError;
  llvm::raw_string_ostream vos(verifyError);
  if (llvm::verifyModule(*m, &vos)) {
    error = "internal error: invalid device LLVM IR: " + verifyError;
    return failure();
  }
  // A testing hook: the device code as LLVM IR before optimisation, for
  // utils/gpu_emulate.py, which runs it on the host.
  if (const char *dump = std::getenv("KILN_DUMP_DEVICE_LLVM"); dump && *dump) {
    std::error_code ec;
    llvm::raw_fd_ostream os(dump, ec);
    if (ec) {
      error = std::string("cannot write '") + dump + "': " + ec.message();
      return failure();
    }
    m->print(os, nullptr);
  }
  optimize(*m, *tm, optLevel);
  Bytes out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX back end cannot emit PTX";
    return failure();
  }
  pm.run(*m);
  ptx.assign(out.begin(), out.end());
  return success();
}

std::string findPtxas() {
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  SmallVector<std::string> roots;
  for (const char *var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char *root = std::getenv(var))
      roots.push_back(root);
  roots.push_back("/usr/local/cuda");
  for (const std::string &root : roots) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return path.str().str();
  }
  return "";
}

LogicalResult assemblePtx(StringRef ptxas, StringRef ptx, StringRef arch, std::string &cubin,
                          std::string &error) {
  llvm::SmallString<128> in, out, log;
  for (auto [path, ext] : {std::pair{&in, "ptx"}, {&out, "cubin"}, {&log, "log"}})
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("kiln-ptxas", ext, *path)) {
      error = "cannot create a temporary file: " + ec.message();
      return failure();
    }
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
    llvm::sys::fs::remove(log);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec) {
      error = "cannot write '" + in.str().str() + "': " + ec.message();
      return failure();
    }
    os << ptx;
  }
  std::string archFlag = "-arch=" + arch.str();
  SmallVector<StringRef> args = {ptxas, archFlag, in, "-o", out};
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &message);
  auto read = [](StringRef path) -> std::string {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(path);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  };
  if (rc != 0) {
    error = "internal error: ptxas (" + ptxas.str() + ") rejects the device code: " +
            (message.empty() ? read(log) : message);
    return failure();
  }
  cubin = read(out);
  if (cubin.empty()) {
    error = "ptxas wrote no cubin";
    return failure();
  }
  return success();
}

} // namespace kiln
