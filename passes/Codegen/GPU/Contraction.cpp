//===- Contraction.cpp - tiled GPU kernels for contractions -----*- C++ -*-===//
//
// A linalg op that is a contraction, C += A * B summed over its reduction
// dims (matmul, batched matmul, convolution, Gemm...), as one gpu.launch of
// 64 x 64 output tiles (Contraction.h says when and why). Which ops and
// how they split and fold: GemmMatch.cpp; the kernel: here.
//
// The op's loop dims fall into four roles: batch (indexed by A, B and C),
// M (A and C), N (B and C) and K (the reductions, A and B). With each role's
// dims linearised (the last fastest) it is a batched GEMM, C[b][m][n] +=
// sum_k A(b, m, k) * B(b, k, n), where A(b, m, k) is A's element at its
// indexing map applied to the dims those three indices delinearise to (a
// convolution's window included: this is an implicit GEMM, no im2col
// buffer). A and B are swapped if need be so that C's innermost dim is an
// N dim, which the threads of a warp walk.
//
// A block of 256 threads computes one tile, each thread a 4 x 4 square in
// registers (rows ty*4.., columns tx*4.., tx = tid % 16, ty = tid / 16).
// Sixteen reduction steps at a time, the block stages A's 64 x 16 and B's
// 16 x 64 elements in shared memory (4 + 4 per thread, zero outside the
// operands, consecutive threads on the input's fastest-varying dim), waits,
// and each thread does its 16 x 16 multiply-adds from shared memory. The
// next step's elements are on their way during those multiply-adds, so
// that their latency is hidden by them: copied asynchronously (cp.async)
// into a second pair of shared buffers, the two pairs taking turns (one
// barrier a step), or, when an operand's innermost dim is strided (which
// cp.async cannot take) or with `async-copies=false`, loaded into
// registers and stored into the one pair after the multiply-adds. When
// the tiles are too few to fill the GPU the reduction is split across
// blocks (grid z), each adding its partial sums into C atomically;
// otherwise a thread adds its sums to C's initial values and stores them,
// and what writes those initial values just before (a fill, a bias
// broadcast) and an elementwise op on C just after (activation, residual
// add, scaling) are folded into that store: C is then written once, or
// not at all when the epilogue writes elsewhere.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/GPU/Contraction.h"
#include "passes/Codegen/GPU/GemmMatch.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln::tiled;

namespace {


/// The loop ivs of `op`, whose `operand` is indexed by a permutation, at
/// that operand's `indices`.
SmallVector<Value> ivsAt(linalg::LinalgOp op, OpOperand &operand, ValueRange indices) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> ivs(map.getNumDims());
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    ivs[map.getDimPosition(r)] = indices[r];
  return ivs;
}

/// Emits the kernel in place of `op`.
class Emitter {
public:
  Emitter(linalg::LinalgOp op, const Gemm &g, Surroundings s, bool tf32, bool async)
      : op(op), g(g), s(s), tf32(tf32), async(async), loc(op.getLoc()) {
    std::tie(splits, stepsPerSplit) = splitReduction(g);
  }

