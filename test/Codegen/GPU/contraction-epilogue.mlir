// RUN: kiln-opt %s --kiln-gpu-map-loops -canonicalize -cse | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-map-loops=fuse-epilogues=false -canonicalize -cse | FileCheck %s --check-prefix=OFF
// kiln-gpu-map-loops folds what surrounds a tiled contraction into its
// store (passes/Codegen/GPU/Contraction.cpp): the op writing C's initial
// values just before (a fill, a bias broadcast) and an elementwise op on C
// just after (activation, residual add). The numbers are checked on the
// emulated GPU by test/runtime/gpu-emulate.test.

// A fill, the matmul, a ReLU in place: one launch, C never loaded; each
// sum is added to the fill's value, put through the ReLU and stored.
// CHECK-LABEL: func.func @fill_relu(
// CHECK-NOT: linalg.
// CHECK: gpu.launch
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-NOT: memref.load %arg2
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %cst
// CHECK: %[[RELU:.*]] = arith.maximumf %[[SUM]], %cst
// CHECK: memref.store %[[RELU]], %arg2
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
// Without the folding: the fill, the tiled kernel and the ReLU are three
// launches.
// OFF-LABEL: func.func @fill_relu(
// OFF-COUNT-3: gpu.launch
// OFF-NOT: gpu.launch
// OFF: return
func.func @fill_relu(%a: memref<100x70xf32>, %b: memref<70x90xf32>, %c: memref<100x90xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<100x90xf32>)
  linalg.matmul ins(%a, %b : memref<100x70xf32>, memref<70x90xf32>) outs(%c : memref<100x90xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<100x90xf32>) outs(%c : memref<100x90xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// A convolution's bias broadcast into C (a workspace buffer) and a
// residual add + ReLU into the graph's output, after which C is dead: one
// launch that starts from the bias, reads the residual and stores into
// the output; C is neither loaded nor stored (its view goes unused).
// CHECK-LABEL: func.func @bias_residual(
// CHECK-NOT: linalg.
// CHECK-NOT: memref.view
// CHECK: gpu.launch
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: %[[BIAS:.*]] = memref.load %arg2
// CHECK: %[[SUM:.*]] = arith.addf %[[BIAS]]
// CHECK: %[[RES:.*]] = memref.load %arg3
// CHECK: %[[ADD:.*]] = arith.addf %[[SUM]], %[[RES]]
// CHECK: %[[RELU:.*]] = arith.maximumf %[[ADD]]
// CHECK: memref.store %[[RELU]], %arg4
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @bias_residual(%x: memref<1x8x9x9xf32>, %w: memref<16x8x3x3xf32>, %bias: memref<16xf32>,
                         %res: memref<1x16x7x7xf32>, %y: memref<1x16x7x7xf32>,
                         %ws: memref<4096xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c = memref.view %ws[%c0][] : memref<4096xi8> to memref<1x16x7x7xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<16xf32>) outs(%c : memref<1x16x7x7xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x8x9x9xf32>, memref<16x8x3x3xf32>) outs(%c : memref<1x16x7x7xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %res : memref<1x16x7x7xf32>, memref<1x16x7x7xf32>) outs(%y : memref<1x16x7x7xf32>) {
  ^bb0(%in: f32, %r: f32, %out: f32):
    %s = arith.addf %in, %r : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// Few tiles and a long reduction: the sums are added atomically by
// several blocks, so C must hold its initial values first and the ReLU
// must wait for all of them: three launches.
// CHECK-LABEL: func.func @split(
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: memref.atomic_rmw addf
// CHECK: gpu.launch
// CHECK: arith.maximumf
// CHECK: return
func.func @split(%a: memref<1x2048xf32>, %b: memref<2048x1000xf32>, %c: memref<1x1000xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1x1000xf32>)
  linalg.matmul ins(%a, %b : memref<1x2048xf32>, memref<2048x1000xf32>) outs(%c : memref<1x1000xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<1x1000xf32>) outs(%c : memref<1x1000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// An epilogue writing elsewhere while C is read later (a graph output
// here), or into a buffer that the kernel's inputs share (the plan put it
// where A was), stays a launch of its own; the fill still folds in.
// CHECK-LABEL: func.func @kept(
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: gpu.launch
// CHECK: arith.negf
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: %[[A2:.*]] = memref.view %arg4[%c0]
// CHECK: gpu.launch
// CHECK: memref.load %[[A2]]
// CHECK: gpu.launch
// CHECK: arith.negf
// CHECK: return
func.func @kept(%a: memref<100x70xf32>, %b: memref<70x90xf32>, %c: memref<100x90xf32>,
                %d: memref<100x90xf32>, %ws: memref<65536xi8>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<100x90xf32>)
  linalg.matmul ins(%a, %b : memref<100x70xf32>, memref<70x90xf32>) outs(%c : memref<100x90xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<100x90xf32>) outs(%d : memref<100x90xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  %c28000 = arith.constant 28000 : index
  %a2 = memref.view %ws[%c0][] : memref<65536xi8> to memref<100x70xf32>
  %c2 = memref.view %ws[%c28000][] : memref<65536xi8> to memref<100x90xf32>
  %d2 = memref.view %ws[%c0][] : memref<65536xi8> to memref<100x90xf32>
  linalg.matmul ins(%a2, %b : memref<100x70xf32>, memref<70x90xf32>) outs(%c2 : memref<100x90xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c2 : memref<100x90xf32>) outs(%d2 : memref<100x90xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  }
  return
}

// An epilogue reading its loop indices (linalg.index: a mask by position)
// takes the output element's indices.
// CHECK-LABEL: func.func @indexed(
// CHECK-NOT: linalg.index
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: arith.cmpi ult
// CHECK: arith.select
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: return
func.func @indexed(%a: memref<100x70xf32>, %b: memref<70x90xf32>, %c: memref<100x90xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<100x90xf32>)
  linalg.matmul ins(%a, %b : memref<100x70xf32>, memref<70x90xf32>) outs(%c : memref<100x90xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<100x90xf32>) outs(%c : memref<100x90xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %below = arith.cmpi ult, %j, %i : index
    %r = arith.select %below, %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}
