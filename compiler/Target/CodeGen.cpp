//===- CodeGen.cpp - LLVM dialect -> optimised machine code ----------------===//
//
// Translates the LLVM-dialect module to LLVM IR, makes the planned @main
// internal, adds the exported NAME_run entry point (argument checks, then
// the call with the bare pointers) and the NAME_kiln_desc descriptor, then
// runs LLVM's -O<n> pipeline and the target's code generator. Objects are
// measured for the header (section sizes, the stack bound) and, for bare
// metal, checked for what they need from outside.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CodeGenInternal.h"
#include "compiler/Target/Target.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <functional>
#include <limits>

using namespace mlir;

namespace kiln {

llvm::Constant *cString(llvm::Module &m, StringRef s, const llvm::Twine &name) {
  llvm::Constant *init = llvm::ConstantDataArray::getString(m.getContext(), s);
  auto *g = new llvm::GlobalVariable(m, init->getType(), true,
                                     llvm::GlobalValue::PrivateLinkage, init, name);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return g;
}

namespace {

/// The entry points: an internal `run_items(inputs, outputs, workspace, n)`
/// that checks its pointers and runs the planned function once per batch
/// item (once for a static model), then
///   NAME_run(inputs, outputs, workspace)             one item
///   NAME_run_dims(dims, inputs, outputs, workspace)  dims[0] items
///   NAME_workspace_size(dims)                        the workspace's bytes
LogicalResult addRunFunctions(llvm::Module &m, llvm::Function *impl,
                              const ModelInfo &info, std::string &error) {
  llvm::LLVMContext &ctx = m.getContext();
  size_t nin = info.inputs.size(), nout = info.outputs.size();
  bool symbolic = info.symbolic();
  size_t numSymbols = info.symbolicDims.size();
  size_t expected = nin + nout + 1 + numSymbols;
  if (impl->arg_size() != expected) {
    error = "internal error: the compiled function takes " +
            std::to_string(impl->arg_size()) + " arguments, expected " +
            std::to_string(expected);
    return failure();
  }
  // With a symbolic dim: its workspace size function, from the memory plan
  // (none when no buffer depends on the dim, or --max-shape made the plan
  // static).
  bool sizedAtRunTime = symbolic && info.workspaceSize < 0;
  llvm::Function *wsSize = nullptr;
  if (sizedAtRunTime && !(wsSize = m.getFunction("main_workspace_size"))) {
    error = "internal error: no workspace size function for the dynamic dim";
    return failure();
  }
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  bool dynamic = !info.dynamicDim.empty();
  // Whether a value of symbolic dim k is outside what the code accepts:
  // below its smallest value, or above 2^31 - 1, --max-shape's and the
  // memory plan's limit (its sizes cannot overflow below it).
  auto outOfRange = [&](llvm::IRBuilder<> &b, llvm::Value *value, size_t k) {
    return b.CreateOr(
        b.CreateICmpUGT(value, llvm::ConstantInt::get(i64, info.symbolicTop(k))),
        b.CreateICmpSLT(value, llvm::ConstantInt::get(i64, info.symbolicDims[k].min)));
  };
  // c0 + sum c_k values[k] for an expression's coefficients: for values
  // in range it cannot overflow (coefficients are below 2^20, c0's
  // magnitude below 2^40).
  auto expressionValue = [&](llvm::IRBuilder<> &b, const std::vector<int64_t> &c,
                             ArrayRef<llvm::Value *> values) {
    llvm::Value *sum = llvm::ConstantInt::get(i64, c[0]);
    for (auto [k, v] : llvm::enumerate(values))
      if (k + 1 < c.size() && c[k + 1])
        sum = b.CreateAdd(sum, b.CreateMul(v, llvm::ConstantInt::get(i64, c[k + 1])));
    return sum;
  };
  // Whether any of `values` (one per symbolic dim) is out of range, or
  // they break one of the model's constraints (c0 + sum c_k dim_k >= 0).
  auto anyOutOfRange = [&](llvm::IRBuilder<> &b, ArrayRef<llvm::Value *> values) {
    llvm::Value *bad = b.getFalse();
    for (auto [k, v] : llvm::enumerate(values))
      bad = b.CreateOr(bad, outOfRange(b, v, k));
    for (const ModelInfo::DimExpression &constraint : info.dimConstraints)
      bad = b.CreateOr(bad, b.CreateICmpSLT(expressionValue(b, constraint.coefficients, values),
                                            llvm::ConstantInt::get(i64, 0)));
    return bad;
  };

  // run_items(inputs, outputs, workspace, items, dim...): one value per
  // symbolic dim (one unused without).
  SmallVector<llvm::Type *> itemsParams = {ptr, ptr, ptr, i64};
  itemsParams.append(std::max<size_t>(numSymbols, 1), i64);
  auto *itemsType = llvm::FunctionType::get(i32, itemsParams, false);
  auto *items = llvm::Function::Create(itemsType, llvm::GlobalValue::InternalLinkage,
                                       info.name + "_run_items", m);
  items->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Argument *ins = items->getArg(0), *outs = items->getArg(1), *ws = items->getArg(2),
                 *count = items->getArg(3);
  SmallVector<llvm::Value *> symbols;
  for (size_t k = 0; k < numSymbols; ++k) {
    items->getArg(4 + k)->setName("dim" + std::to_string(k));
    symbols.push_back(items->getArg(4 + k));
  }
  ins->setName("inputs");
  outs->setName("outputs");
  ws->setName("workspace");
  count->setName("items");
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", items);
  auto *bad = llvm::BasicBlock::Create(ctx, "invalid_argument", items);
  llvm::IRBuilder<> b(entry);
  // Each check branches to `bad` or falls into a new block.
  auto check = [&](llvm::Value *isBad) {
    auto *next = llvm::BasicBlock::Create(ctx, "ok", items);
    b.CreateCondBr(isBad, bad, next);
    b.SetInsertPoint(next);
  };
  check(b.CreateICmpSLT(count, llvm::ConstantInt::get(i64, 0)));
  if (symbolic)
    check(anyOutOfRange(b, symbols));
  // a * b, refused (status 1) if it overflows.
  auto mulChecked = [&](llvm::Value *x, llvm::Value *y) -> llvm::Value * {
    llvm::Value *r = b.CreateBinaryIntrinsic(llvm::Intrinsic::smul_with_overflow, x, y);
    check(b.CreateExtractValue(r, 1));
    return b.CreateExtractValue(r, 0);
  };
  // The outputs' dim expressions' values after the symbolic dims' (the
  // dims are in range here, and the constraints keep sums >= 0 and each
  // floor's dividend at least its divisor).
  using Kind = ModelInfo::DimExpression::Kind;
  SmallVector<llvm::Value *> dimValues(symbols.begin(), symbols.end());
  for (const ModelInfo::DimExpression &e : info.dimExprs) {
    if (e.kind == Kind::Floor)
      dimValues.push_back(b.CreateSDiv(
          b.CreateAdd(dimValues[e.args[0]], llvm::ConstantInt::get(i64, e.args[1])),
          llvm::ConstantInt::get(i64, e.args[2])));
    else if (e.kind == Kind::Product)
      dimValues.push_back(mulChecked(
          mulChecked(llvm::ConstantInt::get(i64, e.args[0]), dimValues[e.args[1]]),
          dimValues[e.args[2]]));
    else
      dimValues.push_back(expressionValue(b, e.coefficients, symbols));
  }
  // A tensor's bytes per item: the static part times each symbolic dim
  // and expression once for each dim that has it.
  auto tensorBytes = [&](const TensorInfo &t) -> llvm::Value * {
    llvm::Value *bytes = llvm::ConstantInt::get(i64, t.numBytes());
    for (auto [k, v] : llvm::enumerate(dimValues))
      for (int64_t j = 0; j < t.numSymbolic(k); ++j)
        bytes = mulChecked(bytes, v);
    return bytes;
  };
  // So many items that an offset would overflow: refused. So is a tensor
  // whose dims make it too large for the target's sizes (the model's code
  // indexes it in the pointer-wide index type).
  unsigned pointerBits = std::min(m.getDataLayout().getPointerSizeInBits(), 64u);
  llvm::Value *largest = llvm::ConstantInt::get(i64, (int64_t(1) << (pointerBits - 2)) - 1);
  SmallVector<llvm::Value *> itemBytes(nin + nout, nullptr);
  for (size_t i = 0; i < nin + nout; ++i) {
    const TensorInfo &t = i < nin ? info.inputs[i] : info.outputs[i - nin];
    if (t.dynamicBatch || t.hasSymbolic()) {
      itemBytes[i] = tensorBytes(t);
      check(b.CreateICmpSGT(itemBytes[i], largest));
    }
    if (t.dynamicBatch)
      mulChecked(itemBytes[i], count);
  }
  llvm::Value *none = b.CreateICmpEQ(count, llvm::ConstantInt::get(i64, 0));
  // Whether a symbolic dim of `t` is 0 (it then has no elements).
  auto symbolicEmpty = [&](const TensorInfo &t) -> llvm::Value * {
    llvm::Value *empty = b.getFalse();
    for (auto [k, v] : llvm::enumerate(dimValues))
      if (t.numSymbolic(k))
        empty = b.CreateOr(empty, b.CreateICmpEQ(v, llvm::ConstantInt::get(i64, 0)));
    return empty;
  };
  SmallVector<llvm::Value *> bases;
  // A tensor without elements may be passed as NULL (nothing is read or
  // written through it); so may a batched one when there are no items.
  auto loadAll = [&](llvm::Value *array, ArrayRef<TensorInfo> tensors) {
    if (tensors.empty())
      return;
    check(b.CreateIsNull(array));
    for (size_t i = 0; i < tensors.size(); ++i) {
      llvm::Value *slot = b.CreateConstInBoundsGEP1_64(ptr, array, i);
      llvm::Value *p = b.CreateLoad(ptr, slot);
      if (!llvm::is_contained(tensors[i].dims, 0)) {
        llvm::Value *isNull = b.CreateIsNull(p);
        if (tensors[i].dynamicBatch)
          isNull = b.CreateAnd(isNull, b.CreateNot(none));
        if (tensors[i].hasSymbolic())
          isNull = b.CreateAnd(isNull, b.CreateNot(symbolicEmpty(tensors[i])));
        check(isNull);
      }
      bases.push_back(p);
    }
  };
  loadAll(ins, info.inputs);
  loadAll(outs, info.outputs);
  if (sizedAtRunTime) {
    // The planned function's index type may be narrower than 64 bits.
    llvm::Type *indexType = wsSize->getFunctionType()->getParamType(0);
    SmallVector<llvm::Value *> sizeArgs;
    for (llvm::Value *v : symbols)
      sizeArgs.push_back(b.CreateTrunc(v, indexType));
    llvm::Value *bytes = b.CreateSExtOrTrunc(b.CreateCall(wsSize, sizeArgs), i64);
    check(b.CreateAnd(b.CreateIsNull(ws),
                      b.CreateICmpSGT(bytes, llvm::ConstantInt::get(i64, 0))));
    llvm::Type *intptr = m.getDataLayout().getIntPtrType(ctx);
    llvm::Value *low = b.CreateAnd(b.CreatePtrToInt(ws, intptr),
                                   info.workspaceAlignment - 1);
    check(b.CreateICmpNE(low, llvm::ConstantInt::get(intptr, 0)));
  } else if (info.workspaceSize > 0) {
    check(b.CreateIsNull(ws));
    llvm::Type *intptr = m.getDataLayout().getIntPtrType(ctx);
    llvm::Value *low = b.CreateAnd(b.CreatePtrToInt(ws, intptr),
                                   info.workspaceAlignment - 1);
    check(b.CreateICmpNE(low, llvm::ConstantInt::get(intptr, 0)));
  }
  // for (item = 0; item < items; ++item): each batched tensor at its item's
  // offset; the others as they are.
  auto *header = llvm::BasicBlock::Create(ctx, "item", items);
  auto *body = llvm::BasicBlock::Create(ctx, "run_item", items);
  auto *done = llvm::BasicBlock::Create(ctx, "done", items);
  // A model with string tensors runs inside a string arena of the runtime
  // (its strings are freed at the end; the status says if memory ran out).
  bool strings = llvm::any_of(m.functions(), [](const llvm::Function &f) {
    return f.isDeclaration() && f.getName().starts_with("kiln_string_");
  });
  llvm::Value *arena = nullptr;
  llvm::FunctionCallee arenaEnd;
  if (strings) {
    // struct kiln_string_arena: three pointers and an int64_t.
    auto *arenaType = llvm::ArrayType::get(i64, 4);
    {
      llvm::IRBuilder<> top(&items->getEntryBlock(), items->getEntryBlock().begin());
      arena = top.CreateAlloca(arenaType, nullptr, "string_arena");
    }
    auto begin = m.getOrInsertFunction("kiln_string_run_begin",
                                       llvm::FunctionType::get(b.getVoidTy(), {ptr}, false));
    arenaEnd = m.getOrInsertFunction("kiln_string_run_end",
                                     llvm::FunctionType::get(i32, {ptr}, false));
    b.CreateCall(begin, {arena});
  }
  llvm::BasicBlock *pre = b.GetInsertBlock();
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *item = b.CreatePHI(i64, 2, "item");
  item->addIncoming(llvm::ConstantInt::get(i64, 0), pre);
  b.CreateCondBr(b.CreateICmpSLT(item, count), body, done);
  b.SetInsertPoint(body);
  SmallVector<llvm::Value *> args;
  for (size_t i = 0; i < nin + nout; ++i) {
    const TensorInfo &t = i < nin ? info.inputs[i] : info.outputs[i - nin];
    llvm::Value *p = bases[i];
    if (t.dynamicBatch)
      p = b.CreateInBoundsGEP(i8, p, b.CreateMul(item, itemBytes[i]));
    args.push_back(p);
  }
  for (auto [k, v] : llvm::enumerate(symbols))
    args.push_back(b.CreateTrunc(v, impl->getFunctionType()->getParamType(nin + nout + k)));
  args.push_back(ws);
  b.CreateCall(impl, args);
  item->addIncoming(b.CreateAdd(item, llvm::ConstantInt::get(i64, 1)), body);
  b.CreateBr(header);
  b.SetInsertPoint(done);
  if (strings)
    b.CreateRet(b.CreateCall(arenaEnd, {arena}));
  else
    b.CreateRet(llvm::ConstantInt::get(i32, 0));
  b.SetInsertPoint(bad);
  b.CreateRet(llvm::ConstantInt::get(i32, 1)); // KILN_STATUS_INVALID_ARGUMENT

  // An exported NAME_<suffix>(names...), with its entry block to build in.
  auto exported = [&](StringRef suffix, llvm::Type *result,
                      ArrayRef<StringRef> names) -> llvm::Function * {
    SmallVector<llvm::Type *> params(names.size(), ptr);
    auto *f = llvm::Function::Create(llvm::FunctionType::get(result, params, false),
                                     llvm::GlobalValue::ExternalLinkage,
                                     info.name + "_" + suffix, m);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    for (auto [arg, name] : llvm::zip(f->args(), names))
      arg.setName(name);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
    return f;
  };

  // NAME_run: one item (a dynamic batch kept whole: dims 1). With another
  // symbolic dim there is no value to run with: status 1.
  llvm::Function *run = exported("run", i32, {"inputs", "outputs", "workspace"});
  if (symbolic && !info.batchOnly()) {
    b.CreateRet(llvm::ConstantInt::get(i32, 1));
  } else {
    SmallVector<llvm::Value *> args = {run->getArg(0), run->getArg(1), run->getArg(2),
                                       llvm::ConstantInt::get(i64, 1)};
    args.append(std::max<size_t>(numSymbols, 1),
                llvm::ConstantInt::get(i64, symbolic ? 1 : 0));
    b.CreateRet(b.CreateCall(items, args));
  }

  // The dims array of `f` (its first argument): `onNull` is returned when
  // it is NULL (and the model has dynamic dims); then dims[k] for the batch
  // (1 without one) and each symbolic dim (one 0 without any).
  auto readDims = [&](llvm::Function *f, llvm::Value *onNull) {
    llvm::Value *n = llvm::ConstantInt::get(i64, 1);
    SmallVector<llvm::Value *> dims;
    if (!symbolic)
      dims.push_back(llvm::ConstantInt::get(i64, 0));
    if (!dynamic && !symbolic)
      return std::make_pair(n, dims);
    auto *noDims = llvm::BasicBlock::Create(ctx, "no_dims", f);
    auto *haveDims = llvm::BasicBlock::Create(ctx, "dims", f);
    b.CreateCondBr(b.CreateIsNull(f->getArg(0)), noDims, haveDims);
    b.SetInsertPoint(noDims);
    b.CreateRet(onNull);
    b.SetInsertPoint(haveDims);
    if (dynamic)
      n = b.CreateLoad(i64, f->getArg(0));
    for (size_t k = 0; k < numSymbols; ++k)
      dims.push_back(b.CreateLoad(
          i64, b.CreateConstInBoundsGEP1_64(i64, f->getArg(0), info.symbolicIndex(k))));
    return std::make_pair(n, dims);
  };

  // NAME_run_dims: the dynamic dims' values, then as NAME_run; a static
  // model ignores `dims` (which may be NULL).
  llvm::Function *runDims =
      exported("run_dims", i32, {"dims", "inputs", "outputs", "workspace"});
  auto [n, dims] = readDims(runDims, llvm::ConstantInt::get(i32, 1));
  SmallVector<llvm::Value *> itemsArgs = {runDims->getArg(1), runDims->getArg(2),
                                          runDims->getArg(3), n};
  itemsArgs.append(dims.begin(), dims.end());
  b.CreateRet(b.CreateCall(items, itemsArgs));

  // NAME_workspace_size: the same for every batch size (one item at a
  // time); a function of the symbolic dim, -1 out of its range.
  llvm::Function *size = exported("workspace_size", i64, {"dims"});
  if (!symbolic) {
    b.CreateRet(llvm::ConstantInt::get(i64, info.workspaceSize));
    return success();
  }
  if (!sizedAtRunTime) {
    // The static plan holds every value in range.
    SmallVector<llvm::Value *> values = readDims(size, llvm::ConstantInt::get(i64, -1)).second;
    b.CreateRet(b.CreateSelect(anyOutOfRange(b, values), llvm::ConstantInt::get(i64, -1),
                               llvm::ConstantInt::get(i64, info.workspaceSize)));
    return success();
  }
  llvm::Value *minusOne = llvm::ConstantInt::get(i64, -1);
  SmallVector<llvm::Value *> values = readDims(size, minusOne).second;
  auto *inRange = llvm::BasicBlock::Create(ctx, "in_range", size);
  auto *refuse = llvm::BasicBlock::Create(ctx, "out_of_range", size);
  b.CreateCondBr(anyOutOfRange(b, values), refuse, inRange);
  b.SetInsertPoint(refuse);
  b.CreateRet(minusOne);
  b.SetInsertPoint(inRange);
  llvm::Type *indexType = wsSize->getFunctionType()->getParamType(0);
  SmallVector<llvm::Value *> sizeArgs;
  for (llvm::Value *v : values)
    sizeArgs.push_back(b.CreateTrunc(v, indexType));
  b.CreateRet(b.CreateSExtOrTrunc(b.CreateCall(wsSize, sizeArgs), i64));
  return success();
}

/// NAME_kiln_desc and NAME_describe().
void addDescriptor(llvm::Module &m, const ModelInfo &info) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  auto *tensorTy = llvm::StructType::create(ctx, {ptr, i32, i32, ptr, i64, i64},
                                            "kiln_tensor_desc");
  auto *modelTy = llvm::StructType::create(
      ctx, {i32, ptr, i32, i32, ptr, ptr, i64, i64, ptr, i32, ptr, ptr, ptr, i32, ptr, ptr, ptr},
      "kiln_model_desc");
  llvm::Function *run = m.getFunction(info.name + "_run");
  llvm::Function *runDims = m.getFunction(info.name + "_run_dims");
  llvm::Function *wsSize = m.getFunction(info.name + "_workspace_size");
  auto tensors = [&](const std::vector<TensorInfo> &list, StringRef kind) -> llvm::Constant * {
    if (list.empty())
      return llvm::ConstantPointerNull::get(cast<llvm::PointerType>(ptr));
    SmallVector<llvm::Constant *> elems;
    for (auto [i, t] : llvm::enumerate(list)) {
      std::string base = info.name + "." + kind.str() + std::to_string(i);
      SmallVector<uint64_t> dims;
      for (int64_t d : t.dims)
        dims.push_back(static_cast<uint64_t>(info.descriptorDim(d)));
      if (t.dynamicBatch)
        dims[0] = static_cast<uint64_t>(-1); // Dynamic dim 0.
      llvm::Constant *dimsInit = llvm::ConstantDataArray::get(ctx, ArrayRef<uint64_t>(dims));
      llvm::Constant *dimsPtr = llvm::ConstantPointerNull::get(cast<llvm::PointerType>(ptr));
      if (!dims.empty()) {
        auto *g = new llvm::GlobalVariable(m, dimsInit->getType(), true,
                                           llvm::GlobalValue::PrivateLinkage,
                                           dimsInit, base + ".dims");
        dimsPtr = g;
      }
      elems.push_back(llvm::ConstantStruct::get(
          tensorTy, {cString(m, t.name, base + ".name"),
                     llvm::ConstantInt::get(i32, t.dtype),
                     llvm::ConstantInt::get(i32, t.dims.size()), dimsPtr,
                     llvm::ConstantInt::get(i64, t.numElements()),
                     llvm::ConstantInt::get(i64, t.numBytes())}));
    }
    auto *arrTy = llvm::ArrayType::get(tensorTy, elems.size());
    return new llvm::GlobalVariable(m, arrTy, true, llvm::GlobalValue::PrivateLinkage,
                                    llvm::ConstantArray::get(arrTy, elems),
                                    info.name + "." + kind.str());
  };
  // The names of the dynamic dims: the batch, then the symbolic dims.
  llvm::Constant *dimNames = llvm::ConstantPointerNull::get(cast<llvm::PointerType>(ptr));
  int numDynamic = info.numDynamicDims();
  if (numDynamic) {
    SmallVector<std::string> all;
    if (!info.dynamicDim.empty())
      all.push_back(info.dynamicDim);
    for (const ModelInfo::SymbolicDim &d : info.symbolicDims)
      all.push_back(d.name);
    SmallVector<llvm::Constant *> names;
    for (const std::string &name : all)
      names.push_back(cString(m, name, info.name + ".dim" + std::to_string(names.size())));
    auto *arrTy = llvm::ArrayType::get(ptr, names.size());
    dimNames = new llvm::GlobalVariable(m, arrTy, true, llvm::GlobalValue::PrivateLinkage,
                                        llvm::ConstantArray::get(arrTy, names),
                                        info.name + ".dims");
  }
  // The outputs' dim expressions: one row of c0 and a coefficient per
  // dynamic dim (the batch's 0) each, and their texts.
  llvm::Constant *exprs = llvm::ConstantPointerNull::get(cast<llvm::PointerType>(ptr));
  llvm::Constant *exprNames = exprs, *exprOps = exprs;
  if (!info.dimExprs.empty()) {
    SmallVector<uint64_t> rows, ops;
    SmallVector<llvm::Constant *> names;
    for (auto [j, e] : llvm::enumerate(info.dimExprs)) {
      // How it is computed (abi_version 5): a sum, floor or product, of
      // dims numbered as the descriptor numbers them.
      ops.push_back(static_cast<uint64_t>(e.kind));
      if (e.kind == ModelInfo::DimExpression::Kind::Floor)
        ops.append({static_cast<uint64_t>(info.descriptorIndex(e.args[0])),
                    static_cast<uint64_t>(e.args[1]), static_cast<uint64_t>(e.args[2])});
      else if (e.kind == ModelInfo::DimExpression::Kind::Product)
        ops.append({static_cast<uint64_t>(e.args[0]),
                    static_cast<uint64_t>(info.descriptorIndex(e.args[1])),
                    static_cast<uint64_t>(info.descriptorIndex(e.args[2]))});
      else
        ops.append({0, 0, 0});
      rows.push_back(static_cast<uint64_t>(e.coefficients[0]));
      if (!info.dynamicDim.empty())
        rows.push_back(0);
      for (int64_t c : ArrayRef(e.coefficients).drop_front())
        rows.push_back(static_cast<uint64_t>(c));
      names.push_back(cString(m, e.text, info.name + ".expr" + std::to_string(j)));
    }
    llvm::Constant *rowsInit = llvm::ConstantDataArray::get(ctx, ArrayRef<uint64_t>(rows));
    exprs = new llvm::GlobalVariable(m, rowsInit->getType(), true,
                                     llvm::GlobalValue::PrivateLinkage, rowsInit,
                                     info.name + ".exprs");
    auto *arrTy = llvm::ArrayType::get(ptr, names.size());
    exprNames = new llvm::GlobalVariable(m, arrTy, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(arrTy, names),
                                         info.name + ".expr_names");
    llvm::Constant *opsInit = llvm::ConstantDataArray::get(ctx, ArrayRef<uint64_t>(ops));
    exprOps = new llvm::GlobalVariable(m, opsInit->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, opsInit,
                                       info.name + ".expr_ops");
  }
  llvm::Constant *init = llvm::ConstantStruct::get(
      modelTy, {llvm::ConstantInt::get(i32, 5), cString(m, info.name, info.name + ".name"),
                llvm::ConstantInt::get(i32, info.inputs.size()),
                llvm::ConstantInt::get(i32, info.outputs.size()),
                tensors(info.inputs, "inputs"), tensors(info.outputs, "outputs"),
                llvm::ConstantInt::get(i64, info.workspaceSize),
                llvm::ConstantInt::get(i64, info.workspaceAlignment), run,
                llvm::ConstantInt::get(i32, numDynamic), dimNames, runDims, wsSize,
                llvm::ConstantInt::get(i32, info.dimExprs.size()), exprs, exprNames,
                exprOps});
  auto *desc = new llvm::GlobalVariable(m, modelTy, true,
                                        llvm::GlobalValue::ExternalLinkage, init,
                                        info.name + "_kiln_desc");
  desc->setAlignment(llvm::Align(8));
  auto *fn = llvm::Function::Create(llvm::FunctionType::get(ptr, false),
                                    llvm::GlobalValue::ExternalLinkage,
                                    info.name + "_describe", m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(desc);
}

} // namespace

void optimize(llvm::Module &m, llvm::TargetMachine &tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = level >= 2;
  tuning.SLPVectorization = level >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel opt = llvm::OptimizationLevel::O3;
  switch (level) {
  case 0: opt = llvm::OptimizationLevel::O0; break;
  case 1: opt = llvm::OptimizationLevel::O1; break;
  case 2: opt = llvm::OptimizationLevel::O2; break;
  default: break;
  }
  llvm::ModulePassManager mpm = level == 0
                                    ? pb.buildO0DefaultPipeline(opt)
                                    : pb.buildPerModuleDefaultPipeline(opt);
  mpm.run(m, mam);
}

namespace {

/// Direct calls between the module's defined functions, by name; an
/// indirect call is an empty name (unknown callee).
using CallGraph = llvm::StringMap<llvm::SmallVector<std::string>>;

CallGraph callGraph(llvm::Module &m) {
  CallGraph graph;
  for (llvm::Function &f : m) {
    if (f.isDeclaration())
      continue;
    auto &callees = graph[f.getName()];
    for (llvm::Instruction &inst : llvm::instructions(f)) {
      auto *call = dyn_cast<llvm::CallBase>(&inst);
      if (!call)
        continue;
      llvm::Function *callee = call->getCalledFunction();
      if (!callee)
        callees.push_back(""); // Indirect: unknown.
      else if (!callee->isDeclaration() && !callee->isIntrinsic())
        callees.push_back(callee->getName().str());
    }
  }
  return graph;
}

/// Frame sizes by function name from a stack-usage file
/// ("module:function<TAB>bytes<TAB>static"); dynamic frames are -1.
llvm::StringMap<int64_t> readStackUsage(StringRef path) {
  llvm::StringMap<int64_t> frames;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return frames;
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  for (StringRef line : lines) {
    SmallVector<StringRef, 3> fields;
    line.split(fields, '\t');
    int64_t bytes;
    if (fields.size() != 3 || fields[1].getAsInteger(10, bytes))
      continue;
    StringRef fn = fields[0].split(':').second; // "<module>:<function>"
    frames[fn] = fields[2] == "static" ? bytes : -1;
  }
  return frames;
}

/// The deepest chain of frames from `root`; -1 when unknown (a dynamic
/// frame, an indirect call, recursion, a missing frame size).
int64_t deepestStack(const CallGraph &calls, const llvm::StringMap<int64_t> &frames,
                     StringRef root) {
  llvm::StringMap<int64_t> done;
  llvm::StringSet<> active;
  std::function<int64_t(StringRef)> visit = [&](StringRef fn) -> int64_t {
    if (auto it = done.find(fn); it != done.end())
      return it->second;
    auto frame = frames.find(fn);
    auto edges = calls.find(fn);
    if (frame == frames.end() || frame->second < 0 || edges == calls.end() ||
        !active.insert(fn).second)
      return -1;
    int64_t deepest = 0;
    for (const std::string &callee : edges->second) {
      int64_t d = callee.empty() ? -1 : visit(callee);
      if (d < 0) {
        deepest = -1;
        break;
      }
      deepest = std::max(deepest, d);
    }
    active.erase(fn);
    int64_t total = deepest < 0 ? -1 : frame->second + deepest;
    done[fn] = total;
    return total;
  };
  return visit(root);
}

/// Sizes of the object's allocated sections; on bare metal, also what it
/// needs from outside.
LogicalResult measureObject(StringRef bytes, bool bareMetal, CodeStats &stats,
                            std::string &error) {
  auto object = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(bytes, "model.o"));
  if (!object) {
    error = "internal error: cannot read the object just written: " +
            llvm::toString(object.takeError());
    return failure();
  }
  auto *elf = dyn_cast<llvm::object::ELFObjectFileBase>(object->get());
  if (!elf)
    return success(); // Sizes are read from ELF objects only.
  for (llvm::object::ELFSectionRef section : elf->sections()) {
    uint64_t flags = section.getFlags();
    if (!(flags & llvm::ELF::SHF_ALLOC))
      continue;
    int64_t size = static_cast<int64_t>(section.getSize());
    if (flags & llvm::ELF::SHF_EXECINSTR)
      stats.codeSize += size;
    else if (section.getType() == llvm::ELF::SHT_NOBITS)
      stats.bssSize += size;
    else if (flags & llvm::ELF::SHF_WRITE)
      stats.dataSize += size;
    else
      stats.constSize += size;
  }
  stats.known = true;
  if (!bareMetal)
    return success();
  // Firmware links against a C library for memcpy/memmove/memset (and ARM's
  // __aeabi_mem* forms of them) and the compiler's runtime helpers
  // (__aeabi_*, __*: soft float, 64-bit division); nothing else.
  std::string unexpected;
  for (const llvm::object::SymbolRef &symbol : elf->symbols()) {
    auto flags = symbol.getFlags();
    auto name = symbol.getName();
    if (!flags || !name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(name.takeError());
      continue;
    }
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined) || name->empty())
      continue;
    if (*name == "memcpy" || *name == "memmove" || *name == "memset" ||
        name->starts_with("__"))
      continue;
    unexpected += (unexpected.empty() ? "'" : ", '") + name->str() + "'";
  }
  if (!unexpected.empty()) {
    error = "internal error: the firmware object calls " + unexpected +
            ", which a bare-metal target does not provide (kiln's objects need "
            "only memcpy/memmove/memset and the compiler runtime); please "
            "report this";
    return failure();
  }
  return success();
}

} // namespace

