//===- StripDynamicDims.cpp - kiln-strip-dynamic-dims pass -----------------===//
//
// The vector kernels (kiln-vectorize-contractions, -elementwise) are built
// for static shapes. A generic on buffers with dynamic loop ranges (a
// model's dynamic dim, e.g. a sequence length) is strip-mined here into
// static pieces: every dynamic loop dim d of size S runs as
//
//   for i = 0 .. S - S % T step T:   the generic on the T-wide window at i
//   for i = S - S % T .. S:          the generic on the 1-wide window at i
//
// (nested for several dynamic dims; in a contraction with an operand that
// does not vary along the outermost, a weight matrix, that one also runs
// a window of T / 2 and one of T / 4 between the two, each once at most,
// so that 4 to 15 rows left over, or a length below T, take kernels that
// reuse the operand over several rows rather than reloading it for each;
// so does an elementwise transpose into a dynamic dim, along it (its
// windows take block transposes); a conv, and a copy of its input's
// windows, runs windows of T / 2, T / 4 and T / 8 along each dim too),
// each piece a copy of the generic on
// subviews of its operands, with static loop ranges. The pieces of a
// parallel dim write disjoint windows of the output; those of a reduction
// dim update the same output one after the other, in the generic's own
// order along that dim. A generic is left alone unless every dynamic
// operand dim is indexed by one dynamic loop dim exactly, or as a conv's
// or pool's input (o * stride + k * dilation: a window of w rows of o
// reads (w - 1) * stride + (K - 1) * dilation + 1 input rows), never by
// a division, every dynamic loop dim indexes some operand alone (its
// size), and its body does not read its position along a dynamic dim
// (linalg.index). Plain copies (a pad's interior, the rows a stride-1
// conv stacks) are left whole: LLVM copies their rows faster than the
// pieces would (mobilenet_v2 over a dynamic size: 0.77x the time).
//
// With `parallel`, the loop over the full windows of the outermost dynamic
// dim is marked kiln.parallel (for kiln-outline-parallel-loops) when that
// dim is parallel, every output is indexed by it (the windows write
// disjoint elements) and a window does enough work; the kernels inside
// then mark no loop of their own. The smaller windows, which run once at
// most, and the rest, one row at a time, stay serial and their kernels
// mark their own (a batch of 4 rows through a 784 -> 1024 -> 1024 MLP at
// two threads: 0.61x the time of a parallel loop of one window). When the
// windows do too little
// work to share out, a loop over blocks of a static parallel dim (the
// channels of an activation or a depthwise conv) goes around all the
// pieces and is marked instead: one parallel loop for the op, not one per
// piece (dynamic mobilenet_v2 at two threads: 0.80x the time). A
// contraction without such a dim (the output channels, which its input
// lacks) has its windows marked with kiln.min_trips: they go to threads
// when there are enough of them at run time.
//
// A contraction's elementwise epilogue (a bias, an activation, a residual
// add) is strip-mined with it: each window of the contraction is followed
// by the epilogue on the same window, which the kernel folds in (out of
// place too, when nothing else reads the output: the piece is marked
// kiln.output_read_once, as kiln-vectorize-contractions cannot see that
// inside a loop). One that reads the output through an expansion (a
// flattened 1x1 conv's activation, read as [C, H, W]) is first rebuilt on
// the output's shape (dynamic efficientnet_b0: 0.83x the time). A
// constant fill of the output just before (the zero a MatMul or Gemm
// accumulates on, or a copy of a buffer filled with it) becomes a fill of
// each window before its piece, which the kernel folds in too. Before,
// both ran whole on one thread: an MLP of 784 -> 1024 -> 1024 over 256
// rows spent 0.13 ms of its 2.9 ms at two threads there.
//
// Weights beyond L2 (a conv's, a matmul's constant columns) would stream
// from memory once per window; blocks of the output channels or columns
// then go around all the pieces (each block's weights staying in cache
// across the windows), and the blocks go to threads. A block of a
// matmul's weights is a view of the constant at an offset known at run
// time; the kernels still pack it (the whole weight, each block's kernel
// starting at its own panel).
//
// A contraction's dynamic reduction dim (attention's keys, in the
// probabilities times the values) is not stripped: its windows would each
// load and store the output tile again (twice the time of the static
// kernel at 128 tokens). The pieces keep it whole and the kernel loops
// over it (kiln::contraction::Contraction::dynamicReduction). Nor are its
// dynamic columns (attention's keys, in the queries times the keys; a
// flattened 1x1 conv's H x W), when no epilogue runs window by window with
// it or the kernel folds that epilogue in: one-column pieces took 7 us a
// layer at 12 tokens, where the kernel's whole tiles and a masked last
// vector take under 1 (Contraction::dynamicN).
//
// A flattened 1x1 conv whose epilogue writes the window of a padded buffer
// (the input of a depthwise conv) runs image row by image row when the
// image is at least kMinImageRow wide at run time: each row's conv and
// epilogue one kernel writing that row of the pad, with the row's borders
// (byImageRows, in StripImageRows.cpp). So does a stride-1 conv over the
// row-stacked grid (kiln-view-row-stacks: [C, H * Wp], Wp the padded
// width) whose epilogue reads its output's [C, H, W] window and writes a
// buffer of its own (the ReLU6 after a depthwise conv): each row's conv
// over its W columns, the epilogue's row stored by the kernel
// (gridByRows). An elementwise op's windows with
// little work each go to threads when there are enough of them at run
// time (kiln.min_trips).
//
// Which epilogues run window by window, and their pieces, are in
// StripEpilogues.cpp; which generics and dims are stripped, and the
// blocks of channels that go around their pieces, in StripRules.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/StripDynamicDims.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Utils/Buffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>
#include <limits>

