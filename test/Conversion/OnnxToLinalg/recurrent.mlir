// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// RNN, GRU and LSTM (Recurrent.cpp) as an scf.for over the time steps,
// per direction:
//   - before the loop, W and R of the direction are transposed (at compile
//     time when they are constants, else with linalg.transpose) and the
//     input projection of every step is one matmul generic
//     X[seq*batch, input] x W^T (loops m, k, n; W^T read at (d1, d2)), plus Wb + Rb
//     broadcast along the rows, reshaped to [seq, batch, G*H];
//   - the loop carries the hidden state (and the cell state for LSTM) and
//     Y [seq, batch, H]; each step slices its row of the projection,
//     computes H R^T with the same matmul generic and one elementwise
//     generic over [batch, H] for the gates (each gate's columns sliced out
//     so every map is the identity, peepholes and biases read at (d1));
//   - the new state is linalg.copy'd over the iteration argument (so the
//     loop's results share its buffers) and inserted into Y at the step;
//   - reverse steps read and write time seq-1-t; sequence_lens masks the
//     step with a select per state and zeros for Y;
//   - each direction's Y is its window of Y [seq, dirs, batch, H], put
//     back after its loop (one buffer once bufferized); Y_h/Y_c are
//     stacked into [dirs, batch, H]; layout = 1 transposes in and out.
// What cannot be lowered is tested in unsupported.mlir.