bool isHostTriple(StringRef triple) {
  if (triple.empty())
    return true;
  return llvm::Triple(llvm::Triple::normalize(triple)) ==
         llvm::Triple(llvm::Triple::normalize(llvm::sys::getDefaultTargetTriple()));
}

LogicalResult emitCode(ModuleOp module, const ModelInfo &info,
                       const TargetOptions &options, OutputKind kind, Bytes &out,
                       CodeStats &stats, std::string &error) {
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, error);
  if (!tm)
    return failure();
  const llvm::Triple &triple = tm->getTargetTriple();
  // Argument attributes that only kiln reads (onnx.name, kiln.workspace).
  module.walk([](LLVM::LLVMFuncOp f) {
    f.removeArgAttrsAttr();
    f.removeResAttrsAttr();
  });
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = translateModuleToLLVMIR(module, ctx, info.name);
  if (!m) {
    error = "translating the LLVM dialect to LLVM IR failed";
    return failure();
  }
  m->setTargetTriple(triple);
  m->setDataLayout(tm->createDataLayout());
  llvm::Function *impl = m->getFunction("main");
  if (!impl) {
    error = "internal error: no @main after lowering";
    return failure();
  }
  impl->setName(info.name + "_main_impl");
  // Every function the passes defined (@main, the outlined parallel loops)
  // is internal: a library exports only NAME_* symbols, so that many
  // models link into one program.
  for (llvm::Function &f : *m)
    if (!f.isDeclaration())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  if (failed(addRunFunctions(*m, impl, info, error)))
    return failure();
  if (info.cuda() && failed(addCudaEntryPoints(*m, info, error)))
    return failure();
  addDescriptor(*m, info);
  if (info.cuda())
    finishCudaRun(*m, info);
  for (llvm::Function &f : *m) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", tm->getTargetCPU());
    if (!tm->getTargetFeatureString().empty())
      f.addFnAttr("target-features", tm->getTargetFeatureString());
    f.addFnAttr(llvm::Attribute::NoUnwind);
  }
  std::string verifyError;
  llvm::raw_string_ostream vos(verifyError);
  if (llvm::verifyModule(*m, &vos)) {
    error = "internal error: invalid LLVM IR: " + verifyError;
    return failure();
  }
  if (options.freestanding)
    addMemoryFunctions(*m, triple);
  optimize(*m, *tm, options.optLevel);
  uniformGatherBases(*m);

  llvm::raw_svector_ostream os(out);
  if (kind == OutputKind::LLVMIR) {
    m->print(os, nullptr);
    return success();
  }
  bool measure = kind == OutputKind::Object;
  // Each function's frame size, written by the code generator
  // (clang's -fstack-usage).
  llvm::SmallString<128> stackUsagePath;
  if (measure) {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("kiln-stack", "su", stackUsagePath)) {
      error = "cannot create a temporary file: " + ec.message();
      return failure();
    }
    tm->Options.StackUsageOutput = stackUsagePath.str().str();
  }
  CallGraph calls = callGraph(*m);
  {
    llvm::legacy::PassManager pm;
    llvm::CodeGenFileType type = kind == OutputKind::Assembly
                                     ? llvm::CodeGenFileType::AssemblyFile
                                     : llvm::CodeGenFileType::ObjectFile;
    if (tm->addPassesToEmitFile(pm, os, nullptr, type)) {
      error = "the target cannot emit this kind of file";
      if (measure)
        llvm::sys::fs::remove(stackUsagePath);
      return failure();
    }
    pm.run(*m);
  } // The stack-usage file is complete once the code generator is gone.
  if (!measure)
    return success();
  auto frames = readStackUsage(stackUsagePath);
  llvm::sys::fs::remove(stackUsagePath);
  stats = CodeStats();
  stats.stackSize = deepestStack(calls, frames, info.name + "_run");
  return measureObject(StringRef(out.data(), out.size()), isBareMetalTriple(triple),
                       stats, error);
}

} // namespace kiln