namespace kiln {
#define GEN_PASS_DEF_STRIPDYNAMICDIMSPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln::strip;

namespace {

/// An input of `op` is read through a window (an index with a strided
/// use: a conv's or a pool's `h * s + kh`, the grid's `n + kw`).
bool readsWindow(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  return llvm::any_of(op.getIndexingMapsArray(), [&](AffineMap map) {
    return llvm::any_of(map.getResults(), [&](AffineExpr e) {
      return !isa<AffineDimExpr>(e) && stridedUse(e, ranges);
    });
  });
}

struct StripDynamicDimsPass
    : public kiln::impl::StripDynamicDimsPassBase<StripDynamicDimsPass> {
  using Base::Base;

  /// The flat copies byImageRows keeps for narrow maps.
  llvm::DenseSet<Operation *> flatOnly;

  void runOnOperation() override {
    if (chunk < 2)
      return;
    flatOnly.clear();
    eraseDeadWrites();
    if (parallel)
      shareOutPadFills();
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && !op->getParentOfType<linalg::GenericOp>())
        ops.push_back(op);
    });
    llvm::DenseSet<Operation *> done;
    // byImageRows adds the copies it keeps for narrow maps.
    for (size_t i = 0; i < ops.size(); ++i) {
      linalg::GenericOp op = ops[i];
      if (done.contains(op))
        continue;
      SmallVector<std::pair<unsigned, SizeSource>> dims = dynamicDims(op);
      if (std::optional<unsigned> whole = wholeReduction(op, dims))
        llvm::erase_if(dims, [&](auto d) { return d.first == *whole; });
      if (dims.empty())
        continue;
      if (!plainCopy(op)) {
        // The elementwise kernels take a dynamic innermost dim whole, its
        // last vector masked: one column at a time went element by
        // element (a softmax over 12 keys).
        if (kiln::vec::takesDynamicInnermost(op))
          llvm::erase_if(dims, [&](auto d) { return d.first + 1 == op.getNumLoops(); });
        // So do a pool's window vectors its output columns: in 2-D
        // windows of 16/8/4/2/1, a stride-2 max pool over 111 x 111 ran
        // as 25 piece shapes, most of them narrow.
        else if (std::optional<unsigned> p = kiln::vec::dynamicWindowDim(op))
          llvm::erase_if(dims, [&](auto d) { return d.first == *p; });
        // The epilogue it replaces is erased: never visited again.
        linalg::GenericOp after = flatEpilogue(op, dims, done);
        if (!after && (byImageRows(op, dims, parallel, flatOnly, done, ops) ||
                       gridByRows(op, dims, parallel, flatOnly, done, ops)))
          continue;
        if (!after && (after = plainEpilogue(op, dims)))
          done.insert(after);
        // The kernels take dynamic columns whole: without an epilogue, or
        // with one they fold in (one that cannot fold into them would be
        // left over a dynamic dim). Windows of 16 columns were one vector
        // a tile row: a flattened 1x1 conv and its ReLU6 over a dynamic
        // H x W, 1.5x the static kernel's time.
        if (std::optional<unsigned> columns = wholeColumns(op, dims)) {
          if (after && dims.size() == 1 && foldsWhole(op, after))
            continue;
          if (!after)
            llvm::erase_if(dims, [&](auto d) { return d.first == *columns; });
        }
        if (!dims.empty())
          strip(op, dims, after);
        else if (parallel && readsWindow(op) && op.getNumReductionLoops())
          // A depthwise conv over a narrow map's grid, its columns whole
          // (or a pool whose only dynamic dim is its output row): blocks
          // of its channels go to threads, as around its pieces (strip).
          // Its kernel's loop over them runs on one thread.
          if (std::optional<std::pair<unsigned, int64_t>> blocks =
                  parallelBlocks(op, op.getStaticLoopRanges())) {
            // A constant init is filled block by block, folded into the
            // kernels: whole, it ran on one thread before them.
            auto [init, initValue] = constantInitOf(op);
            inBlocks(op, blocks->first, blocks->second, initValue);
            eraseInit(init);
          }
        continue;
      }
      // A plain copy stays whole along its dynamic dims; with threads,
      // blocks of its channels go to threads (a pad's interior).
      std::optional<std::pair<unsigned, int64_t>> blocks =
          parallel ? parallelBlocks(op, op.getStaticLoopRanges()) : std::nullopt;
      if (blocks)
        inBlocks(op, blocks->first, blocks->second);
    }
  }

  /// Top-level plain copies over dynamic dims into a planned buffer
  /// that nothing reads afterwards: a copy bufferization made for a
  /// reshape whose result only gives sizes (squeezenet1_1's squeeze
  /// outputs, a pass over each on one thread), which the static build's
  /// canonicalisation drops with the sizes it no longer needs.
  void eraseDeadWrites() {
    SmallVector<linalg::GenericOp> dead;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      for (linalg::GenericOp op : fn.getBody().getOps<linalg::GenericOp>())
        if (op.hasPureBufferSemantics() && plainCopy(op) &&
            llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic) &&
            kiln::contraction::deadAfter(op, op.getDpsInitOperand(0)->get()))
          dead.push_back(op);
    for (linalg::GenericOp op : dead)
      op.erase();
  }

  /// A dynamic pad's fill of its whole buffer (a top-level linalg.map
  /// without inputs writing a constant into a contiguous buffer over
  /// dynamic dims, followed by a plain copy into a window of it) runs in
  /// chunks of kFillChunk elements of the flattened buffer, on threads
  /// from two chunks on. On one thread, at two, it wrote lines that the
  /// other core held: mobilenet_v2's 576 x 16 x 16 pad took 80 us there
  /// against 8 us on one thread.
  void shareOutPadFills() {
    SmallVector<linalg::MapOp> maps;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      for (linalg::MapOp map : fn.getBody().getOps<linalg::MapOp>()) {
        auto type = cast<MemRefType>(map.getInit().getType());
        if (!map.hasPureBufferSemantics() || !map.getInputs().empty() || type.hasStaticShape() ||
            !type.getLayout().isIdentity() || !kiln::vec::constantFill(map, map.getInit()))
          continue;
        Operation *next = map->getNextNode();
        while (next && kiln::contraction::isView(next))
          next = next->getNextNode();
        auto copy = dyn_cast_or_null<linalg::GenericOp>(next);
        if (copy && plainCopy(copy) &&
            kiln::rootBuffer(copy.getDpsInitOperand(0)->get()) == kiln::rootBuffer(map.getInit()))
          maps.push_back(map);
      }
    for (linalg::MapOp map : maps) {
      OpBuilder b(map);
      Value init = map.getInit();
      inChunks(b, map.getLoc(), init, parallel, [&](OpBuilder &nb, Value piece) {
        IRMapping mapping;
        mapping.map(init, piece);
        nb.clone(*map, mapping);
      });
      map.erase();
    }
  }

  /// Whether the kernel of the contraction `op`, left whole, folds in its
  /// epilogue `after` (plainEpilogue, flatEpilogue: what it writes is
  /// apart from `op`'s operands), out of place if it reads the output
  /// last (kOutputReadOnce).
  static bool foldsWhole(linalg::GenericOp op, linalg::GenericOp after) {
    Value output = op.getDpsInitOperand(0)->get();
    if (after.getDpsInitOperand(0)->get() != output &&
        kiln::contraction::deadAfter(after, output))
      op->setAttr(kiln::contraction::kOutputReadOnce, UnitAttr::get(op.getContext()));
    kiln::contraction::prepareEpilogue(op);
    std::optional<kiln::contraction::Contraction> c = kiln::contraction::match(op);
    if (c && c->dynamicN && c->epilogue == after)
      return true;
    op->removeAttr(kiln::contraction::kOutputReadOnce);
    return false;
  }

  /// Strip-mines `op`; with `after` (its epilogue on its output's shape,
  /// flatEpilogue), each piece of `op` is followed by `after` on the same
  /// window of the output, where `after` was (only ops without memory effects
  /// between: views, sizes, index arithmetic).
  void strip(linalg::GenericOp op, ArrayRef<std::pair<unsigned, SizeSource>> dims,
             linalg::GenericOp after = {}) {
    Location loc = op.getLoc();
    OpBuilder b(after ? after.getOperation() : op.getOperation());
    // A contraction's output filled with a constant just before (a fill,
    // a copy of a filled buffer) is filled window by window instead, right
    // before each piece, whose kernel folds the fill in: the whole fill
    // and copy ran on one thread and wrote the output once more.
    Value output = op.getNumDpsInits() == 1 ? op.getDpsInitOperand(0)->get() : Value();
    Operation *init = nullptr;
    Value fill;
    if (output && op.getNumReductionLoops() &&
        llvm::all_of(dims, [&](auto d) {
          return op.getIteratorTypesArray()[d.first] == utils::IteratorType::parallel;
        })) {
      init = kiln::contraction::initCandidate(op);
      std::optional<float> value = kiln::contraction::constantInit(init, output);
      if (!value && (init = earlierFill(op, output)))
        value = kiln::contraction::constantInit(init, output);
      if (value && cast<MemRefType>(output.getType()).getElementType().isF32())
        fill = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(*value));
      else
        init = nullptr;
    }
    // The epilogue out of place, reading the output that nothing reads
    // after it, into memory that `op`'s inputs do not share (both kinds
    // of epilogue passed writesOwnMemory): each piece's kernel may fold
    // it in (kOutputReadOnce).
    bool readOnce = after && output && after.getDpsInitOperand(0)->get() != output &&
                    kiln::contraction::deadAfter(after, output);
    // The sizes, read before the loops.
    SmallVector<Value> sizes;
    for (auto [d, src] : dims)
      sizes.push_back(memref::DimOp::create(b, loc, op->getOperand(src.operand), src.pos));
    unsigned numLoops = op.getNumLoops();
    SmallVector<Window> windows(numLoops);
    // The windows of T rows of the outermost dynamic dim run on threads
    // when that dim is parallel, every output has it (the windows write
    // disjoint elements) and a window is worth it; the kernels inside then
    // mark nothing. Smaller windows run once at most, and their kernels
    // share out their own loops.
    // Per window row: the work of one row of the static dims.
    int64_t rowWork = 0;
    // The same for an elementwise op, each short row counted as a cache
    // line; zero for a contraction.
    int64_t lineWork = 0;
    // A conv's windows (an input read through strided uses) take them
    // along every dim: a feature map's rows and columns are often below
    // T (7, 14), and each window streams the weights once.
    SmallVector<int64_t> loopRanges = op.getStaticLoopRanges();
    bool windowInput = readsWindow(op);
    // So do copies of windows (a strided conv's im2col: every loop
    // parallel); their pieces share out their own loops (the channels),
    // as the windows of a small map are few.
    bool windowCopy =
        windowInput && !llvm::is_contained(op.getIteratorTypesArray(),
                                           utils::IteratorType::reduction);
    bool contraction = kiln::contraction::isF32MultiplyAccumulate(op);
    if (parallel && !windowCopy) {
      unsigned d = dims.front().first;
      int64_t work = staticWork(op.getStaticLoopRanges());
      // A contraction's dynamic dim left whole (wholeReduction,
      // wholeColumns) counts as the kernels count it. The elementwise
      // kernels' whole innermost dim (takesDynamicInnermost) counts as one
      // element, as when it was stripped: its size may be a 7x7 map's 7.
      for (auto [r, range] : llvm::enumerate(loopRanges))
        if (contraction && ShapedType::isDynamic(range) &&
            !llvm::is_contained(llvm::make_first_range(dims), r))
          work *= kiln::contraction::kNominalExtent;
      bool disjoint = op.getIteratorTypesArray()[d] == utils::IteratorType::parallel &&
                      llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &out) {
                        return llvm::is_contained(op.getMatchingIndexingMap(&out).getResults(),
                                                  getAffineDimExpr(d, op.getContext()));
                      });
      if (disjoint) {
        rowWork = work;
        // As kiln-vectorize-elementwise counts it: a short innermost row
        // costs a cache line all the same (a dynamic pad's column
        // borders, two elements a row).
        int64_t innermost = loopRanges.back();
        if (!contraction && !ShapedType::isDynamic(innermost) && innermost > 0 &&
            d + 1 != numLoops)
          lineWork = kiln::vec::elementCost(op) * std::max(work, work / innermost * 16);
      }
    }
    // Whether windows `w` rows wide run on threads.
    auto threadsFor = [&](int64_t w) { return w > 1 && rowWork * w >= (int64_t(1) << 15); };
    // The rest, one row at a time, of an elementwise generic whose rows
    // cost enough that four are worth two threads: an LSTM's gates over a
    // dynamic batch of 8 ran row by row on one thread, about 5 us per step.
    // (A contraction's rest stays serial: its kernels share out their own
    // loops.)
    bool restOnThreads = rowWork && !op.getNumReductionLoops() &&
                         rowWork * kiln::vec::elementCost(op) * 4 >= kiln::vec::kElementwiseParallelWork;
    // Windows of T / 2 and T / 4 along the outermost dynamic dim: for a
    // contraction (a reduction dim) with an input that does not vary
    // along it, which a window of rows reuses.
    unsigned outer = dims.front().first;
    bool midWindows =
        llvm::is_contained(op.getIteratorTypesArray(), utils::IteratorType::reduction) &&
        llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
          return !op.getMatchingIndexingMap(in).isFunctionOfDim(outer);
        });
    // Such a contraction whose window of T rows is enough work to split by
    // itself: the loop over its windows of T is marked kiln.parallel_nests
    // too, and the kernels inside it mark their own loops (columns). At
    // run time a loop of one trip runs on the calling thread, and its
    // kernels' loops go to threads; with more trips the windows go to
    // threads and the kernels' loops run serially in each (a batch of T to
    // 2T - 1 rows left on one thread: an MLP's batch of 16 at two threads
    // took 1.6x its static time).
    bool kernelsShare = !windowInput && midWindows && rowWork * chunk >= (int64_t(1) << 20);
    // The rows left after the windows of T along the outermost dim of a
    // contraction whose kernels take them whole (fewer than T: as M, full
    // tiles and then one of the rows left) run as one piece:
    // twelve rows in windows of 8 and 4 took tiles of 6, 2 and 4, three
    // passes over the weights where the static kernel makes two.
    bool tryOneRest = !windowInput && midWindows && restAsRows(op, dims.front().first);
    scf::ForOp restLoop;
    bool inRest = false;
    SmallVector<linalg::GenericOp> restPieces;
    using Ranges = SmallVector<std::tuple<Value, Value, Value, int64_t>>;
    std::function<void(OpBuilder &, unsigned)> nest;
    // Windows of T / 2 and T / 4 (midWindows, outermost; a conv's T / 2,
    // T / 4 and T / 8, each once at most) from `whole` on, then the rest
    // one at a time, appended to `ranges` with the most times each runs.
    auto restWindows = [&](OpBuilder &b, unsigned k, Value whole, Ranges &ranges,
                           SmallVector<int64_t> &maxTrips) {
      Value size = sizes[k];
      // The pieces multiply across the dims: with three or more (a 3-D
      // conv or pool over dynamic D, H and W) only the outermost takes the
      // middle windows, so that a conv is not copied into hundreds of
      // kernels (each compiled: minutes for one AvgPool3d).
      SmallVector<int64_t> mids;
      if (windowInput && (midWindows || windowCopy) && (k == 0 || dims.size() <= 2))
        mids = {chunk / 2, chunk / 4, chunk / 8};
      else if ((k == 0 && midWindows) || transposesInto(op, dims[k].first))
        mids = {chunk / 2, chunk / 4};
      // A window of `mid` rows follows windows twice as wide, so it runs
      // once at most.
      int64_t previous = chunk;
      for (int64_t mid : mids) {
        if (mid < 2 || chunk % mid)
          continue;
        Value m = arith::ConstantIndexOp::create(b, loc, mid);
        Value wholeMid =
            arith::SubIOp::create(b, loc, size, arith::RemUIOp::create(b, loc, size, m));
        ranges.push_back({whole, wholeMid, m, mid});
        maxTrips.push_back(previous / mid - 1);
        previous = mid;
        whole = wholeMid;
      }
      ranges.push_back({whole, size, arith::ConstantIndexOp::create(b, loc, 1), 1});
      maxTrips.push_back(previous - 1);
    };
    // The loops over `ranges` along the k-th dynamic dim.
    auto windowLoops = [&](OpBuilder &b, unsigned k, const Ranges &ranges,
                           ArrayRef<int64_t> maxTrips) {
      unsigned d = dims[k].first;
      for (auto [r, range] : llvm::enumerate(ranges)) {
        auto [lo, hi, step, w] = range;
        auto loop = scf::ForOp::create(b, loc, lo, hi, step);
        // A loop that runs once at most is not shared out: the kernels
        // inside share their own loops (a batch of 8 rows: one window,
        // its weight read once, its columns split between threads). The
        // rest (one row at a time) stays serial too, unless
        // restOnThreads: its kernels may share out their own loops (one
        // token's matmuls).
        if (k == 0 && ((maxTrips[r] > 1 && threadsFor(w)) || (w == 1 && restOnThreads))) {
          loop->setAttr("kiln.parallel", UnitAttr::get(loop.getContext()));
          if (kernelsShare)
            loop->setAttr("kiln.parallel_nests", UnitAttr::get(loop.getContext()));
        } else if (k == 0 && contraction && rowWork && w > 1 && maxTrips[r] > 1) {
          // A contraction's windows with too little work each (a 1x1
          // conv of few channels, its kernels too small to split): the
          // windows go to threads when there are enough of them at run
          // time (mobilenet_v2's 16 -> 96 expansion at 112x112: 784 of
          // 16 pixels, 0.3 ms on one thread).
          kiln::vec::markParallelFrom(loop, rowWork * w);
        } else if (k == 0 && lineWork && w > 1 && maxTrips[r] > 1 &&
                   !op.getNumReductionLoops()) {
          // The same for an elementwise op, with its threshold: a
          // dynamic pad's column borders, 96 x 114 runs of two elements
          // in windows of 16, ran serially, at two threads after the
          // other core had written half of those lines.
          kiln::vec::markParallelFrom(loop, lineWork * w, 2, kiln::vec::kElementwiseParallelWork);
        }
        OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
        // The rest's size, read once for every view of its window.
        bool rest = w == kToEnd;
        Value at = loop.getInductionVar();
        windows[d] = {at, w, rest ? arith::SubIOp::create(nb, loc, hi, at).getResult() : Value()};
        // Every piece inside the rest's loop, inner dims' windows too.
        if (rest) {
          restLoop = loop;
          inRest = true;
        }
        nest(nb, k + 1);
        if (rest)
          inRest = false;
      }
    };
    nest = [&](OpBuilder &b, unsigned k) {
      if (k == dims.size()) {
        linalg::GenericOp p =
            after ? pieceWithEpilogue(b, op, after, windows) : piece(b, op, windows);
        if (fill) {
          OpBuilder fb(p);
          linalg::FillOp::create(fb, loc, fill, p.getDpsInitOperand(0)->get());
        }
        if (readOnce)
          p->setAttr(kiln::contraction::kOutputReadOnce, UnitAttr::get(p.getContext()));
        if (inRest)
          restPieces.push_back(p);
        return;
      }
      Value size = sizes[k];
      Value t = arith::ConstantIndexOp::create(b, loc, chunk);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value whole = arith::SubIOp::create(b, loc, size, arith::RemUIOp::create(b, loc, size, t));
      // Full windows of T, then the rest: as one piece (tryOneRest: a
      // loop of one trip at most), or in smaller windows.
      Ranges ranges = {{zero, whole, t, chunk}};
      SmallVector<int64_t> maxTrips = {std::numeric_limits<int64_t>::max()};
      if (k == 0 && tryOneRest) {
        ranges.push_back({whole, size, t, kToEnd});
        maxTrips.push_back(1);
      } else {
        restWindows(b, k, whole, ranges, maxTrips);
      }
      windowLoops(b, k, ranges, maxTrips);
    };
    // Each piece of the rest must be a kernel over its dynamic rows, with
    // its epilogue folded in; else (a body the kernels do not take) the
    // rest goes back to windows, which the vector passes take static.
    auto restTaken = [&](linalg::GenericOp p) {
      kiln::contraction::prepareEpilogue(p);
      std::optional<kiln::contraction::Contraction> c = kiln::contraction::match(p);
      return c && c->dynamicRows && (!after || c->epilogue);
    };
    auto checkRest = [&] {
      if (!restLoop || llvm::all_of(restPieces, restTaken))
        return;
      OpBuilder rb(restLoop);
      Ranges ranges;
      SmallVector<int64_t> maxTrips;
      restWindows(rb, 0, restLoop.getLowerBound(), ranges, maxTrips);
      windowLoops(rb, 0, ranges, maxTrips);
      restLoop.erase();
    };
    // Weights beyond L2 are streamed once per window; with blocks of
    // output channels (a matmul's columns) outside the windows, each block
    // stays in L2 across them (and the blocks, not the windows, go to
    // threads). A conv's blocks may fill about L2 (1.25 MiB); a matmul's
    // take half of that, its rows' windows and outputs passing through
    // beside them (an MLP's 784 -> 1024 -> 1024 layers at 256 rows, blocks
    // of 128 columns against 256: 0.96x the time at one thread, the same
    // at two).
    std::optional<std::pair<unsigned, int64_t>> blocks;
    if (windowInput)
      blocks = channelBlocks(op, loopRanges, 1280 * 1024);
    else if (midWindows)
      blocks = channelBlocks(op, loopRanges, 640 * 1024);
    // Windows too small to share out: blocks of a static parallel dim
    // (the channels) go to threads instead, every piece inside them, so
    // that the op is one parallel loop rather than one per piece (an
    // activation over a 56x56 map: 33 pieces, each a few microseconds).
    // So do a depthwise conv's or a pool's (a window input, reductions:
    // the dim parallelBlocks finds is the channels) whatever the work of
    // their windows:
    // over a 7x7 map's row-stacked grid, 63 columns, three windows of 16
    // went to two threads and the 15 columns left ran on one, and the
    // activation after it, split by channels, read lines the other core
    // had written.
    bool channelWise = windowInput && op.getNumReductionLoops();
    if (!blocks && parallel && (!threadsFor(chunk) || channelWise))
      blocks = parallelBlocks(op, loopRanges);
    if (blocks) {
      auto [m, size] = *blocks;
      auto loop = scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                                     arith::ConstantIndexOp::create(b, loc, loopRanges[m]),
                                     arith::ConstantIndexOp::create(b, loc, size));
      if (parallel)
        loop->setAttr("kiln.parallel", UnitAttr::get(loop.getContext()));
      rowWork = 0;
      lineWork = 0;
      restOnThreads = false;
      windows[m] = {loop.getInductionVar(), size, Value()};
      OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
      nest(nb, 0);
    } else {
      nest(b, 0);
    }
    checkRest();
    op.erase();
    if (after)
      after.erase();
    eraseInit(init);
  }

  /// `op` in a loop over blocks of `size` along loop dim `m`, marked
  /// kiln.parallel, each a copy of `op` on that block, its output filled
  /// with `initValue` first if there is one.
  void inBlocks(linalg::GenericOp op, unsigned m, int64_t size,
                std::optional<float> initValue = std::nullopt) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto loop = scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                                   arith::ConstantIndexOp::create(b, loc, op.getStaticLoopRanges()[m]),
                                   arith::ConstantIndexOp::create(b, loc, size));
    loop->setAttr("kiln.parallel", UnitAttr::get(loop.getContext()));
    SmallVector<Window> windows(op.getNumLoops());
    windows[m] = {loop.getInductionVar(), size, Value()};
    OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
    linalg::GenericOp block = piece(nb, op, windows);
    if (initValue) {
      OpBuilder fb(block);
      linalg::FillOp::create(
          fb, loc, arith::ConstantOp::create(fb, loc, fb.getF32FloatAttr(*initValue)).getResult(),
          block.getDpsInitOperand(0)->get());
    }
    op.erase();
  }
};

} // namespace

