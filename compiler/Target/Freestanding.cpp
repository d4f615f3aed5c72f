//===- Freestanding.cpp - memcpy/memmove/memset for firmware objects -------===//
//
// --freestanding: the object defines the memory functions the code
// generator may call itself, so that firmware links without a C library.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Target.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace kiln {

/// Byte-loop definitions of the memory functions the code
/// generator may call, weak (a C library's win when linked) and hidden
/// (never exported from a shared library). "no-builtins" keeps LLVM from
/// turning their loops back into calls to themselves.
void addMemoryFunctions(llvm::Module &m, const llvm::Triple &triple) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx), *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type *size = m.getDataLayout().getIntPtrType(ctx);
  llvm::Type *voidTy = llvm::Type::getVoidTy(ctx);
  enum Kind { Copy, Move, Set, Clear };
  // name, kind, returns dest, argument order (Arm's __aeabi_memset takes
  // (dest, n, c)).
  auto define = [&](StringRef name, Kind kind, bool returnsDest, bool aeabiOrder) {
    if (llvm::Function *existing = m.getFunction(name); existing && !existing->isDeclaration())
      return;
    SmallVector<llvm::Type *> params = {ptr};
    if (kind == Copy || kind == Move)
      params.append({ptr, size});
    else if (kind == Set)
      params.append(aeabiOrder ? SmallVector<llvm::Type *>{size, i32}
                               : SmallVector<llvm::Type *>{i32, size});
    else
      params.push_back(size);
    auto *type = llvm::FunctionType::get(returnsDest ? ptr : voidTy, params, false);
    llvm::Function *f = m.getFunction(name);
    if (f && f->getFunctionType() != type)
      return; // Declared otherwise: left to the C library.
    if (!f)
      f = llvm::Function::Create(type, llvm::GlobalValue::WeakAnyLinkage, name, m);
    f->setLinkage(llvm::GlobalValue::WeakAnyLinkage);
    f->setVisibility(llvm::GlobalValue::HiddenVisibility);
    f->addFnAttr("no-builtins");
    f->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::Value *dest = f->getArg(0), *src = nullptr, *n, *value = nullptr;
    if (kind == Copy || kind == Move) {
      src = f->getArg(1);
      n = f->getArg(2);
    } else if (kind == Set) {
      n = f->getArg(aeabiOrder ? 1 : 2);
      value = f->getArg(aeabiOrder ? 2 : 1);
    } else {
      n = f->getArg(1);
    }
    auto *entry = llvm::BasicBlock::Create(ctx, "entry", f);
    auto *forward = llvm::BasicBlock::Create(ctx, "forward", f);
    auto *backward = llvm::BasicBlock::Create(ctx, "backward", f);
    auto *done = llvm::BasicBlock::Create(ctx, "done", f);
    llvm::IRBuilder<> b(entry);
    llvm::Value *byte = nullptr;
    if (kind == Set)
      byte = b.CreateTrunc(value, i8);
    else if (kind == Clear)
      byte = llvm::ConstantInt::get(i8, 0);
    // memmove copies backwards when the destination is above the source.
    if (kind == Move)
      b.CreateCondBr(b.CreateICmpUGT(b.CreatePtrToInt(dest, size), b.CreatePtrToInt(src, size)),
                     backward, forward);
    else
      b.CreateBr(forward);
    auto loop = [&](llvm::BasicBlock *block, bool down) {
      auto *body = llvm::BasicBlock::Create(ctx, down ? "down" : "up", f);
      b.SetInsertPoint(block);
      b.CreateCondBr(b.CreateICmpEQ(n, llvm::ConstantInt::get(size, 0)), done, body);
      b.SetInsertPoint(body);
      llvm::PHINode *i = b.CreatePHI(size, 2);
      i->addIncoming(down ? n : llvm::ConstantInt::get(size, 0), block);
      llvm::Value *at = down ? b.CreateSub(i, llvm::ConstantInt::get(size, 1)) : i;
      llvm::Value *v = byte ? byte : b.CreateLoad(i8, b.CreateGEP(i8, src, at));
      b.CreateStore(v, b.CreateGEP(i8, dest, at));
      llvm::Value *next = down ? at : b.CreateAdd(i, llvm::ConstantInt::get(size, 1));
      i->addIncoming(next, body);
      b.CreateCondBr(b.CreateICmpEQ(next, down ? llvm::ConstantInt::get(size, 0) : n), done,
                     body);
    };
    loop(forward, false);
    loop(backward, true);
    b.SetInsertPoint(done);
    if (returnsDest)
      b.CreateRet(dest);
    else
      b.CreateRetVoid();
  };
  define("memcpy", Copy, true, false);
  define("memmove", Move, true, false);
  define("memset", Set, true, false);
  if (triple.isARM() || triple.isThumb()) {
    for (StringRef suffix : {"", "4", "8"}) {
      define(("__aeabi_memcpy" + suffix).str(), Copy, false, false);
      define(("__aeabi_memmove" + suffix).str(), Move, false, false);
      define(("__aeabi_memset" + suffix).str(), Set, false, true);
      define(("__aeabi_memclr" + suffix).str(), Clear, false, false);
    }
  }
}

} // namespace kiln
