// RUN: kiln-opt %s --kiln-plan-memory --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-plan-memory=alignment=16 --split-input-file | FileCheck %s --check-prefix=ALIGN16
// RUN: kiln-opt %s --kiln-plan-memory=epilogues=1 --split-input-file | FileCheck %s --check-prefix=EPI
// The static memory plan: every memref.alloc of a public function becomes a
// memref.view at a constant offset of one trailing workspace argument;
// buffers whose live ranges (alloc to last use, through views) do not
// overlap share bytes. Slots are rounded up to the alignment (default 64).

// a -> b -> c: a and b are live together, b and c too, a and c are not, so
// c takes a's slot.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[IN:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<16xf32>, %[[WS:.*]]: memref<128xi8> {kiln.workspace})
// CHECK-SAME: attributes {kiln.workspace_alignment = {{[0-9]+}} : i64, kiln.workspace_size = 128 : i64}
// CHECK-NOT: memref.alloc
// CHECK: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[OFF_A]]][] : memref<128xi8> to memref<16xf32>
// CHECK: memref.copy %[[IN]], %[[A]]
// CHECK: %[[OFF_B:.*]] = arith.constant 64 : index
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[OFF_B]]][] : memref<128xi8> to memref<16xf32>
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK: %[[OFF_C:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = memref.view %[[WS]][%[[OFF_C]]][] : memref<128xi8> to memref<16xf32>
// CHECK: memref.copy %[[B]], %[[C]]
// CHECK: memref.copy %[[C]], %[[OUT]]
// CHECK-NOT: memref.alloc
func.func @chain(%in: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %a, %b : memref<16xf32> to memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  memref.copy %b, %c : memref<16xf32> to memref<16xf32>
  memref.copy %c, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// Reading a size (memref.dim) is not a use: a's last use is the copy into
// b, so c takes a's slot though a's size is read after c is written.
// CHECK-LABEL: func.func @dim_not_use(
// CHECK-SAME: kiln.workspace_size = 128
// CHECK: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK: memref.view %{{.*}}[%[[OFF_A]]][] : memref<128xi8> to memref<16xf32>
// CHECK: %[[OFF_B:.*]] = arith.constant 64 : index
// CHECK: memref.view %{{.*}}[%[[OFF_B]]][] : memref<128xi8> to memref<16xf32>
// CHECK: %[[OFF_C:.*]] = arith.constant 0 : index
// CHECK: memref.view %{{.*}}[%[[OFF_C]]][] : memref<128xi8> to memref<16xf32>
func.func @dim_not_use(%in: memref<16xf32>, %out: memref<16xf32>) -> index {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %a, %b : memref<16xf32> to memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  memref.copy %b, %c : memref<16xf32> to memref<16xf32>
  memref.copy %c, %out : memref<16xf32> to memref<16xf32>
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<16xf32>
  return %n : index
}

// -----

// A view keeps its buffer alive: a is read through %sub after b is dead, so
// c (allocated then) cannot take a's slot but takes b's.
// CHECK-LABEL: func.func @alias_through_subview(
// CHECK-SAME: %[[WS:[^:]*]]: memref<128xi8> {kiln.workspace})
// CHECK-SAME: kiln.workspace_size = 128
// CHECK: %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[OFF_A]]][]
// CHECK: %[[SUB:.*]] = memref.subview %[[A]][4] [4] [1]
// CHECK: %[[OFF_B:.*]] = arith.constant 64 : index
// CHECK: memref.view %[[WS]][%[[OFF_B]]][] : memref<128xi8> to memref<16xf32>
// CHECK: %[[OFF_C:.*]] = arith.constant 64 : index
// CHECK: %[[C:.*]] = memref.view %[[WS]][%[[OFF_C]]][] : memref<128xi8> to memref<4xf32>
// CHECK: memref.copy %[[SUB]], %[[C]]
func.func @alias_through_subview(%in: memref<16xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  %sub = memref.subview %a[4] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: 4>>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %in, %b : memref<16xf32> to memref<16xf32>
  %c = memref.alloc() : memref<4xf32>
  memref.copy %sub, %c : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32>
  memref.copy %c, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Uses inside a loop count at the loop: a and b overlap.
// CHECK-LABEL: func.func @use_in_loop(
// CHECK-SAME: kiln.workspace_size = 128
// CHECK: memref.view %{{.*}}[%c0{{.*}}][]
// CHECK: memref.view %{{.*}}[%c64{{.*}}][]
// CHECK: scf.for
func.func @use_in_loop(%in: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    memref.store %v, %b[%i] : memref<16xf32>
  }
  memref.copy %b, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// Largest first: the 256-byte buffer gets offset 0 although the small one
// is allocated before it; slots are rounded to the alignment (12 -> 64 by
// default, 12 -> 16 with alignment=16).
// CHECK-LABEL: func.func @largest_first(
// CHECK-SAME: memref<320xi8> {kiln.workspace}
// CHECK-SAME: kiln.workspace_size = 320
// CHECK: %[[OFF_SMALL:.*]] = arith.constant 256 : index
// CHECK: memref.view %{{.*}}[%[[OFF_SMALL]]][] : memref<320xi8> to memref<3xf32>
// CHECK: %[[OFF_BIG:.*]] = arith.constant 0 : index
// CHECK: memref.view %{{.*}}[%[[OFF_BIG]]][] : memref<320xi8> to memref<64xf32>
// ALIGN16-LABEL: func.func @largest_first(
// ALIGN16-SAME: memref<272xi8> {kiln.workspace}
// ALIGN16-SAME: kiln.workspace_size = 272
func.func @largest_first(%in: memref<64xf32>, %out: memref<64xf32>) {
  %small = memref.alloc() : memref<3xf32>
  %big = memref.alloc() : memref<64xf32>
  memref.copy %in, %big : memref<64xf32> to memref<64xf32>
  %sub = memref.subview %big[0] [3] [1] : memref<64xf32> to memref<3xf32, strided<[1]>>
  memref.copy %sub, %small : memref<3xf32, strided<[1]>> to memref<3xf32>
  memref.copy %big, %out : memref<64xf32> to memref<64xf32>
  return
}

// -----

// Deallocations go with the allocations.
// CHECK-LABEL: func.func @dealloc(
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @dealloc(%in: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %in, %a : memref<4xf32> to memref<4xf32>
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// No intermediate buffer: an empty workspace, still passed.
// CHECK-LABEL: func.func @no_buffers(
// CHECK-SAME: %{{.*}}: memref<0xi8> {kiln.workspace})
// CHECK-SAME: kiln.workspace_size = 0
// Private functions are not entry points: left alone.
// CHECK-LABEL: func.func private @helper(
// CHECK-SAME: %{{.*}}: memref<4xf32>)
// CHECK-NOT: kiln.workspace
// CHECK: memref.alloc
func.func @no_buffers(%in: memref<4xf32>, %out: memref<4xf32>) {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return
}
func.func private @helper(%in: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %in, %a : memref<4xf32> to memref<4xf32>
  return
}

// -----

// An alloc inside a loop lives for the whole loop: it may not share bytes
// with %a, which is live across the loop, but %after may reuse its slot.
// CHECK-LABEL: func.func @alloc_in_loop(
// CHECK-SAME: %[[WS:[a-z0-9]+]]: memref<128xi8> {kiln.workspace})
// CHECK: arith.constant 0 : index
// CHECK: memref.view %[[WS]]
// CHECK: scf.for
// CHECK: %[[OFF_T:.*]] = arith.constant 64 : index
// CHECK: memref.view %[[WS]][%[[OFF_T]]][]
// CHECK: }
// CHECK: %[[OFF_AFTER:.*]] = arith.constant 64 : index
// CHECK: memref.view %[[WS]][%[[OFF_AFTER]]][]
func.func @alloc_in_loop(%in: memref<16xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloc() : memref<16xf32>
    memref.copy %a, %t : memref<16xf32> to memref<16xf32>
    memref.copy %t, %a : memref<16xf32> to memref<16xf32>
  }
  %after = memref.alloc() : memref<16xf32>
  memref.copy %a, %after : memref<16xf32> to memref<16xf32>
  memref.copy %after, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A buffer yielded out of an scf.if lives as long as the if's result is
// used: %late may not take its slot.
// CHECK-LABEL: func.func @alloc_yielded(
// CHECK-SAME: %[[WS:[a-z0-9]+]]: memref<128xi8> {kiln.workspace})
// CHECK: scf.if
// CHECK: %[[OFF_T:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[WS]][%[[OFF_T]]][]
// CHECK: %[[OFF_LATE:.*]] = arith.constant 64 : index
// CHECK: memref.view %[[WS]][%[[OFF_LATE]]][]
func.func @alloc_yielded(%c: i1, %in: memref<16xf32>, %out: memref<16xf32>) {
  %r = scf.if %c -> memref<16xf32> {
    %t = memref.alloc() : memref<16xf32>
    memref.copy %in, %t : memref<16xf32> to memref<16xf32>
    scf.yield %t : memref<16xf32>
  } else {
    scf.yield %in : memref<16xf32>
  }
  %late = memref.alloc() : memref<16xf32>
  memref.copy %r, %late : memref<16xf32> to memref<16xf32>
  memref.copy %late, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A buffer lives from its first use, not from its alloc: %late is
// allocated first but used only after %early is dead, so both take
// offset 0 and the workspace holds one slot.
// CHECK-LABEL: func.func @first_use(
// CHECK-SAME: %[[WS:[a-z0-9]+]]: memref<64xi8> {kiln.workspace})
// CHECK-SAME: kiln.workspace_size = 64 : i64
// CHECK: %[[OFF_LATE:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[WS]][%[[OFF_LATE]]][]
// CHECK: %[[OFF_EARLY:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[WS]][%[[OFF_EARLY]]][]
func.func @first_use(%in: memref<16xf32>, %out: memref<16xf32>) {
  %late = memref.alloc() : memref<16xf32>
  %early = memref.alloc() : memref<16xf32>
  memref.copy %in, %early : memref<16xf32> to memref<16xf32>
  memref.copy %early, %out : memref<16xf32> to memref<16xf32>
  memref.copy %in, %late : memref<16xf32> to memref<16xf32>
  memref.copy %late, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A contraction's elementwise epilogue writing a new buffer %r, and a
// second one writing into the window of a constant-filled padded buffer
// %p. By default each takes the slot of its contraction's input (%x,
// then %r), dead after the contraction. With epilogues (targets whose
// kernels fold the epilogue in and store its result while still reading
// that input), they are live from their contraction on, and their views
// say so (kiln.live_from_contraction: kiln-strip-dynamic-dims then runs
// such an epilogue window by window with its contraction).
// CHECK-LABEL: func.func @epilogue(
// CHECK-SAME: kiln.workspace_size = 576
// CHECK: %[[X:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %{{.*}}[%[[X]]][] : memref<576xi8> to memref<4x16xf32>
// CHECK: %[[R:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %{{.*}}[%[[R]]][] : memref<576xi8> to memref<4x16xf32>
// CHECK: %[[P:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %{{.*}}[%[[P]]][] : memref<576xi8> to memref<4x18xf32>
// EPI-LABEL: func.func @epilogue(
// EPI-SAME: kiln.workspace_size = 1024
// EPI: %[[X:.*]] = arith.constant 0 : index
// EPI-NEXT: memref.view %{{.*}}[%[[X]]][] : memref<1024xi8> to memref<4x16xf32>
// EPI: %[[T:.*]] = arith.constant 256 : index
// EPI-NEXT: memref.view %{{.*}}[%[[T]]][] : memref<1024xi8> to memref<4x16xf32>
// EPI: %[[R:.*]] = arith.constant 512 : index
// EPI-NEXT: memref.view %{{.*}}[%[[R]]][] {kiln.live_from_contraction} : memref<1024xi8> to memref<4x16xf32>
// EPI: %[[Y:.*]] = arith.constant 768 : index
// EPI-NEXT: memref.view %{{.*}}[%[[Y]]][] : memref<1024xi8> to memref<4x16xf32>
// EPI: %[[P:.*]] = arith.constant 0 : index
// EPI-NEXT: memref.view %{{.*}}[%[[P]]][] {kiln.live_from_contraction} : memref<1024xi8> to memref<4x18xf32>
#mk = affine_map<(m, k, n) -> (m, k)>
#kn = affine_map<(m, k, n) -> (k, n)>
#mn = affine_map<(m, k, n) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
func.func @epilogue(%in: memref<4x16xf32>, %w: memref<4x4xf32>, %out: memref<4x16xf32>,
                    %out2: memref<4x18xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<4x16xf32>
  memref.copy %in, %x : memref<4x16xf32> to memref<4x16xf32>
  %t = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<4x4xf32>, memref<4x16xf32>) outs(%t : memref<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %r = memref.alloc() : memref<4x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4x16xf32>) outs(%r : memref<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }
  memref.copy %r, %out : memref<4x16xf32> to memref<4x16xf32>
  %y = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %r : memref<4x4xf32>, memref<4x16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %p = memref.alloc() : memref<4x18xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<4x18xf32>)
  %win = memref.subview %p[0, 1] [4, 16] [1, 1] : memref<4x18xf32> to memref<4x16xf32, strided<[18, 1], offset: 1>>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<4x16xf32>) outs(%win : memref<4x16xf32, strided<[18, 1], offset: 1>>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }
  memref.copy %p, %out2 : memref<4x18xf32> to memref<4x18xf32>
  return
}

// -----

// The same with a size read between the contraction and its epilogue (a
// memref.dim, as dynamic shapes put there): it touches no element, and
// the epilogue's buffer is still live from the contraction on.
#mk = affine_map<(m, k, n) -> (m, k)>
#kn = affine_map<(m, k, n) -> (k, n)>
#mn = affine_map<(m, k, n) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
// EPI-LABEL: func.func @epilogue_after_dim(
// EPI: memref.view %{{.*}} : memref<{{.*}}xi8> to memref<4x16xf32>
// EPI: memref.view %{{.*}} : memref<{{.*}}xi8> to memref<4x16xf32>
// EPI: memref.dim
// EPI-NEXT: arith.constant
// EPI-NEXT: memref.view %{{.*}} {kiln.live_from_contraction} : memref<{{.*}}xi8> to memref<4x16xf32>
func.func @epilogue_after_dim(%in: memref<4x16xf32>, %w: memref<4x4xf32>,
                              %out: memref<4x16xf32>) -> index {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %x = memref.alloc() : memref<4x16xf32>
  memref.copy %in, %x : memref<4x16xf32> to memref<4x16xf32>
  %t = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<4x4xf32>, memref<4x16xf32>) outs(%t : memref<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %d = memref.dim %t, %c1 : memref<4x16xf32>
  %r = memref.alloc() : memref<4x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4x16xf32>) outs(%r : memref<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }
  memref.copy %r, %out : memref<4x16xf32> to memref<4x16xf32>
  return %d : index
}

// -----

// The same with the epilogue's buffer viewed before the contraction (an
// expansion whose only use is a size: over dynamic dims, the next op's
// shape is read early). The view touches no element: the buffer's life
// starts at the contraction all the same, and it is marked.
#mk = affine_map<(m, k, n) -> (m, k)>
#kn = affine_map<(m, k, n) -> (k, n)>
#mn = affine_map<(m, k, n) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
// EPI-LABEL: func.func @epilogue_viewed_early(
// EPI: memref.view %{{.*}} {kiln.live_from_contraction} : memref<{{.*}}xi8> to memref<4x16xf32>
// EPI-NEXT: memref.expand_shape
// EPI-NEXT: memref.dim
func.func @epilogue_viewed_early(%in: memref<4x16xf32>, %w: memref<4x4xf32>,
                                 %out: memref<4x16xf32>) -> index {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %r = memref.alloc() : memref<4x16xf32>
  %re = memref.expand_shape %r [[0], [1, 2]] output_shape [4, 4, 4] : memref<4x16xf32> into memref<4x4x4xf32>
  %d = memref.dim %re, %c1 : memref<4x4x4xf32>
  %x = memref.alloc() : memref<4x16xf32>
  memref.copy %in, %x : memref<4x16xf32> to memref<4x16xf32>
  %t = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<4x4xf32>, memref<4x16xf32>) outs(%t : memref<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4x16xf32>) outs(%r : memref<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }
  memref.copy %r, %out : memref<4x16xf32> to memref<4x16xf32>
  return %d : index
}