/// The elements of a chunk of a whole pad's fill (shareOutPadFills,
/// byImageRows' narrow maps).
static constexpr int64_t kFillChunk = 16384;

/// Declared in StripDynamicDims.h.
void kiln::strip::inChunks(OpBuilder &b, Location loc, Value buffer, bool parallel,
                             llvm::function_ref<void(OpBuilder &, Value)> fillChunk) {
  auto type = cast<MemRefType>(buffer.getType());
  ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  Value flat = memref::CollapseShapeOp::create(b, loc, buffer, ArrayRef<ReassociationIndices>{all});
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value size = memref::DimOp::create(b, loc, flat, zero);
  Value chunk = arith::ConstantIndexOp::create(b, loc, kFillChunk);
  auto loop = scf::ForOp::create(b, loc, zero, size, chunk);
  if (parallel) {
    loop->setAttr("kiln.parallel", b.getUnitAttr());
    loop->setAttr(kiln::vec::kMinTrips, b.getI64IntegerAttr(2));
  }
  OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
  Value at = loop.getInductionVar();
  Value left = arith::SubIOp::create(nb, loc, size, at);
  Value len = arith::MinUIOp::create(nb, loc, left, chunk);
  fillChunk(nb, memref::SubViewOp::create(nb, loc, flat, ArrayRef<OpFoldResult>{at},
                                          ArrayRef<OpFoldResult>{len},
                                          ArrayRef<OpFoldResult>{nb.getIndexAttr(1)}));
}