  void emit(RewriterBase &rewriter) {
    MLIRContext *ctx = op.getContext();
    Type f32 = Float32Type::get(ctx);
    // Each loop dim's size, each role's product, and the grid: constants,
    // or computed on the host from the operands' dims.
    sizes.clear();
    if (g.dynamic) {
      for (Range range : op.createLoopRanges(rewriter, loc))
        sizes.push_back(range.size);
    } else {
      for (int64_t size : g.sizes)
        sizes.push_back(rewriter.getIndexAttr(size));
    }
    batches = product(rewriter, g.batch);
    rows = product(rewriter, g.m);
    cols = product(rewriter, g.n);
    depth = product(rewriter, g.k);
    OpFoldResult tilesM = ceilDivOf(rewriter, rows, kTile);
    OpFoldResult tilesN = ceilDivOf(rewriter, cols, kTile);
    steps = ceilDivOf(rewriter, depth, kStep);
    OpFoldResult zBlocks = g.dynamic ? batches : rewriter.getIndexAttr(g.batches * splits);

    Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    // A pair of tiles (A's, B's) per stage: with asynchronous copies, one
    // pair is read while the next step's elements land in the other.
    auto shared = MemRefType::get({async ? 2 : 1, kStep, kTile}, f32,
                                  MemRefLayoutAttrInterface{}, workgroup);
    auto launch = gpu::LaunchOp::create(
        rewriter, loc, value(rewriter, tilesN), value(rewriter, tilesM),
        value(rewriter, zBlocks), index(rewriter, kThreads), index(rewriter, 1),
        index(rewriter, 1), /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/ValueRange{}, /*workgroupAttributions=*/TypeRange{shared, shared});
    Block &body = launch.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    Value aTile = launch.getWorkgroupAttributions()[0];
    Value bTile = launch.getWorkgroupAttributions()[1];
    tid = launch.getThreadIds().x;
    Value tx = arith::RemUIOp::create(b, loc, tid, index(b, kSide));
    Value ty = arith::DivUIOp::create(b, loc, tid, index(b, kSide));
    row0 = arith::MulIOp::create(b, loc, launch.getBlockIds().y, index(b, kTile));
    col0 = arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(b, kTile));
    Value z = launch.getBlockIds().z;
    Value first, last;
    if (g.dynamic) {
      // One block a tile: every step.
      batchIndex = z;
      first = index(b, 0);
      last = value(b, steps);
    } else {
      batchIndex = arith::DivUIOp::create(b, loc, z, index(b, splits));
      Value split = arith::RemUIOp::create(b, loc, z, index(b, splits));
      first = arith::MulIOp::create(b, loc, split, index(b, stepsPerSplit));
      last = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, first, index(b, stepsPerSplit)),
          value(b, steps));
    }
    // Where each of a thread's 16 sums falls in the tile: SIMT, a 4 x 4
    // square at (ty * 4, tx * 4); with tensor cores, the accumulator
    // fragments of four m16n8 tiles of its warp's 16 x 32 block
    // (mma.sync's layout: lane l holds rows l / 4 and l / 4 + 8, columns
    // 2 (l % 4) and 2 (l % 4) + 1 of each).
    SmallVector<std::pair<Value, Value>> positions;
    Value lane, warpRow, warpCol;
    if (tf32) {
      lane = arith::RemUIOp::create(b, loc, tid, index(b, 32));
      Value warp = arith::DivUIOp::create(b, loc, tid, index(b, 32));
      warpRow = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, warp, index(b, kTile / 16)), index(b, 16));
      warpCol = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, warp, index(b, kTile / 16)), index(b, 32));
      Value group = arith::DivUIOp::create(b, loc, lane, index(b, 4));
      Value pair = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, lane, index(b, 4)), index(b, 2));
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t r = 0; r < 4; ++r)
          positions.push_back(
              {arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, warpRow, group),
                                     index(b, r >= 2 ? 8 : 0)),
               arith::AddIOp::create(
                   b, loc, arith::AddIOp::create(b, loc, warpCol, pair),
                   index(b, j * 8 + (r & 1)))});
    } else {
      Value myRow = arith::MulIOp::create(b, loc, ty, index(b, kPerThread));
      Value myCol = arith::MulIOp::create(b, loc, tx, index(b, kPerThread));
      for (int64_t i = 0; i < kPerThread; ++i)
        for (int64_t j = 0; j < kPerThread; ++j)
          positions.push_back({arith::AddIOp::create(b, loc, myRow, index(b, i)),
                               arith::AddIOp::create(b, loc, myCol, index(b, j))});
    }

    Value zero = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0.0f));
    SmallVector<Value> init(kPerThread * kPerThread, zero);
    scf::ForOp loop = async ? stepWithAsyncCopies(b, aTile, bTile, first, last, init, lane,
                                                  warpRow, warpCol, positions)
                            : stepWithRegisters(b, aTile, bTile, first, last, init, lane,
                                                warpRow, warpCol, positions);

    // Each thread's sums into C, where they fall inside it.
    AffineMap mc = op.getMatchingIndexingMap(g.c);
    for (auto [k, position] : llvm::enumerate(positions)) {
      Value row = arith::AddIOp::create(b, loc, row0, position.first);
      Value col = arith::AddIOp::create(b, loc, col0, position.second);
      Value inside = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, value(b, rows)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, value(b, cols)));
      auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      OpBuilder then = guard.getThenBodyBuilder();
      SmallVector<Value> ivs = loopIvs(then, row, g.m, col, g.n, Value(), {});
      SmallVector<Value> indices;
      for (AffineExpr e : mc.getResults())
        indices.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
      Value sum = loop.getResult(k);
      if (splits > 1)
        memref::AtomicRMWOp::create(then, loc, arith::AtomicRMWKind::addf, sum, g.c->get(),
                                    indices);
      else
        store(then, sum, indices);
    }
    gpu::TerminatorOp::create(b, loc);
  }