// Forward RNN with a bias and the default Tanh: the projection matmul
// and the bias (Wb + Rb, an elementwise generic) are outside the loop; the
// loop slices row t of the projection, multiplies the iteration argument
// H by R^T, applies tanh(x + hr) in one generic, copies the result into H
// and inserts it into Y at t; Y and Y_h get the direction dim back.
// CHECK-LABEL: func.func @rnn_forward(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<5x2x3xf32>, %[[W:[a-z0-9_]+]]: tensor<1x4x3xf32>, %[[R:[a-z0-9_]+]]: tensor<1x4x4xf32>, %[[B:[a-z0-9_]+]]: tensor<1x8xf32>)
// CHECK: %[[UB:.*]] = arith.constant 5 : index
// CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<5x2x3xf32> into tensor<10x3xf32>
// CHECK: %[[YE:.*]] = tensor.empty() : tensor<5x1x2x4xf32>
// CHECK: %[[R0:.*]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<1x4x4xf32> to tensor<4x4xf32>
// CHECK: %[[RT:.*]] = linalg.transpose ins(%[[R0]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>) permutation = [1, 0]
// CHECK: %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<1x4x3xf32> to tensor<4x3xf32>
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W0]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<3x4xf32>) permutation = [1, 0]
// CHECK: %[[XW:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[X2]], %[[WT]] : tensor<10x3xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<10x4xf32>)
// CHECK-NEXT: ^bb0(%[[MA:[a-z0-9_]+]]: f32, %[[MB:[a-z0-9_]+]]: f32, %[[MO:[a-z0-9_]+]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[MA]], %[[MB]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[MO]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: %[[BIAS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[WB:[a-z0-9_]+]]: f32, %[[RB:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf %[[WB]], %[[RB]] : f32
// CHECK: %[[XWB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[XW]], %[[BIAS]] : tensor<10x4xf32>, tensor<4xf32>)
// CHECK: arith.addf
// CHECK: %[[XW3:.*]] = tensor.expand_shape %[[XWB]] {{\[\[}}0, 1], [2]] output_shape [5, 2, 4] : tensor<10x4xf32> into tensor<5x2x4xf32>
// CHECK: %[[H0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[YW:.*]] = tensor.extract_slice %[[YE]][0, 0, 0, 0] [5, 1, 2, 4] [1, 1, 1, 1] : tensor<5x1x2x4xf32> to tensor<5x2x4xf32>
// CHECK: %[[Y0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[YW]] : tensor<5x2x4xf32>) -> tensor<5x2x4xf32>
// CHECK: %[[LB:.*]] = arith.constant 0 : index
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[LOOP:[a-z0-9_]+]]:2 = scf.for %[[T:[a-z0-9_]+]] = %[[LB]] to %[[UB]] step %[[ONE]] iter_args(%[[H:[a-z0-9_]+]] = %[[H0]], %[[YS:[a-z0-9_]+]] = %[[Y0]]) -> (tensor<2x4xf32>, tensor<5x2x4xf32>) {
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[XW3]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1] : tensor<5x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[HR:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[H]], %[[RT]] : tensor<2x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[HN:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[XT]], %[[HR]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[XA:[a-z0-9_]+]]: f32, %[[HA:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[PRE:.*]] = arith.addf %[[XA]], %[[HA]] : f32
// CHECK-NEXT: %[[TH:.*]] = math.tanh %[[PRE]] : f32
// CHECK-NEXT: linalg.yield %[[TH]] : f32
// CHECK: %[[HC:.*]] = linalg.copy ins(%[[HN]] : tensor<2x4xf32>) outs(%[[H]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[YN:.*]] = tensor.insert_slice %[[HN]] into %[[YS]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<5x2x4xf32>
// CHECK: scf.yield %[[HC]], %[[YN]] : tensor<2x4xf32>, tensor<5x2x4xf32>
// CHECK-NEXT: }
// CHECK: %[[Y:.*]] = tensor.insert_slice %[[LOOP]]#1 into %[[YE]][0, 0, 0, 0] [5, 1, 2, 4] [1, 1, 1, 1] : tensor<5x2x4xf32> into tensor<5x1x2x4xf32>
// CHECK: %[[YHE:.*]] = tensor.empty() : tensor<1x2x4xf32>
// CHECK: %[[YH:.*]] = tensor.insert_slice %[[LOOP]]#0 into %[[YHE]][0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<1x2x4xf32>
// CHECK: return %[[Y]], %[[YH]] : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>
// CHECK-NOT: onnx.
func.func @rnn_forward(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x8xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>) {
  %none = onnx.NoValue
  %y, %yh = "onnx.RNN"(%x, %w, %r, %b, %none, %none) <{activations = ["Tanh", "Tanh"], direction = "forward", hidden_size = 4 : i64, layout = 0 : i64}> : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x8xf32>, none, none) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %yh : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// Bidirectional RNN with an initial state and one activation per
// direction (Relu forward, Sigmoid reverse): two loops, each with its own
// slice of W, R and initial_h; the second reads and writes step 2 - t
// (seq - 1 - t); the results are stacked at direction 0 and 1.
// CHECK-LABEL: func.func @rnn_bidirectional(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<3x2x3xf32>, %[[W:[a-z0-9_]+]]: tensor<2x4x3xf32>, %[[R:[a-z0-9_]+]]: tensor<2x4x4xf32>, %[[H0:[a-z0-9_]+]]: tensor<2x2x4xf32>)
// Forward direction.
// CHECK: %[[RFS:.*]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 4, 4] [1, 1, 1]
// CHECK: %[[RF:.*]] = linalg.transpose ins(%[[RFS]]
// CHECK: %[[WFS:.*]] = tensor.extract_slice %[[W]][0, 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: %[[WF:.*]] = linalg.transpose ins(%[[WFS]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WF]] : tensor<6x3xf32>, tensor<3x4xf32>)
// CHECK: %[[XWF:.*]] = tensor.expand_shape {{.*}} output_shape [3, 2, 4]
// CHECK: %[[HF0:.*]] = tensor.extract_slice %[[H0]][0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[YF:.*]] = tensor.extract_slice %[[YE:[a-z0-9_]+]][0, 0, 0, 0] [3, 1, 2, 4] [1, 1, 1, 1] : tensor<3x2x2x4xf32> to tensor<3x2x4xf32>
// CHECK: %[[YF0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[YF]] : tensor<3x2x4xf32>)
// CHECK: %[[FWD:[a-z0-9_]+]]:2 = scf.for %[[T:[a-z0-9_]+]] = %{{.*}} iter_args(%[[H:[a-z0-9_]+]] = %[[HF0]], %[[YS:[a-z0-9_]+]] = %[[YF0]])
// CHECK-NOT: arith.subi
// CHECK: tensor.extract_slice %[[XWF]][%[[T]], 0, 0] [1, 2, 4]
// CHECK: linalg.generic {{.*}} ins(%[[H]], %[[RF]] : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK: %[[HN:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: arith.maximumf %{{.*}}, %[[Z]] : f32
// CHECK: tensor.insert_slice %[[HN]] into %[[YS]][%[[T]], 0, 0] [1, 2, 4]
// CHECK: scf.yield
// The forward outputs go back into Y, whose window the reverse loop fills.
// CHECK: %[[Y1:.*]] = tensor.insert_slice %[[FWD]]#1 into %[[YE]][0, 0, 0, 0] [3, 1, 2, 4] [1, 1, 1, 1] : tensor<3x2x4xf32> into tensor<3x2x2x4xf32>
// Reverse direction.
// CHECK: %[[RRS:.*]] = tensor.extract_slice %[[R]][1, 0, 0] [1, 4, 4] [1, 1, 1]
// CHECK: %[[RR:.*]] = linalg.transpose ins(%[[RRS]]
// CHECK: %[[WRS:.*]] = tensor.extract_slice %[[W]][1, 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: %[[WR:.*]] = linalg.transpose ins(%[[WRS]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WR]] : tensor<6x3xf32>, tensor<3x4xf32>)
// CHECK: %[[XWR:.*]] = tensor.expand_shape {{.*}} output_shape [3, 2, 4]
// CHECK: %[[HR0:.*]] = tensor.extract_slice %[[H0]][1, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[YR:.*]] = tensor.extract_slice %[[Y1]][0, 1, 0, 0] [3, 1, 2, 4] [1, 1, 1, 1] : tensor<3x2x2x4xf32> to tensor<3x2x4xf32>
// CHECK: %[[YR0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[YR]] : tensor<3x2x4xf32>)
// CHECK: %[[LAST:.*]] = arith.constant 2 : index
// CHECK: %[[BWD:[a-z0-9_]+]]:2 = scf.for %[[T:[a-z0-9_]+]] = %{{.*}} iter_args(%[[H:[a-z0-9_]+]] = %[[HR0]], %[[YS:[a-z0-9_]+]] = %[[YR0]])
// CHECK-NEXT: %[[TT:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK-NEXT: tensor.extract_slice %[[XWR]][%[[TT]], 0, 0] [1, 2, 4]
// CHECK: linalg.generic {{.*}} ins(%[[H]], %[[RR]] : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK: %[[HN:.*]] = linalg.generic
// CHECK: arith.negf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.divf
// CHECK: linalg.copy ins(%[[HN]] : tensor<2x4xf32>) outs(%[[H]] : tensor<2x4xf32>)
// CHECK: tensor.insert_slice %[[HN]] into %[[YS]][%[[TT]], 0, 0] [1, 2, 4]
// CHECK: scf.yield
// Stacking: Y [3, 2, 2, 4] and Y_h [2, 2, 4].
// CHECK: %[[Y:.*]] = tensor.insert_slice %[[BWD]]#1 into %[[Y1]][0, 1, 0, 0] [3, 1, 2, 4] [1, 1, 1, 1] : tensor<3x2x4xf32> into tensor<3x2x2x4xf32>
// CHECK: %[[YH1:.*]] = tensor.insert_slice %[[FWD]]#0 into %{{.*}}[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<2x2x4xf32>
// CHECK: %[[YH:.*]] = tensor.insert_slice %[[BWD]]#0 into %[[YH1]][1, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<2x2x4xf32>
// CHECK: return %[[Y]], %[[YH]]
func.func @rnn_bidirectional(%x: tensor<3x2x3xf32>, %w: tensor<2x4x3xf32>, %r: tensor<2x4x4xf32>, %h0: tensor<2x2x4xf32>) -> (tensor<3x2x2x4xf32>, tensor<2x2x4xf32>) {
  %none = onnx.NoValue
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %h0) <{activations = ["Relu", "Sigmoid"], direction = "bidirectional", hidden_size = 4 : i64, layout = 0 : i64}> : (tensor<3x2x3xf32>, tensor<2x4x3xf32>, tensor<2x4x4xf32>, none, none, tensor<2x2x4xf32>) -> (tensor<3x2x2x4xf32>, tensor<2x2x4xf32>)
  return %y, %yh : tensor<3x2x2x4xf32>, tensor<2x2x4xf32>
}