/// Declared in StripDynamicDims.h.
Operation *kiln::strip::earlierFill(linalg::GenericOp op, Value output) {
  Value root = kiln::rootBuffer(output);
  if (!root.getDefiningOp<memref::ViewOp>() || !isa<func::FuncOp>(op->getParentOp()))
    return nullptr;
  for (Operation *o = op->getPrevNode(); o; o = o->getPrevNode()) {
    if (kiln::vec::constantFill(o, output))
      return o;
    if (!kiln::contraction::isView(o) && kiln::touches(o, root))
      return nullptr;
  }
  return nullptr;
}

/// Erases the fill of `source`'s buffer (a planned one) when nothing
/// reads it any more: the copy of it that was a contraction's init is
/// gone (the LSTM's input projections over a dynamic length and batch
/// still filled 3.2 MB with zeros on one thread).
static void eraseDeadFill(Value source) {
  Value root = kiln::rootBuffer(source);
  auto view = root.getDefiningOp<memref::ViewOp>();
  if (!view || !isa<func::FuncOp>(view->getParentOp()))
    return;
  SmallVector<linalg::FillOp> dead;
  for (Operation &o : *view->getBlock())
    if (auto fill = dyn_cast<linalg::FillOp>(o);
        fill && fill.hasPureBufferSemantics() &&
        kiln::rootBuffer(fill.getDpsInitOperand(0)->get()) == root &&
        kiln::contraction::deadAfter(fill, root))
      dead.push_back(fill);
  for (linalg::FillOp fill : dead)
    fill.erase();
}