private:
  Value index(OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// `v` as a value where `b` builds: a constant there, or the host's.
  Value value(OpBuilder &b, OpFoldResult v) { return getValueOrCreateConstantIndexOp(b, loc, v); }

  /// The product of `dims`' sizes (on the host when one is dynamic).
  OpFoldResult product(OpBuilder &b, ArrayRef<unsigned> dims) {
    SmallVector<OpFoldResult> dimSizes;
    for (unsigned d : dims)
      dimSizes.push_back(sizes[d]);
    return kiln::sizeProduct(b, loc, dimSizes);
  }

  /// ceil(v / d) (on the host when `v` is dynamic).
  OpFoldResult ceilDivOf(OpBuilder &b, OpFoldResult v, int64_t d) {
    if (auto attr = dyn_cast<Attribute>(v))
      return b.getIndexAttr(ceilDiv(cast<IntegerAttr>(attr).getInt(), d));
    return arith::CeilDivUIOp::create(b, loc, cast<Value>(v), index(b, d)).getResult();
  }

  /// A staged step's multiply-adds from the tiles of `stage`.
  void multiply(OpBuilder &b, Value aTile, Value bTile, Value stage, Value lane, Value warpRow,
                Value warpCol, ArrayRef<std::pair<Value, Value>> positions,
                SmallVector<Value> &sums) {
    if (tf32)
      multiplyWithTensorCores(b, aTile, bTile, stage, lane, warpRow, warpCol, sums);
    else
      multiplyWithFma(b, aTile, bTile, stage, positions, sums);
  }

  /// The reduction loop over the staged steps [first, last) with one
  /// stage: it carries the sums and the thread's share of the next step's
  /// A and B elements, loaded from global memory before the multiply-adds
  /// of the step before them (whose shared-memory reads hide the loads'
  /// latency) and stored into shared memory after them.
  scf::ForOp stepWithRegisters(OpBuilder &b, Value aTile, Value bTile, Value first, Value last,
                               SmallVector<Value> init, Value lane, Value warpRow,
                               Value warpCol, ArrayRef<std::pair<Value, Value>> positions) {
    auto fetchBoth = [&](OpBuilder &b, Value step) {
      Value k0 = arith::MulIOp::create(b, loc, step, index(b, kStep));
      SmallVector<Value> values = fetch(b, g.a, g.m, rows, row0, k0, g.aRowsFastest);
      llvm::append_range(values, fetch(b, g.b, g.n, cols, col0, k0, g.bColsFastest));
      return values;
    };
    llvm::append_range(init, fetchBoth(b, first));
    const int64_t sumCount = kPerThread * kPerThread;
    return scf::ForOp::create(
        b, loc, first, last, index(b, 1), init,
        [&](OpBuilder &b, Location loc, Value step, ValueRange carried) {
          Value stage = index(b, 0);
          ValueRange staged = carried.drop_front(sumCount);
          put(b, staged.take_front(kStaged), g.aRowsFastest, aTile);
          put(b, staged.drop_front(kStaged), g.bColsFastest, bTile);
          gpu::BarrierOp::create(b, loc);
          // The last step of a split loads the next split's first (or,
          // past the reduction, zeros): valid addresses, not used.
          SmallVector<Value> next =
              fetchBoth(b, arith::AddIOp::create(b, loc, step, index(b, 1)));
          SmallVector<Value> sums(carried.take_front(sumCount));
          multiply(b, aTile, bTile, stage, lane, warpRow, warpCol, positions, sums);
          gpu::BarrierOp::create(b, loc);
          llvm::append_range(sums, next);
          scf::YieldOp::create(b, loc, sums);
        });
  }

  /// The reduction loop over the staged steps [first, last) with two
  /// stages (sm_80's cp.async): step i's tiles are stage (i - first) % 2.
  /// The loop carries the sums and the token of the copies in flight; each
  /// step waits for its own copies, then at a barrier for every thread's
  /// (which also means that every thread is done with the other stage's
  /// tiles, read by the step before), starts copying the next step into
  /// that other stage, and multiplies while those copies run.
  scf::ForOp stepWithAsyncCopies(OpBuilder &b, Value aTile, Value bTile, Value first,
                                 Value last, SmallVector<Value> init, Value lane,
                                 Value warpRow, Value warpCol,
                                 ArrayRef<std::pair<Value, Value>> positions) {
    Type token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    auto copyBoth = [&](OpBuilder &b, Value step, Value stage) -> Value {
      Value k0 = arith::MulIOp::create(b, loc, step, index(b, kStep));
      SmallVector<Value> copies =
          copy(b, g.a, g.m, rows, row0, k0, g.aRowsFastest, aTile, stage);
      llvm::append_range(copies, copy(b, g.b, g.n, cols, col0, k0, g.bColsFastest, bTile, stage));
      return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, token, copies);
    };
    init.push_back(copyBoth(b, first, index(b, 0)));
    const int64_t sumCount = kPerThread * kPerThread;
    return scf::ForOp::create(
        b, loc, first, last, index(b, 1), init,
        [&](OpBuilder &b, Location loc, Value step, ValueRange carried) {
          Value stage = arith::RemUIOp::create(
              b, loc, arith::SubIOp::create(b, loc, step, first), index(b, 2));
          nvgpu::DeviceAsyncWaitOp::create(b, loc, carried.back(), b.getI32IntegerAttr(0));
          gpu::BarrierOp::create(b, loc);
          Value next = arith::AddIOp::create(b, loc, step, index(b, 1));
          auto more = scf::IfOp::create(
              b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next, last),
              [&](OpBuilder &b, Location loc) {
                Value other = arith::SubIOp::create(b, loc, index(b, 1), stage);
                scf::YieldOp::create(b, loc, copyBoth(b, next, other));
              },
              [&](OpBuilder &b, Location loc) {
                scf::YieldOp::create(b, loc, carried.back());
              });
          SmallVector<Value> sums(carried.take_front(sumCount));
          multiply(b, aTile, bTile, stage, lane, warpRow, warpCol, positions, sums);
          sums.push_back(more.getResult(0));
          scf::YieldOp::create(b, loc, sums);
        });
  }

  /// A staged step's 16 x 16 multiply-adds per thread from shared memory,
  /// each thread's 4 x 4 square (`positions`: sum i * 4 + j at row i and
  /// column j of it).
  void multiplyWithFma(OpBuilder &b, Value aTile, Value bTile, Value stage,
                       ArrayRef<std::pair<Value, Value>> positions, SmallVector<Value> &sums) {
    for (int64_t kk = 0; kk < kStep; ++kk) {
      SmallVector<Value> as, bs;
      for (int64_t i = 0; i < kPerThread; ++i) {
        as.push_back(memref::LoadOp::create(
            b, loc, aTile, ValueRange{stage, index(b, kk), positions[i * kPerThread].first}));
        bs.push_back(memref::LoadOp::create(
            b, loc, bTile, ValueRange{stage, index(b, kk), positions[i].second}));
      }
      for (int64_t i = 0; i < kPerThread; ++i)
        for (int64_t j = 0; j < kPerThread; ++j) {
          Value &sum = sums[i * kPerThread + j];
          sum = math::FmaOp::create(b, loc, as[i], bs[j], sum);
        }
    }
  }

  /// A staged step on the tensor cores: each warp's 16 x 32 block as four
  /// m16n8 tiles, two mma.sync.m16n8k8 (TF32 inputs rounded to nearest,
  /// f32 sums) per tile. Lane l's fragments (PTX ISA, mma m16n8k8 .tf32):
  /// A rows l / 4 (+8), columns l % 4 (+4); B rows l % 4 (+4), column
  /// l / 4.
  void multiplyWithTensorCores(OpBuilder &b, Value aTile, Value bTile, Value stage, Value lane,
                               Value warpRow, Value warpCol, SmallVector<Value> &sums) {
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    Value group = arith::DivUIOp::create(b, loc, lane, index(b, 4));
    Value quad = arith::RemUIOp::create(b, loc, lane, index(b, 4));
    auto tf32Of = [&](Value tile, Value k, Value x) -> Value {
      Value v = memref::LoadOp::create(b, loc, tile, ValueRange{stage, k, x});
      return NVVM::ConvertFloatToTF32Op::create(b, loc, b.getI32Type(), v,
                                                NVVM::FPRoundingMode::RNA,
                                                NVVM::SaturationMode::NONE, false);
    };
    Type result = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    for (int64_t kk = 0; kk < kStep; kk += 8) {
      Value k = arith::AddIOp::create(b, loc, quad, index(b, kk));
      Value k4 = arith::AddIOp::create(b, loc, k, index(b, 4));
      Value row = arith::AddIOp::create(b, loc, warpRow, group);
      Value row8 = arith::AddIOp::create(b, loc, row, index(b, 8));
      SmallVector<Value> a = {tf32Of(aTile, k, row), tf32Of(aTile, k, row8),
                              tf32Of(aTile, k4, row), tf32Of(aTile, k4, row8)};
      for (int64_t j = 0; j < 4; ++j) {
        Value col = arith::AddIOp::create(
            b, loc, arith::AddIOp::create(b, loc, warpCol, group), index(b, j * 8));
        SmallVector<Value> bFragment = {tf32Of(bTile, k, col), tf32Of(bTile, k4, col)};
        SmallVector<Value> c(sums.begin() + j * 4, sums.begin() + j * 4 + 4);
        Value d = NVVM::MmaOp::create(
            b, loc, result, a, bFragment, c, ArrayRef<int64_t>{16, 8, 8}, std::nullopt,
            std::nullopt,
            std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::tf32, NVVM::MMATypes::tf32},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (int64_t r = 0; r < 4; ++r)
          sums[j * 4 + r] = LLVM::ExtractValueOp::create(b, loc, d, r);
      }
    }
  }

  /// One thread's sum for C's element at `indices`, added to its initial
  /// value (C's, or what the folded init would have written there), put
  /// through the folded epilogue, stored.
  void store(OpBuilder &b, Value sum, ValueRange indices) {
    Value c = g.c->get();
    Value initial;
    if (s.fill) {
      initial = s.fill;
    } else if (s.initCopy) {
      OpOperand *in = s.initCopy.getDpsInputOperand(0);
      SmallVector<Value> ivs = ivsAt(s.initCopy, *s.initCopy.getDpsInitOperand(0), indices);
      initial = memref::LoadOp::create(
          b, loc, in->get(),
          kiln::applyIndexingMap(b, loc, s.initCopy.getMatchingIndexingMap(in), ivs));
    } else {
      initial = memref::LoadOp::create(b, loc, c, indices);
    }
    Value value = arith::AddFOp::create(b, loc, initial, sum);
    if (!s.epilogue) {
      memref::StoreOp::create(b, loc, value, c, indices);
      return;
    }
    linalg::GenericOp epilogue = s.epilogue;
    OpOperand *cOperand = nullptr;
    for (OpOperand *in : epilogue.getDpsInputOperands())
      if (in->get() == c)
        cOperand = in;
    SmallVector<Value> ivs = ivsAt(epilogue, *cOperand, indices);
    IRMapping map;
    for (OpOperand *in : epilogue.getDpsInputOperands()) {
      Value v = in->get() == c ? value
                               : memref::LoadOp::create(
                                     b, loc, in->get(),
                                     kiln::applyIndexingMap(
                                         b, loc, epilogue.getMatchingIndexingMap(in), ivs))
                                     .getResult();
      map.map(epilogue.getMatchingBlockArgument(in), v);
    }
    OpOperand *out = epilogue.getDpsInitOperand(0);
    map.map(epilogue.getMatchingBlockArgument(out), value); // Used only in place on C.
    Block &body = epilogue.getRegion().front();
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        map.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, map);
    }
    memref::StoreOp::create(
        b, loc, map.lookup(body.getTerminator()->getOperand(0)), out->get(),
        kiln::applyIndexingMap(b, loc, epilogue.getMatchingIndexingMap(out), ivs));
  }

  /// `linear` as the values of `dims` (the last fastest).
  void delinearize(OpBuilder &b, Value linear, ArrayRef<unsigned> dims,
                   SmallVector<Value> &ivs) {
    SmallVector<OpFoldResult> dimSizes;
    for (unsigned d : dims)
      dimSizes.push_back(sizes[d]);
    for (auto [d, iv] : llvm::zip(dims, kiln::delinearize(b, loc, linear, dimSizes)))
      ivs[d] = iv;
  }

  /// Every loop dim's value for the batch index, `outer` over `outerDims`
  /// and `inner` over `innerDims` (dims none of them sets: 0, which the
  /// operand being addressed does not read).
  SmallVector<Value> loopIvs(OpBuilder &b, Value outer, ArrayRef<unsigned> outerDims,
                             Value inner, ArrayRef<unsigned> innerDims, Value depth,
                             ArrayRef<unsigned> depthDims) {
    SmallVector<Value> ivs(g.sizes.size(), index(b, 0));
    delinearize(b, batchIndex, g.batch, ivs);
    delinearize(b, outer, outerDims, ivs);
    if (inner)
      delinearize(b, inner, innerDims, ivs);
    if (depth)
      delinearize(b, depth, depthDims, ivs);
    return ivs;
  }

  /// Where the thread's `r`-th staged element goes in a tile: {step,
  /// row} (consecutive threads along the operand's fastest dim).
  std::pair<Value, Value> stagedAt(OpBuilder &b, int64_t r, bool rowsFastest) {
    Value e = arith::AddIOp::create(b, loc, tid, index(b, r * kThreads));
    Value row = rowsFastest ? arith::RemUIOp::create(b, loc, e, index(b, kTile)).getResult()
                            : arith::DivUIOp::create(b, loc, e, index(b, kStep)).getResult();
    Value kk = rowsFastest ? arith::DivUIOp::create(b, loc, e, index(b, kTile)).getResult()
                           : arith::RemUIOp::create(b, loc, e, index(b, kStep)).getResult();
    return {kk, row};
  }

  /// Where the thread's `r`-th element of `operand` for `kStep` reduction
  /// steps from `k0` and `kTile` of its rows (M or N: `dims`, `count` in
  /// all) from `base` is: its place in the tile, its global row and step,
  /// and whether they fall inside the operand.
  struct Element {
    Value kk, row, globalRow, globalK, inside;
  };
  Element element(OpBuilder &b, int64_t r, OpFoldResult count, Value base, Value k0,
                  bool rowsFastest) {
    Element e;
    std::tie(e.kk, e.row) = stagedAt(b, r, rowsFastest);
    e.globalRow = arith::AddIOp::create(b, loc, base, e.row);
    e.globalK = arith::AddIOp::create(b, loc, k0, e.kk);
    e.inside = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, e.globalRow, value(b, count)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, e.globalK, value(b, depth)));
    return e;
  }

  /// The thread's `kStaged` elements of `operand` (element's arguments),
  /// zero outside the operand.
  SmallVector<Value> fetch(OpBuilder &b, OpOperand *operand, ArrayRef<unsigned> dims,
                           OpFoldResult count, Value base, Value k0, bool rowsFastest) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    Type f32 = b.getF32Type();
    SmallVector<Value> values;
    for (int64_t r = 0; r < kStaged; ++r) {
      Element e = element(b, r, count, base, k0, rowsFastest);
      auto load = scf::IfOp::create(
          b, loc, e.inside,
          [&](OpBuilder &b, Location loc) {
            SmallVector<Value> ivs =
                loopIvs(b, e.globalRow, dims, Value(), {}, e.globalK, g.k);
            scf::YieldOp::create(
                b, loc,
                ValueRange{memref::LoadOp::create(b, loc, operand->get(),
                                                  kiln::applyIndexingMap(b, loc, map, ivs))});
          },
          [&](OpBuilder &b, Location loc) {
            scf::YieldOp::create(
                b, loc, ValueRange{arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0))});
          });
      values.push_back(load.getResult(0));
    }
    return values;
  }

  /// Asynchronous copies of the thread's `kStaged` elements of `operand`
  /// (element's arguments) into `tile`[stage][step][row]; outside the
  /// operand, a copy of no bytes from its first element, which zero-fills.
  SmallVector<Value> copy(OpBuilder &b, OpOperand *operand, ArrayRef<unsigned> dims,
                          OpFoldResult count, Value base, Value k0, bool rowsFastest, Value tile,
                          Value stage) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    Type token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    SmallVector<Value> copies;
    for (int64_t r = 0; r < kStaged; ++r) {
      Element e = element(b, r, count, base, k0, rowsFastest);
      Value zero = index(b, 0);
      Value row = arith::SelectOp::create(b, loc, e.inside, e.globalRow, zero);
      Value k = arith::SelectOp::create(b, loc, e.inside, e.globalK, zero);
      SmallVector<Value> ivs = loopIvs(b, row, dims, Value(), {}, k, g.k);
      Value srcElements = arith::SelectOp::create(b, loc, e.inside, index(b, 1), zero);
      copies.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, token, tile, ValueRange{stage, e.kk, e.row}, operand->get(),
          kiln::applyIndexingMap(b, loc, map, ivs), b.getIndexAttr(1), srcElements,
          /*bypassL1=*/nullptr));
    }
    return copies;
  }

  /// `values` (fetch's) into `tile`[0][step][row].
  void put(OpBuilder &b, ValueRange values, bool rowsFastest, Value tile) {
    for (auto [r, v] : llvm::enumerate(values)) {
      auto [kk, row] = stagedAt(b, int64_t(r), rowsFastest);
      memref::StoreOp::create(b, loc, v, tile, ValueRange{index(b, 0), kk, row});
    }
  }

  linalg::LinalgOp op;
  const Gemm &g;
  Surroundings s;
  bool tf32, async;
  Location loc;
  Value tid, batchIndex, row0, col0;
  int64_t splits = 1, stepsPerSplit = 1;
  // Each loop dim's size and the products (emit's): attributes when
  // static, else the host's values, which the kernel takes.
  SmallVector<OpFoldResult> sizes;
  OpFoldResult batches, rows, cols, depth, steps;
};

} // namespace

