//===- GatherBase.cpp - Scalar bases for vector gathers and scatters ------===//
//
// The CPU kernels read and write strided vectors (a conv's output channels
// in NCHW) with vector.gather/scatter at a scalar base plus constant lane
// offsets. LLVM's LICM reassociates the address
//   gep (gep %base, %i), <offsets>   into   gep (gep %base, <offsets>), %i
// to hoist the invariant part out of the loop. The gather's address is then
// a vector of pointers without a common base, and the x86 code generator
// emits two 64-bit-address gathers (vgatherqps) per 16 lanes instead of one
// with 32-bit offsets (vgatherdps). This puts the scalar part back first,
// at the gather, after the -O pipeline and before code generation.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Target.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"

namespace kiln {

namespace {

bool hasVectorIndex(llvm::GetElementPtrInst *gep) {
  return llvm::any_of(gep->indices(),
                      [](llvm::Value *i) { return i->getType()->isVectorTy(); });
}

/// Rewrites operand `pos` of `call`, a vector of pointers
///   gep Tn, (... (gep T1, (gep U, %base, <vector indices>), <scalars 1>) ...), <scalars n>
/// as gep U, (gep Tn, (... (gep T1, %base, <scalars 1>) ...), <scalars n>), <vector indices>.
/// Returns the old address if it did.
llvm::Value *rebase(llvm::CallInst *call, unsigned pos) {
  llvm::SmallVector<llvm::GetElementPtrInst *> scalarSteps; // Outermost first.
  llvm::Value *v = call->getArgOperand(pos);
  auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(v);
  while (gep && gep->getPointerOperandType()->isVectorTy() && !hasVectorIndex(gep)) {
    scalarSteps.push_back(gep);
    gep = llvm::dyn_cast<llvm::GetElementPtrInst>(gep->getPointerOperand());
  }
  if (scalarSteps.empty() || !gep || gep->getPointerOperandType()->isVectorTy() ||
      !hasVectorIndex(gep))
    return nullptr;
  llvm::IRBuilder<> b(call);
  llvm::Value *base = gep->getPointerOperand();
  for (llvm::GetElementPtrInst *step : llvm::reverse(scalarSteps)) {
    llvm::SmallVector<llvm::Value *> idx(step->indices());
    base = b.CreateGEP(step->getSourceElementType(), base, idx);
  }
  llvm::SmallVector<llvm::Value *> vectorIdx(gep->indices());
  call->setArgOperand(pos, b.CreateGEP(gep->getSourceElementType(), base, vectorIdx));
  return v;
}

} // namespace

void uniformGatherBases(llvm::Module &m) {
  llvm::SmallVector<llvm::WeakTrackingVH> dead;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f)) {
      auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
      if (!call)
        continue;
      llvm::Value *old = nullptr;
      if (call->getIntrinsicID() == llvm::Intrinsic::masked_gather)
        old = rebase(call, 0);
      else if (call->getIntrinsicID() == llvm::Intrinsic::masked_scatter)
        old = rebase(call, 1);
      if (old)
        dead.push_back(old);
    }
  llvm::RecursivelyDeleteTriviallyDeadInstructionsPermissive(dead);
}

} // namespace kiln