// -----

// A reverse RNN: one loop, reading and writing step 4 - t.
// CHECK-LABEL: func.func @rnn_reverse(
// CHECK: %[[LAST:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[T:[a-z0-9_]+]] = %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[YS:[a-z0-9_]+]] = %{{.*}})
// CHECK-NEXT: %[[TT:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK-NEXT: tensor.extract_slice %{{.*}}[%[[TT]], 0, 0] [1, 2, 4] [1, 1, 1] : tensor<5x2x4xf32> to tensor<2x4xf32>
// CHECK: math.tanh
// CHECK: tensor.insert_slice %{{.*}} into %[[YS]][%[[TT]], 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK-NOT: scf.for
func.func @rnn_reverse(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<5x1x2x4xf32> {
  %none = onnx.NoValue
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %none) <{direction = "reverse", hidden_size = 4 : i64, layout = 0 : i64}> : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<5x1x2x4xf32>, none)
  return %y : tensor<5x1x2x4xf32>
}

// -----

// LSTM with peepholes: the loop carries H and C; the step's gates (i, o,
// f, c columns at 0, 4, 8, 12 of the projection and of H R^T, peepholes
// i, o, f at 0, 4, 8 read at (d1)) are one generic with two results, the
// new H and the new C:
//   i = sigmoid(xi + ri + pi*c), f = sigmoid(xf + rf + pf*c),
//   C' = f*c + i*tanh(xc + rc), o = sigmoid(xo + ro + po*C'),
//   H' = o*tanh(C').
// Both are copied into their iteration arguments; H' goes into Y.
// CHECK-LABEL: func.func @lstm_peepholes(
// CHECK-SAME: %[[P:[a-z0-9_]+]]: tensor<1x12xf32>)
// CHECK: %[[P0:.*]] = tensor.extract_slice %[[P]][0, 0] [1, 12] [1, 1] : tensor<1x12xf32> to tensor<12xf32>
// CHECK: %[[H0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[C0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[Y0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5x2x4xf32>)
// CHECK: %[[LOOP:[a-z0-9_]+]]:3 = scf.for %[[T:[a-z0-9_]+]] = %{{.*}} iter_args(%[[H:[a-z0-9_]+]] = %[[H0]], %[[C:[a-z0-9_]+]] = %[[C0]], %[[YS:[a-z0-9_]+]] = %[[Y0]]) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: %[[XT:.*]] = tensor.extract_slice %{{.*}}[%[[T]], 0, 0] [1, 2, 16] [1, 1, 1] : tensor<5x2x16xf32> to tensor<2x16xf32>
// CHECK: %[[HR:.*]] = linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<2x4xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<2x16xf32>)
// CHECK: %[[XI:.*]] = tensor.extract_slice %[[XT]][0, 0] [2, 4] [1, 1] : tensor<2x16xf32> to tensor<2x4xf32>
// CHECK: %[[XO:.*]] = tensor.extract_slice %[[XT]][0, 4] [2, 4] [1, 1]
// CHECK: %[[XF:.*]] = tensor.extract_slice %[[XT]][0, 8] [2, 4] [1, 1]
// CHECK: %[[XC:.*]] = tensor.extract_slice %[[XT]][0, 12] [2, 4] [1, 1]
// CHECK: %[[RI:.*]] = tensor.extract_slice %[[HR]][0, 0] [2, 4] [1, 1]
// CHECK: %[[RO:.*]] = tensor.extract_slice %[[HR]][0, 4] [2, 4] [1, 1]
// CHECK: %[[RF:.*]] = tensor.extract_slice %[[HR]][0, 8] [2, 4] [1, 1]
// CHECK: %[[RC:.*]] = tensor.extract_slice %[[HR]][0, 12] [2, 4] [1, 1]
// CHECK: %[[PI:.*]] = tensor.extract_slice %[[P0]][0] [4] [1] : tensor<12xf32> to tensor<4xf32>
// CHECK: %[[PO:.*]] = tensor.extract_slice %[[P0]][4] [4] [1]
// CHECK: %[[PF:.*]] = tensor.extract_slice %[[P0]][8] [4] [1]
// CHECK: %[[G:[a-z0-9_]+]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[XI]], %[[XO]], %[[XF]], %[[XC]], %[[RI]], %[[RO]], %[[RF]], %[[RC]], %[[C]], %[[PI]], %[[PO]], %[[PF]] :
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[AXI:[a-z0-9_]+]]: f32, %[[AXO:[a-z0-9_]+]]: f32, %[[AXF:[a-z0-9_]+]]: f32, %[[AXC:[a-z0-9_]+]]: f32, %[[ARI:[a-z0-9_]+]]: f32, %[[ARO:[a-z0-9_]+]]: f32, %[[ARF:[a-z0-9_]+]]: f32, %[[ARC:[a-z0-9_]+]]: f32, %[[AC:[a-z0-9_]+]]: f32, %[[API:[a-z0-9_]+]]: f32, %[[APO:[a-z0-9_]+]]: f32, %[[APF:[a-z0-9_]+]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[IS:.*]] = arith.addf %[[AXI]], %[[ARI]] : f32
// CHECK-NEXT: %[[FS:.*]] = arith.addf %[[AXF]], %[[ARF]] : f32
// CHECK-NEXT: %[[OS:.*]] = arith.addf %[[AXO]], %[[ARO]] : f32
// CHECK-NEXT: %[[PIC:.*]] = arith.mulf %[[API]], %[[AC]] : f32
// CHECK-NEXT: %[[IIN:.*]] = arith.addf %[[IS]], %[[PIC]] : f32
// CHECK-NEXT: %[[PFC:.*]] = arith.mulf %[[APF]], %[[AC]] : f32
// CHECK-NEXT: %[[FIN:.*]] = arith.addf %[[FS]], %[[PFC]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[NI:.*]] = arith.negf %[[IIN]] : f32
// CHECK-NEXT: %[[EI:.*]] = math.exp %[[NI]] : f32
// CHECK-NEXT: %[[DI:.*]] = arith.addf %[[ONE]], %[[EI]] : f32
// CHECK-NEXT: %[[I:.*]] = arith.divf %[[ONE]], %[[DI]] : f32
// CHECK: %[[NF:.*]] = arith.negf %[[FIN]] : f32
// CHECK: %[[F:.*]] = arith.divf
// CHECK-NEXT: %[[CS:.*]] = arith.addf %[[AXC]], %[[ARC]] : f32
// CHECK-NEXT: %[[CG:.*]] = math.tanh %[[CS]] : f32
// CHECK-NEXT: %[[FC:.*]] = arith.mulf %[[F]], %[[AC]] : f32
// CHECK-NEXT: %[[IG:.*]] = arith.mulf %[[I]], %[[CG]] : f32
// CHECK-NEXT: %[[CN:.*]] = arith.addf %[[FC]], %[[IG]] : f32
// CHECK-NEXT: %[[POC:.*]] = arith.mulf %[[APO]], %[[CN]] : f32
// CHECK-NEXT: %[[OIN:.*]] = arith.addf %[[OS]], %[[POC]] : f32
// CHECK: %[[NO:.*]] = arith.negf %[[OIN]] : f32
// CHECK: %[[O:.*]] = arith.divf
// CHECK-NEXT: %[[TC:.*]] = math.tanh %[[CN]] : f32
// CHECK-NEXT: %[[HN:.*]] = arith.mulf %[[O]], %[[TC]] : f32
// CHECK-NEXT: linalg.yield %[[HN]], %[[CN]] : f32, f32
// CHECK: %[[HC:.*]] = linalg.copy ins(%[[G]]#0 : tensor<2x4xf32>) outs(%[[H]] : tensor<2x4xf32>)
// CHECK: %[[CC:.*]] = linalg.copy ins(%[[G]]#1 : tensor<2x4xf32>) outs(%[[C]] : tensor<2x4xf32>)
// CHECK: %[[YN:.*]] = tensor.insert_slice %[[G]]#0 into %[[YS]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK: scf.yield %[[HC]], %[[CC]], %[[YN]] : tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>
// CHECK: tensor.insert_slice %[[LOOP]]#2 into %{{.*}}[0, 0, 0, 0] [5, 1, 2, 4]
// CHECK: tensor.insert_slice %[[LOOP]]#0 into %{{.*}}[0, 0, 0] [1, 2, 4]
// CHECK: tensor.insert_slice %[[LOOP]]#1 into %{{.*}}[0, 0, 0] [1, 2, 4]
func.func @lstm_peepholes(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %b: tensor<1x32xf32>, %p: tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %none = onnx.NoValue
  %y, %yh, %yc = "onnx.LSTM"(%x, %w, %r, %b, %none, %none, %none, %p) <{direction = "forward", hidden_size = 4 : i64, input_forget = 0 : i64, layout = 0 : i64}> : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x32xf32>, none, none, none, tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %yh, %yc : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// GRU with linear_before_reset = 0 (gates z, r, h at columns 0, 4, 8):
// inside the step a first generic computes sigmoid(xr + rr) * H, then a
// second matmul multiplies it by columns 8..11 of R^T (R_h^T), and the final
// generic reads that product for the h gate:
//   H' = (1 - z) * tanh(xh + (r*H) R_h^T) + z * H.
// CHECK-LABEL: func.func @gru_reset_before(
// CHECK: %[[R0:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [1, 12, 4] [1, 1, 1] : tensor<1x12x4xf32> to tensor<12x4xf32>
// CHECK: %[[RT:.*]] = linalg.transpose ins(%[[R0]] : tensor<12x4xf32>) outs(%{{.*}} : tensor<4x12xf32>) permutation = [1, 0]
// CHECK: scf.for %[[T:[a-z0-9_]+]] = %{{.*}} iter_args(%[[H:[a-z0-9_]+]] = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: %[[XT:.*]] = tensor.extract_slice %{{.*}}[%[[T]], 0, 0] [1, 2, 12] [1, 1, 1]
// CHECK: %[[HR:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[H]], %[[RT]] : tensor<2x4xf32>, tensor<4x12xf32>) outs(%{{.*}} : tensor<2x12xf32>)
// CHECK: %[[XR:.*]] = tensor.extract_slice %[[XT]][0, 4] [2, 4] [1, 1]
// CHECK: %[[RR:.*]] = tensor.extract_slice %[[HR]][0, 4] [2, 4] [1, 1]
// CHECK: %[[RH:.*]] = linalg.generic {{.*}} ins(%[[XR]], %[[RR]], %[[H]] : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: f32, %[[B:[a-z0-9_]+]]: f32, %[[HP:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf %[[A]], %[[B]] : f32
// CHECK: %[[RG:.*]] = arith.divf
// CHECK-NEXT: %[[RHV:.*]] = arith.mulf %[[RG]], %[[HP]] : f32
// CHECK-NEXT: linalg.yield %[[RHV]] : f32
// CHECK: %[[RHW:.*]] = tensor.extract_slice %[[RT]][0, 8] [4, 4] [1, 1] : tensor<4x12xf32> to tensor<4x4xf32>
// CHECK: %[[RM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[RH]], %[[RHW]] : tensor<2x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[XZ:.*]] = tensor.extract_slice %[[XT]][0, 0] [2, 4] [1, 1]
// CHECK: %[[XR2:.*]] = tensor.extract_slice %[[XT]][0, 4] [2, 4] [1, 1]
// CHECK: %[[XH:.*]] = tensor.extract_slice %[[XT]][0, 8] [2, 4] [1, 1]
// CHECK: %[[RZ:.*]] = tensor.extract_slice %[[HR]][0, 0] [2, 4] [1, 1]
// CHECK: %[[HN:.*]] = linalg.generic {{.*}} ins(%[[XZ]], %[[XR2]], %[[XH]], %[[RZ]], %{{.*}}, %{{.*}}, %[[H]], %[[RM]] :
// CHECK-NEXT: ^bb0(%[[AXZ:[a-z0-9_]+]]: f32, %{{.*}}: f32, %[[AXH:[a-z0-9_]+]]: f32, %[[ARZ:[a-z0-9_]+]]: f32, %{{.*}}: f32, %{{.*}}: f32, %[[AH:[a-z0-9_]+]]: f32, %[[ARM:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf %[[AXZ]], %[[ARZ]] : f32
// CHECK: %[[Z:.*]] = arith.divf
// CHECK-NEXT: %[[HIN:.*]] = arith.addf %[[AXH]], %[[ARM]] : f32
// CHECK-NEXT: %[[HC:.*]] = math.tanh %[[HIN]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[KEEP:.*]] = arith.mulf %[[Z]], %[[AH]] : f32
// CHECK-NEXT: %[[OMZ:.*]] = arith.subf %[[ONE]], %[[Z]] : f32
// CHECK-NEXT: %[[NEW:.*]] = arith.mulf %[[OMZ]], %[[HC]] : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.addf %[[NEW]], %[[KEEP]] : f32
// CHECK-NEXT: linalg.yield %[[OUT]] : f32
// CHECK: linalg.copy ins(%[[HN]] : tensor<2x4xf32>) outs(%[[H]] : tensor<2x4xf32>)
func.func @gru_reset_before(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %h0: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  %none = onnx.NoValue
  %y, %yh = "onnx.GRU"(%x, %w, %r, %none, %none, %h0) <{direction = "forward", hidden_size = 4 : i64, layout = 0 : i64, linear_before_reset = 0 : i64}> : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, none, none, tensor<1x2x4xf32>) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

// GRU with linear_before_reset = 1 and a bias: the projection's bias
// takes Wb alone for the h gate (index >= 8: Rb's block there zeroed)
// and Wb + Rb elsewhere; Rb_h
// is sliced out and read at (d1) by the gate generic, which computes
// h = tanh(xh + r * (rh + Rb_h)); there is no second matmul in the step.
// CHECK-LABEL: func.func @gru_linear_before_reset(
// CHECK: %[[WB:.*]] = tensor.extract_slice %{{.*}}[0, 0] [1, 12] [1, 1] : tensor<2x12xf32> to tensor<12xf32>
// CHECK: %[[RB:.*]] = tensor.extract_slice %{{.*}}[1, 0] [1, 12] [1, 1] : tensor<2x12xf32> to tensor<12xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[RB0:.*]] = tensor.insert_slice %[[Z]] into %[[RB]][8] [4] [1] : tensor<4xf32> into tensor<12xf32>
// CHECK: linalg.generic {{.*}} ins(%[[WB]], %[[RB0]] : tensor<12xf32>, tensor<12xf32>) outs(%{{.*}} : tensor<12xf32>)
// CHECK-NEXT: ^bb0(%[[W:[a-z0-9_]+]]: f32, %[[R:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf %[[W]], %[[R]] : f32
// CHECK: %[[RBH:.*]] = tensor.extract_slice %[[RB]][8] [4] [1] : tensor<12xf32> to tensor<4xf32>
// CHECK: scf.for
// CHECK: %[[HR:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-NOT: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: %[[RBH]] : {{.*}}, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[AXR:[a-z0-9_]+]]: f32, %[[AXH:[a-z0-9_]+]]: f32, %{{.*}}: f32, %[[ARR:[a-z0-9_]+]]: f32, %[[ARH:[a-z0-9_]+]]: f32, %{{.*}}: f32, %[[ARBH:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK: arith.addf %[[AXR]], %[[ARR]] : f32
// CHECK: %[[RG:.*]] = arith.divf
// CHECK-NEXT: %[[REC:.*]] = arith.addf %[[ARH]], %[[ARBH]] : f32
// CHECK-NEXT: %[[RREC:.*]] = arith.mulf %[[RG]], %[[REC]] : f32
// CHECK-NEXT: %[[HIN:.*]] = arith.addf %[[AXH]], %[[RREC]] : f32
// CHECK-NEXT: math.tanh %[[HIN]] : f32
// CHECK: linalg.copy
func.func @gru_linear_before_reset(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x24xf32>) -> tensor<1x2x4xf32> {
  %none = onnx.NoValue
  %y, %yh = "onnx.GRU"(%x, %w, %r, %b, %none, %none) <{direction = "forward", hidden_size = 4 : i64, layout = 0 : i64, linear_before_reset = 1 : i64}> : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>, none, none) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

// sequence_lens: after the step's gate generic, a masking generic reads
// the length per batch entry at (d0) and, where t < len (index compare),
// takes the new state, else keeps the old one; its second result, written
// to Y, is the new state or 0.
// CHECK-LABEL: func.func @rnn_sequence_lens(
// CHECK-SAME: %[[LENS:[a-z0-9_]+]]: tensor<2xi32>)
// CHECK: %[[LOOP:[a-z0-9_]+]]:2 = scf.for %[[T:[a-z0-9_]+]] = %{{.*}} iter_args(%[[H:[a-z0-9_]+]] = %{{.*}}, %[[YS:[a-z0-9_]+]] = %{{.*}})
// CHECK: %[[HN:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: math.tanh
// CHECK: %[[M:[a-z0-9_]+]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[LENS]], %[[HN]], %[[H]] : tensor<2xi32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[L:[a-z0-9_]+]]: i32, %[[NEW:[a-z0-9_]+]]: f32, %[[OLD:[a-z0-9_]+]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK-NEXT: %[[VALID:.*]] = arith.cmpi slt, %[[T]], %[[LI]] : index
// CHECK-NEXT: %[[STATE:.*]] = arith.select %[[VALID]], %[[NEW]], %[[OLD]] : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.select %[[VALID]], %[[NEW]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[STATE]], %[[OUT]] : f32, f32
// CHECK: %[[HC:.*]] = linalg.copy ins(%[[M]]#0 : tensor<2x4xf32>) outs(%[[H]] : tensor<2x4xf32>)
// CHECK: %[[YN:.*]] = tensor.insert_slice %[[M]]#1 into %[[YS]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK: scf.yield %[[HC]], %[[YN]]
func.func @rnn_sequence_lens(%x: tensor<4x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %lens: tensor<2xi32>) -> (tensor<4x1x2x4xf32>, tensor<1x2x4xf32>) {
  %none = onnx.NoValue
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %lens, %none) <{direction = "forward", hidden_size = 4 : i64, layout = 0 : i64}> : (tensor<4x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, tensor<2xi32>, none) -> (tensor<4x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %yh : tensor<4x1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// layout = 1 (batch first): X, initial_h and initial_c are transposed to
// [seq, batch, ...] before the loop, whose iteration arguments start from
// the transposed states; Y goes back with [2, 0, 1, 3] and Y_h/Y_c with
// [1, 0, 2].
// CHECK-LABEL: func.func @lstm_layout1(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x5x3xf32>, %{{.*}}: tensor<1x16x3xf32>, %{{.*}}: tensor<1x16x4xf32>, %[[H0:[a-z0-9_]+]]: tensor<2x1x4xf32>, %[[C0:[a-z0-9_]+]]: tensor<2x1x4xf32>)
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x5x3xf32>) outs(%{{.*}} : tensor<5x2x3xf32>) permutation = [1, 0, 2]
// CHECK: %[[H0T:.*]] = linalg.transpose ins(%[[H0]] : tensor<2x1x4xf32>) outs(%{{.*}} : tensor<1x2x4xf32>) permutation = [1, 0, 2]
// CHECK: %[[C0T:.*]] = linalg.transpose ins(%[[C0]] : tensor<2x1x4xf32>) outs(%{{.*}} : tensor<1x2x4xf32>) permutation = [1, 0, 2]
// CHECK: tensor.collapse_shape %[[XT]] {{\[\[}}0, 1], [2]] : tensor<5x2x3xf32> into tensor<10x3xf32>
// CHECK: %[[HS:.*]] = tensor.extract_slice %[[H0T]][0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[CS:.*]] = tensor.extract_slice %[[C0T]][0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[LOOP:[a-z0-9_]+]]:3 = scf.for %{{.*}} iter_args(%{{.*}} = %[[HS]], %{{.*}} = %[[CS]], %{{.*}} = %{{.*}}) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: %{{.*}}:2 = linalg.generic
// CHECK: scf.yield
// CHECK: %[[Y:.*]] = tensor.insert_slice %[[LOOP]]#2 into %{{.*}}[0, 0, 0, 0] [5, 1, 2, 4] [1, 1, 1, 1] : tensor<5x2x4xf32> into tensor<5x1x2x4xf32>
// CHECK: %[[YT:.*]] = linalg.transpose ins(%[[Y]] : tensor<5x1x2x4xf32>) outs(%{{.*}} : tensor<2x5x1x4xf32>) permutation = [2, 0, 1, 3]
// CHECK: %[[YH:.*]] = tensor.insert_slice %[[LOOP]]#0 into
// CHECK: %[[YHT:.*]] = linalg.transpose ins(%[[YH]] : tensor<1x2x4xf32>) outs(%{{.*}} : tensor<2x1x4xf32>) permutation = [1, 0, 2]
// CHECK: %[[YC:.*]] = tensor.insert_slice %[[LOOP]]#1 into
// CHECK: %[[YCT:.*]] = linalg.transpose ins(%[[YC]] : tensor<1x2x4xf32>) outs(%{{.*}} : tensor<2x1x4xf32>) permutation = [1, 0, 2]
// CHECK: return %[[YT]], %[[YHT]], %[[YCT]] : tensor<2x5x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>
func.func @lstm_layout1(%x: tensor<2x5x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %h0: tensor<2x1x4xf32>, %c0: tensor<2x1x4xf32>) -> (tensor<2x5x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>) {
  %none = onnx.NoValue
  %y, %yh, %yc = "onnx.LSTM"(%x, %w, %r, %none, %none, %h0, %c0, %none) <{direction = "forward", hidden_size = 4 : i64, input_forget = 0 : i64, layout = 1 : i64}> : (tensor<2x5x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, none, none, tensor<2x1x4xf32>, tensor<2x1x4xf32>, none) -> (tensor<2x5x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>)
  return %y, %yh, %yc : tensor<2x5x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>
}

// -----

// Constant weights are transposed at compile time, direction by
// direction: the projection and H R^T read W^T [3, 4] and R^T [4, 4]
// with the output's columns contiguous (map (d1, d2)); row 1 of W (the
// second hidden unit's weights) is column 1 of W^T.
// CHECK-LABEL: func.func @rnn_constant_weights(
// CHECK-DAG: %[[WT:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 3.000000e+00, 6.000000e+00, 9.000000e+00], [1.000000e+00, 4.000000e+00, 7.000000e+00, 1.000000e+01], [2.000000e+00, 5.000000e+00, 8.000000e+00, 1.100000e+01]]> : tensor<3x4xf32>
// CHECK-DAG: %[[RT:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 4.000000e-01, 8.000000e-01, 1.200000e+00], {{.*}}> : tensor<4x4xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
// CHECK-SAME: ins(%{{.*}}, %[[WT]] : tensor<10x3xf32>, tensor<3x4xf32>)
// CHECK: scf.for
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
// CHECK-SAME: ins(%{{.*}}, %[[RT]] : tensor<2x4xf32>, tensor<4x4xf32>)
func.func @rnn_constant_weights(%x: tensor<5x2x3xf32>) -> tensor<5x1x2x4xf32> {
  %none = onnx.NoValue
  %w = "onnx.Constant"() <{value = dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<1x4x3xf32>}> : () -> tensor<1x4x3xf32>
  %r = "onnx.Constant"() <{value = dense<[[[0.0, 0.1, 0.2, 0.3], [0.4, 0.5, 0.6, 0.7], [0.8, 0.9, 1.0, 1.1], [1.2, 1.3, 1.4, 1.5]]]> : tensor<1x4x4xf32>}> : () -> tensor<1x4x4xf32>
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %none) <{hidden_size = 4 : i64}> : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<5x1x2x4xf32>, none)
  return %y : tensor<5x1x2x4xf32>
}

// -----

// A splat constant weight transposed is the same splat, made at compile
// time like any other constant weight (no linalg.transpose).
// CHECK-LABEL: func.func @rnn_splat_weights(
// CHECK-NOT: linalg.transpose
// CHECK-DAG: %[[WT:.*]] = arith.constant dense<2.500000e-01> : tensor<3x4xf32>
// CHECK-DAG: %[[RT:.*]] = arith.constant dense<5.000000e-01> : tensor<4x4xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WT]] : tensor<10x3xf32>, tensor<3x4xf32>)
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[RT]] : tensor<2x4xf32>, tensor<4x4xf32>)
func.func @rnn_splat_weights(%x: tensor<5x2x3xf32>) -> tensor<5x1x2x4xf32> {
  %none = onnx.NoValue
  %w = "onnx.Constant"() <{value = dense<0.25> : tensor<1x4x3xf32>}> : () -> tensor<1x4x3xf32>
  %r = "onnx.Constant"() <{value = dense<0.5> : tensor<1x4x4xf32>}> : () -> tensor<1x4x4xf32>
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %none) <{hidden_size = 4 : i64}> : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<5x1x2x4xf32>, none)
  return %y : tensor<5x1x2x4xf32>
}