/// Declared in StripDynamicDims.h.
void kiln::strip::eraseInit(Operation *init) {
  if (!init)
    return;
  auto copy = dyn_cast<memref::CopyOp>(init);
  Value source = copy ? copy.getSource() : Value();
  init->erase();
  if (source)
    eraseDeadFill(source);
}

/// Declared in StripDynamicDims.h.
linalg::GenericOp kiln::strip::piece(OpBuilder &b, linalg::GenericOp op,
                                     ArrayRef<Window> windows) {
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  // One view per buffer and indexing: an output updated in place stays
  // the same value as the input it reads (what the kernels check for).
  llvm::DenseMap<std::pair<Value, AffineMap>, Value> views;
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    auto type = cast<MemRefType>(v.getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (Value view = views.lookup({v, map})) {
      operands.push_back(view);
      continue;
    }
    SmallVector<OpFoldResult> offsets, sizes, strides;
    bool windowed = false;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (auto [j, e] : llvm::enumerate(map.getResults())) {
      auto d = dyn_cast<AffineDimExpr>(e);
      strides.push_back(b.getIndexAttr(1));
      std::optional<StridedUse> use = d ? std::nullopt : stridedUse(e, ranges);
      const Window *window = use ? &windows[use->dim] : d ? &windows[d.getPosition()] : nullptr;
      if (use && window->width) {
        Value stride = arith::ConstantIndexOp::create(b, loc, use->stride);
        offsets.push_back(arith::MulIOp::create(b, loc, window->at, stride).getResult());
        // (w - 1) * stride + extent elements; to the end, w = the size.
        if (window->width == kToEnd)
          sizes.push_back(
              arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, window->size, stride),
                  arith::ConstantIndexOp::create(b, loc, use->extent - use->stride))
                  .getResult());
        else
          sizes.push_back(b.getIndexAttr((window->width - 1) * use->stride + use->extent));
        windowed = true;
      } else if (d && window->width == kToEnd) {
        offsets.push_back(window->at);
        sizes.push_back(window->size);
        windowed = true;
      } else if (d && window->width) {
        offsets.push_back(window->at);
        sizes.push_back(b.getIndexAttr(window->width));
        windowed = true;
      } else {
        offsets.push_back(b.getIndexAttr(0));
        sizes.push_back(type.isDynamicDim(j)
                            ? OpFoldResult(memref::DimOp::create(b, loc, v, j).getResult())
                            : OpFoldResult(b.getIndexAttr(type.getDimSize(j))));
      }
    }
    operands.push_back(windowed ? memref::SubViewOp::create(b, loc, v, offsets, sizes, strides)
                                      .getResult()
                                : v);
    views[{v, map}] = operands.back();
  }
  Operation *copy = b.clone(*op);
  copy->setOperands(operands);
  copy->setAttr(kiln::vec::kWindowPiece, b.getUnitAttr());
  return cast<linalg::GenericOp>(copy);
}