namespace kiln {

SmallVector<Value> applyIndexingMap(OpBuilder &b, Location loc, AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      indices.push_back(ivs[dim.getPosition()]);
      continue;
    }
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), map.getNumSymbols(), e), ivs));
  }
  return indices;
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                               ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> ivs(sizes.size());
  Value rest = flat;
  for (size_t i = sizes.size(); i-- > 1;) {
    Value size = getValueOrCreateConstantIndexOp(b, loc, sizes[i]);
    ivs[i] = b.createOrFold<arith::RemUIOp>(loc, rest, size);
    rest = b.createOrFold<arith::DivUIOp>(loc, rest, size);
  }
  if (!sizes.empty())
    ivs[0] = rest;
  return ivs;
}

OpFoldResult sizeProduct(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
  int64_t known = 1;
  Value dynamicPart;
  for (OpFoldResult size : sizes) {
    if (std::optional<int64_t> c = getConstantIntValue(size)) {
      known *= *c;
      continue;
    }
    Value v = cast<Value>(size);
    dynamicPart = dynamicPart ? arith::MulIOp::create(b, loc, dynamicPart, v).getResult() : v;
  }
  if (!dynamicPart)
    return b.getIndexAttr(known);
  if (known == 1)
    return dynamicPart;
  return arith::MulIOp::create(b, loc, dynamicPart, arith::ConstantIndexOp::create(b, loc, known))
      .getResult();
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat, ArrayRef<int64_t> sizes) {
  SmallVector<OpFoldResult> attrs;
  for (int64_t size : sizes)
    attrs.push_back(b.getIndexAttr(size));
  return delinearize(b, loc, flat, attrs);
}

bool lowerTiledContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                           const TiledContractionOptions &options,
                           SmallVectorImpl<Operation *> &folded) {
  std::optional<Gemm> gemm = asGemm(op);
  if (!gemm)
    return false;
  Surroundings s;
  if (options.fuse)
    s = findSurroundings(op, *gemm, splitReduction(*gemm).first);
  // At the epilogue when there is one: its other operands are written
  // before it (between the contraction and it there are views only).
  rewriter.setInsertionPoint(s.epilogue ? s.epilogue.getOperation() : op.getOperation());
  // Operands that are TF32 values (ExactTf32.cpp) lose nothing on the
  // tensor cores.
  bool tf32 = options.tf32 || op->hasAttr("kiln.exact_in_tf32");
  // cp.async copies from a source whose innermost dim is contiguous.
  auto unitStride = [](Value v) { return cast<MemRefType>(v.getType()).isLastDimUnitStride(); };
  bool async = options.asyncCopies && unitStride(gemm->a->get()) && unitStride(gemm->b->get());
  Emitter(op, *gemm, s, tf32, async).emit(rewriter);
  for (Operation *absorbed : {s.init, s.epilogue.getOperation()})
    if (absorbed)
      folded.push_back(absorbed);
  return true;
}

} // namespace kiln
