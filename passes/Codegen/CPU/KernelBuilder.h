//===- KernelBuilder.h - Register-blocked kernels for contractions -*- C++ -*-===//
//
// The builder half of kiln-vectorize-contractions: one KernelBuilder
// rewrites one matched contraction (Contraction.h) into loops around an
// MR x NV tile of vector accumulators. Its parts live in three files:
//   KernelBuilder.cpp  the loop nest (tiles of M and N, the parallel
//                      loop) and the kernel's reduction steps;
//   KernelPanels.cpp   operands packed at compile time into panels, and
//                      the software prefetches;
//   KernelStores.cpp   vectors of the output and the epilogue's operands,
//                      and the output tile's stores (transposed in
//                      registers for the Channels reading).
// The design is described in VectorizeContractions.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_CPU_KERNELBUILDER_H
#define KILN_PASSES_CODEGEN_CPU_KERNELBUILDER_H

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace kiln::contraction {

/// Kernel shape for one target.
struct TileShape {
  int64_t lanes; ///< f32 elements per vector.
  int64_t nv;    ///< Vectors per tile row.
  int64_t mr;    ///< Tile rows.
};

/// Packed panels by their bytes: the globals that hold them.
using PackedGlobals = std::map<std::string, std::string>;

/// Which of a kernel's loops may go to threads.
enum class Threads {
  None,
  /// The outermost loop worth it (markParallel): the kernel's work counts
  /// a dynamic dim as kNominalExtent and makes kParallelWork.
  Static,
  /// Only the loop over whole tiles of a dynamic N at the top of the
  /// kernel, from enough trips at run time (kiln::vec::kMinTrips): the
  /// kernel's work at a nominal N is below kParallelWork, its N may be
  /// a feature map's thousands of pixels.
  DynamicN,
};

/// Builds the kernel of one contraction (see the file comment).
class KernelBuilder {
public:
  KernelBuilder(Contraction c, TileShape t, Threads threads, int64_t prefetchDistance,
                PackedGlobals &packed)
      : c(c), t(t), parallelPending(threads == Threads::Static),
        dynamicNThreads(threads == Threads::DynamicN), prefetchDistance(prefetchDistance),
        packed_(packed) {}

  /// Builds the kernel before the generic; false (and nothing built) if
  /// it cannot (Channels weights that do not pack).
  bool build(mlir::ModuleOp module, unsigned &packCount);

private:
  mlir::Value index(mlir::OpBuilder &b, int64_t v) {
    return mlir::arith::ConstantIndexOp::create(b, loc(), v);
  }
  mlir::Location loc() { return c.op.getLoc(); }
  /// The buffer the tile is stored to: the epilogue's output if one is
  /// folded in, else the contraction's.
  mlir::Value storeTarget() {
    return c.epilogue ? c.epilogue.getDpsInitOperand(0)->get() : c.out;
  }

  /// Which panels of a packed operand a tile reads: the operand's tiles
  /// along its packed dim, times one set per value of the loops outside
  /// the kernel that it depends on (the batch of a batched matmul).
  struct Panels {
    mlir::SmallVector<unsigned> outer; ///< Those loops' dims, outermost first.
    int64_t tiles = 0;
    /// The first tile the kernel reads, when the operand is a block of
    /// the packed weights at an offset known at run time (null: 0).
    mlir::Value first;
  };

  // The loop nest and the kernel (KernelBuilder.cpp).

  /// Marks `loop` as the kernel's parallel loop if none is yet, the kernel
  /// is worth threads and the loop has two iterations or more. Two or
  /// three iterations of which one is a partial tile, or three, share
  /// badly between threads: such a loop is only the fallback if no loop
  /// inside does better.
  void markParallel(mlir::scf::ForOp loop, int64_t trips, bool partial = false);

  /// Marks the fallback when no better loop was found.
  void finishParallel();

  /// Nested scf.for over `dims` (whole ranges, step 1; c.dynamicRows to
  /// its size).
  void loops(mlir::OpBuilder &b, mlir::ArrayRef<unsigned> dims, mlir::SmallVector<mlir::Value> &ivs,
             const std::function<void(mlir::OpBuilder &, mlir::SmallVector<mlir::Value> &)> &body);

  /// Tiles of `step` over [0, total) of `dim`, the last one total % step
  /// wide if that is not 0: one loop over all of them (the last under an
  /// scf.if), or straight-line code for a single tile. `body` gets the
  /// tile's width.
  void tiled(mlir::OpBuilder &b, unsigned dim, int64_t total, int64_t step,
             mlir::SmallVector<mlir::Value> &ivs,
             const std::function<void(mlir::OpBuilder &, mlir::SmallVector<mlir::Value> &, int64_t)>
                 &body);

  /// The bytes of the f32 buffer `v`.
  static int64_t bytes(mlir::Value v);

  /// Tiles of M; inside each, the other parallel loops and the n tiles, or
  /// (`inner`) straight to the kernel with the n tile `nv`/`lastLanes`. A
  /// dynamic M (c.dynamicRows) runs whole tiles, then one of the rows left.
  void mTiles(mlir::OpBuilder &b, mlir::SmallVector<mlir::Value> &ivs,
              std::optional<std::pair<int64_t, int64_t>> inner = std::nullopt);

  /// The other parallel loops and the n tiles; inside each, the kernel for
  /// `mr` rows, or (no `mr`) the m tiles.
  void nLoops(mlir::OpBuilder &b, mlir::SmallVector<mlir::Value> &ivs, std::optional<int64_t> mr);

  /// Tiles of N; `body` gets each one's vector count and the lanes of its
  /// last vector. A dynamic N (c.dynamicN) runs whole tiles, then one tile
  /// of the 1 .. NV vectors left, its last of kMasked lanes: under
  /// tailMask, made from what is left.
  void nTiles(mlir::OpBuilder &b, mlir::SmallVector<mlir::Value> &ivs,
              const std::function<void(mlir::OpBuilder &, mlir::SmallVector<mlir::Value> &, int64_t,
                                       int64_t)> &body);

  /// The indices of `map` at `ivs`, with dim M and N offset.
  mlir::SmallVector<mlir::Value> indices(mlir::OpBuilder &b, mlir::AffineMap map,
                                         mlir::ArrayRef<mlir::Value> ivs, int64_t mOffset,
                                         int64_t nOffset);

  /// The kernel of one tile at `ivs`: `mr` rows of `nv` vectors, the
  /// last `lastLanes` wide; accumulators from the init, the reduction
  /// loops, the epilogue and the stores.
  void kernel(mlir::OpBuilder &b, mlir::ArrayRef<mlir::Value> ivs, int64_t mr, int64_t nv,
              int64_t lastLanes);

  /// The reduction loops over `dims` around the steps, carrying `acc`.
  mlir::SmallVector<mlir::Value> reduce(mlir::OpBuilder &b, mlir::SmallVector<mlir::Value> &ivs,
                                        mlir::ArrayRef<unsigned> dims, mlir::ValueRange acc,
                                        int64_t mr, int64_t nv,
                                        const std::function<int64_t(int64_t)> &lanesOf);

  /// One reduction step: the row vectors, the broadcasts, and the
  /// accumulators after their multiply-adds.
  mlir::SmallVector<mlir::Value> step(mlir::OpBuilder &b, mlir::ArrayRef<mlir::Value> ivs,
                                      mlir::ValueRange acc, int64_t mr, int64_t nv,
                                      const std::function<int64_t(int64_t)> &lanesOf);

  // Panels and prefetches (KernelPanels.cpp).

  /// Constant weights as the row operand: packs them at compile time into
  /// [N tiles][reduction steps][tile width] (zero-padded), so that each
  /// kernel reads one contiguous panel in the order it multiplies. The
  /// column operand, when constant (a conv's weights against its
  /// activations), likewise into [M tiles][steps][MR]: the broadcasts of a
  /// step are then adjacent instead of MR rows apart.
  void pack(mlir::OpBuilder &b, mlir::ModuleOp module, unsigned &packCount);

  /// `operand` (read through `map`) packed as [tiles of `width` along
  /// `dim`][reduction steps][width], zero-padded, in a new constant global,
  /// one such block per value of the outer parallel dims (c.outer) it
  /// depends on; null if it is not constant data or depends on other
  /// parallel dims. A subview of constant data (a block of a weight's
  /// columns) packs its source, whole along `dim` when the view's offset
  /// there is a loop's induction variable stepping by whole panels.
  mlir::Value packPanel(mlir::OpBuilder &b, mlir::ModuleOp module, unsigned &packCount,
                        mlir::Value operand, mlir::AffineMap map, unsigned dim, int64_t width,
                        Panels &panels);

  /// The packed tile at `ivs`: its tile along `dim` within the set of
  /// the outer loops' values.
  mlir::Value panelTile(mlir::OpBuilder &b, mlir::ArrayRef<mlir::Value> ivs, unsigned dim,
                        int64_t width, const Panels &panels);

  /// outer * range + inner.
  mlir::Value nest(mlir::OpBuilder &b, mlir::Value outer, int64_t range, mlir::Value inner);

  /// The row-major position of `ivs` over the loops `dims`, outermost
  /// first.
  mlir::Value linearIndex(mlir::OpBuilder &b, mlir::ArrayRef<mlir::Value> ivs,
                          mlir::ArrayRef<unsigned> dims);

  /// The reduction step of `ivs` in the packed panel's order.
  mlir::Value reductionStep(mlir::OpBuilder &b, mlir::ArrayRef<mlir::Value> ivs);

  /// Software prefetches, `prefetchDistance` steps of the innermost
  /// reduction loop ahead, of the operands that are not packed and jump
  /// 1 KiB or more per step (a 1x1 conv's activations: one input channel
  /// after the other). Hardware stride prefetchers follow strides within
  /// a page at most (Intel's), so such a stream would otherwise wait on
  /// L3 at every step. The step ahead is clamped to the loop's last.
  void prefetch(mlir::OpBuilder &b, mlir::ArrayRef<mlir::Value> ivs, int64_t mr, int64_t width);

  /// With n tiles outermost, every m tile reads the n tile's packed
  /// panel, and the first one would wait on memory for all of it (weights
  /// too large for the caches stream from DRAM once per inference). So
  /// the m tiles of one n tile prefetch the next tile's panel into L2:
  /// the v-th of them the v-th cache line of each reduction step (a step
  /// of the panel is one line per vector of the tile), the later ones the
  /// last line again, which costs little and keeps the address a plain
  /// induction.
  void prefetchNextPanel(mlir::OpBuilder &b, mlir::ArrayRef<mlir::Value> ivs, mlir::Value tile,
                         mlir::Value r);

  // Output vectors and stores (KernelStores.cpp).

  /// A lane count (`on`, `lastLanes`) that stands for the lanes of
  /// tailMask, known at run time only.
  static constexpr int64_t kMasked = kiln::vec::kMasked;

  /// A vector of the row operand, `on` lanes valid.
  /// Strided (a stride-2 conv) through a wide load and a shuffle; far
  /// apart (a ViT's 16x16 patches) a gather.
  mlir::Value rowVector(mlir::OpBuilder &b, mlir::ValueRange idx, int64_t on);

  /// `on` lanes of `mem` from `idx` along its index `pos`: a (masked) load
  /// when that is the contiguous last one, else a gather.
  mlir::Value vectorAt(mlir::OpBuilder &b, mlir::Value mem, mlir::ValueRange idx, unsigned pos,
                       int64_t on, int64_t lanes = 0);

  /// Writes `on` lanes of `value` to `mem` from `idx` along its index
  /// `pos`: a (masked) store or a scatter.
  void storeAt(mlir::OpBuilder &b, mlir::Value value, mlir::Value mem, mlir::ValueRange idx,
               unsigned pos, int64_t on);

  /// Operand `in` of `op`, an elementwise generic on the output (identity
  /// output map), at the output position `outIdx`: a vector when it moves
  /// along the kernel's vector dim (the output's index `c.outPosN`), else a
  /// scalar broadcast.
  mlir::Value operandAt(mlir::OpBuilder &b, mlir::linalg::GenericOp op, mlir::OpOperand *in,
                        mlir::ArrayRef<mlir::Value> outIdx, int64_t on,
                        std::optional<unsigned> along = std::nullopt, int64_t lanes = 0);

  /// The applied epilogue (if any) of the output vector `value` at
  /// `idx`, its lanes along output position `along`.
  mlir::Value applyEpilogue(mlir::OpBuilder &b, mlir::Value value, mlir::ArrayRef<mlir::Value> idx,
                            int64_t on, std::optional<unsigned> along = std::nullopt);

  /// For a Channels tile whose rows (M) run along the output's contiguous
  /// innermost dim (a conv's output width), the output position of M:
  /// the tile is then transposed in registers and stored a channel at a
  /// time, MR contiguous elements each, instead of scattered.
  std::optional<unsigned> transposedOutput(int64_t mr);

  /// Stores the MR x NV tile `result` (vectors along N) transposed: each
  /// N vector's MR rows, padded to R (a power of two), are interleaved in
  /// log2(R) stages of two-vector shuffles, after which every vector
  /// holds lanes / R channels of R rows each; each channel's rows then go
  /// out as one masked store of MR elements (with the epilogue applied
  /// along them).
  void storeTransposed(mlir::OpBuilder &b, mlir::ArrayRef<mlir::Value> ivs,
                       mlir::ArrayRef<mlir::Value> result, unsigned posM, int64_t mr, int64_t nv,
                       const std::function<int64_t(int64_t)> &lanesOf);

  Contraction c;
  TileShape t;
  bool parallelPending;      ///< No loop is marked kiln.parallel yet.
  bool dynamicNThreads;      ///< Threads::DynamicN.
  mlir::Block *top = nullptr; ///< Where the kernel's outermost loop goes.
  int64_t prefetchDistance;  ///< Steps ahead for far operands (0: none).
  mlir::scf::ForOp fallback; ///< The first loop that shares badly, if any.
  mlir::Value dynamicExtent; ///< The size of c.dynamicReduction, read before the nest.
  mlir::Value nExtent;       ///< The size of a dynamic N, read before the nest.
  mlir::Value rowsExtent;    ///< The size of c.dynamicRows, read before the nest.
  mlir::Value tailMask;      ///< The lanes of N left, inside the loop over them.
  mlir::Value packedRow;     ///< [tiles][steps][width] when the weights are packed.
  mlir::Value packedCol;     ///< [M tiles][steps][MR] when the column operand is packed.
  Panels rowPanel, colPanel;
  int64_t packedWidth = 0;
  bool panelAhead = false; ///< Prefetch the next n tile's packed panel.
  PackedGlobals &packed_;
};

} // namespace kiln::contraction

#endif // KILN_PASSES_CODEGEN_CPU_KERNELBUILDER_H
