// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// TfIdfVectorizer (Text.cpp) with pool_int64s. Everything about the pool is
// known at compile time, so it becomes constant tables:
//   - tokens [grams, width]: each n-gram's tokens, padded with 0 to the
//     longest counted n-gram;
//   - sizes [grams]: each n-gram's n, or 0 when n is outside
//     [min_gram_length, max_gram_length] (never counted);
//   - columns [grams]: ngram_indexes; weights [columns] (1.0 without the
//     attribute).
// Then three generics:
//   - counts [B, grams] over loops (b, p, skip, start), the last two
//     reductions whose ranges come from a tensor.empty [skips, C] operand:
//     a hit needs sizes[p] > 0, not a unigram at skip > 0, and for every
//     k < n: start + (skip + 1) * k inside the row (the read itself is
//     clamped with minui) and X[b, that] == tokens[p, k];
//   - freq [B, columns] over (b, c, p), p a reduction: the counts of the
//     n-grams whose column is c;
//   - the weighting, an all-parallel generic with the weights at (d1):
//     TF is the count, IDF the weight where the count is > 0 (else 0),
//     TFIDF the count times the weight.
// A 1-D X is expanded to [1, C] and the result collapsed back.
// What cannot be lowered is tested in unsupported.mlir.

// TF over 2 rows of 6 int64 tokens; unigrams 5 and 7 and the bigram
// (5, 7), max_skip_count 1 (skips 0 and 1). The counting body is checked
// in full: step = skip + 1; ok = sizes[p] > 0 and not (n == 1 and skip !=
// 0); for k = 0 and k = 1 the position start + step * k, its bound (< 6),
// the clamped read (minui 5), the compare with tokens[p, k], and
// "k >= n or (in row and equal)" folded into ok; the i1 is widened and
// added to the count.
// CHECK-LABEL: func.func @tf(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x6xi64>) -> tensor<2x3xf32>
// CHECK: %[[TOK:.*]] = arith.constant dense<{{\[\[}}5, 0], [7, 0], [5, 7]]> : tensor<3x2xi64>
// CHECK: %[[SIZES:.*]] = arith.constant dense<[1, 1, 2]> : tensor<3xi64>
// CHECK: %[[Z:.*]] = arith.constant 0 : i64
// CHECK: %[[CE:.*]] = tensor.empty() : tensor<2x3xi64>
// CHECK: %[[C0:.*]] = linalg.fill ins(%[[Z]] : i64) outs(%[[CE]] : tensor<2x3xi64>)
// CHECK: %[[SHAPE:.*]] = tensor.empty() : tensor<2x6xi64>
// CHECK: %[[COUNTS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[SIZES]], %[[SHAPE]] : tensor<3xi64>, tensor<2x6xi64>) outs(%[[C0]] : tensor<2x3xi64>)
// CHECK-NEXT: ^bb0(%[[N:[a-z0-9_]+]]: i64, %{{.*}}: i64, %[[ACC:[a-z0-9_]+]]: i64):
// CHECK-NEXT: %[[ROW:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[P:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[S:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[START:.*]] = linalg.index 3 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.addi %[[S]], %[[ONE]] : index
// CHECK-NEXT: %[[Z64:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[COUNTED:.*]] = arith.cmpi sgt, %[[N]], %[[Z64]] : i64
// CHECK-NEXT: %[[ONE64:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[UNI:.*]] = arith.cmpi eq, %[[N]], %[[ONE64]] : i64
// CHECK-NEXT: %[[ZI:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[SKIPPED:.*]] = arith.cmpi ne, %[[S]], %[[ZI]] : index
// CHECK-NEXT: %[[UNISKIP:.*]] = arith.andi %[[UNI]], %[[SKIPPED]] : i1
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[NOTUNISKIP:.*]] = arith.xori %[[UNISKIP]], %[[TRUE]] : i1
// CHECK-NEXT: %[[OK0:.*]] = arith.andi %[[COUNTED]], %[[NOTUNISKIP]] : i1
// Token k = 0.
// CHECK-NEXT: %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[OFF0:.*]] = arith.muli %[[STEP]], %[[K0]] : index
// CHECK-NEXT: %[[POS0:.*]] = arith.addi %[[START]], %[[OFF0]] : index
// CHECK-NEXT: %[[LEN:.*]] = arith.constant 6 : index
// CHECK-NEXT: %[[IN0:.*]] = arith.cmpi ult, %[[POS0]], %[[LEN]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 5 : index
// CHECK-NEXT: %[[SAFE0:.*]] = arith.minui %[[POS0]], %[[LAST]] : index
// CHECK-NEXT: %[[T0:.*]] = tensor.extract %[[X]][%[[ROW]], %[[SAFE0]]] : tensor<2x6xi64>
// CHECK-NEXT: %[[KI0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[W0:.*]] = tensor.extract %[[TOK]][%[[P]], %[[KI0]]] : tensor<3x2xi64>
// CHECK-NEXT: %[[SAME0:.*]] = arith.cmpi eq, %[[T0]], %[[W0]] : i64
// CHECK-NEXT: %[[K064:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[USED0:.*]] = arith.cmpi slt, %[[K064]], %[[N]] : i64
// CHECK-NEXT: %[[GOOD0:.*]] = arith.andi %[[IN0]], %[[SAME0]] : i1
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[UNUSED0:.*]] = arith.xori %[[USED0]], %[[TRUE]] : i1
// CHECK-NEXT: %[[PASS0:.*]] = arith.ori %[[UNUSED0]], %[[GOOD0]] : i1
// CHECK-NEXT: %[[OK1:.*]] = arith.andi %[[OK0]], %[[PASS0]] : i1
// Token k = 1.
// CHECK-NEXT: %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[OFF1:.*]] = arith.muli %[[STEP]], %[[K1]] : index
// CHECK-NEXT: %[[POS1:.*]] = arith.addi %[[START]], %[[OFF1]] : index
// CHECK-NEXT: %[[LEN:.*]] = arith.constant 6 : index
// CHECK-NEXT: %[[IN1:.*]] = arith.cmpi ult, %[[POS1]], %[[LEN]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 5 : index
// CHECK-NEXT: %[[SAFE1:.*]] = arith.minui %[[POS1]], %[[LAST]] : index
// CHECK-NEXT: %[[T1:.*]] = tensor.extract %[[X]][%[[ROW]], %[[SAFE1]]] : tensor<2x6xi64>
// CHECK-NEXT: %[[KI1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[W1:.*]] = tensor.extract %[[TOK]][%[[P]], %[[KI1]]] : tensor<3x2xi64>
// CHECK-NEXT: %[[SAME1:.*]] = arith.cmpi eq, %[[T1]], %[[W1]] : i64
// CHECK-NEXT: %[[K164:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[USED1:.*]] = arith.cmpi slt, %[[K164]], %[[N]] : i64
// CHECK-NEXT: %[[GOOD1:.*]] = arith.andi %[[IN1]], %[[SAME1]] : i1
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[UNUSED1:.*]] = arith.xori %[[USED1]], %[[TRUE]] : i1
// CHECK-NEXT: %[[PASS1:.*]] = arith.ori %[[UNUSED1]], %[[GOOD1]] : i1
// CHECK-NEXT: %[[OK2:.*]] = arith.andi %[[OK1]], %[[PASS1]] : i1
// CHECK-NEXT: %[[INC:.*]] = arith.extui %[[OK2]] : i1 to i64
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[ACC]], %[[INC]] : i64
// CHECK-NEXT: linalg.yield %[[SUM]] : i64
// CHECK-NEXT: } -> tensor<2x3xi64>
// The per-column sum: column table, then (b, c, p) with p reduced.
// CHECK-NEXT: %[[COLS:.*]] = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK: %[[F0:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<2x3xi64>)
// CHECK-NEXT: %[[FREQ:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[COUNTS]], %[[COLS]] : tensor<2x3xi64>, tensor<3xi64>) outs(%[[F0]] : tensor<2x3xi64>)
// CHECK-NEXT: ^bb0(%[[CNT:[a-z0-9_]+]]: i64, %[[COL:[a-z0-9_]+]]: i64, %[[FACC:[a-z0-9_]+]]: i64):
// CHECK-NEXT: %[[CX:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[C:.*]] = arith.index_cast %[[CX]] : index to i64
// CHECK-NEXT: %[[MINE:.*]] = arith.cmpi eq, %[[COL]], %[[C]] : i64
// CHECK-NEXT: %[[FZ:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[ADD:.*]] = arith.select %[[MINE]], %[[CNT]], %[[FZ]] : i64
// CHECK-NEXT: %[[FS:.*]] = arith.addi %[[FACC]], %[[ADD]] : i64
// CHECK-NEXT: linalg.yield %[[FS]] : i64
// CHECK-NEXT: } -> tensor<2x3xi64>
// TF: the count as f32; the default weights are all 1.
// CHECK-NEXT: %[[WTS:.*]] = arith.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK-NEXT: %[[OE:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[FREQ]], %[[WTS]] : tensor<2x3xi64>, tensor<3xf32>) outs(%[[OE]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[F:[a-z0-9_]+]]: i64, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[FF:.*]] = arith.sitofp %[[F]] : i64 to f32
// CHECK-NEXT: linalg.yield %[[FF]] : f32
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: return %[[Y]] : tensor<2x3xf32>
func.func @tf(%x: tensor<2x6xi64>) -> tensor<2x3xf32> {
  %0 = "onnx.TfIdfVectorizer"(%x) <{max_gram_length = 2 : i64, max_skip_count = 1 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 0, 1, 2>, pool_int64s = array<i64: 5, 7, 5, 7>}> : (tensor<2x6xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// IDF over one int32 row of 5: X is expanded to [1, 5] and each token
// sign-extended to i64 before the compare. min_gram_length = 2, so the
// unigrams 2, 3, 5 get size 0 and only (4, 5) and (6, 7) count; no skips
// (a [1, 5] range operand). ngram_indexes [3, 2, 0, 1, 1] sends both
// bigrams to column 1 (summed); the body yields the column's weight where
// its count is > 0, else 0; the result is collapsed back to [4].
// CHECK-LABEL: func.func @idf(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<5xi32>) -> tensor<4xf32>
// CHECK: %[[X2:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [1, 5] : tensor<5xi32> into tensor<1x5xi32>
// CHECK: %[[TOK:.*]] = arith.constant dense<{{\[\[}}2, 0], [3, 0], [5, 0], [4, 5], [6, 7]]> : tensor<5x2xi64>
// CHECK: %[[SIZES:.*]] = arith.constant dense<[0, 0, 0, 2, 2]> : tensor<5xi64>
// CHECK: linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<1x5xi64>)
// CHECK-NEXT: %[[SHAPE:.*]] = tensor.empty() : tensor<1x5xi64>
// CHECK: %[[COUNTS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[SIZES]], %[[SHAPE]] : tensor<5xi64>, tensor<1x5xi64>) outs(%{{.*}} : tensor<1x5xi64>)
// CHECK: %[[LEN:.*]] = arith.constant 5 : index
// CHECK-NEXT: arith.cmpi ult, %{{.*}}, %[[LEN]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[SAFE:.*]] = arith.minui %{{.*}}, %[[LAST]] : index
// CHECK-NEXT: %[[T:.*]] = tensor.extract %[[X2]][%{{.*}}, %[[SAFE]]] : tensor<1x5xi32>
// CHECK-NEXT: %[[T64:.*]] = arith.extsi %[[T]] : i32 to i64
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: %[[W:.*]] = tensor.extract %[[TOK]][%{{.*}}, %{{.*}}] : tensor<5x2xi64>
// CHECK-NEXT: arith.cmpi eq, %[[T64]], %[[W]] : i64
// CHECK: } -> tensor<1x5xi64>
// CHECK-NEXT: %[[COLS:.*]] = arith.constant dense<[3, 2, 0, 1, 1]> : tensor<5xi64>
// CHECK: %[[FREQ:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[COUNTS]], %[[COLS]] : tensor<1x5xi64>, tensor<5xi64>) outs(%{{.*}} : tensor<1x4xi64>)
// CHECK: } -> tensor<1x4xi64>
// CHECK-NEXT: %[[WTS:.*]] = arith.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK-NEXT: tensor.empty() : tensor<1x4xf32>
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[FREQ]], %[[WTS]] : tensor<1x4xi64>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[F:[a-z0-9_]+]]: i64, %[[WT:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.sitofp %[[F]] : i64 to f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[SEEN:.*]] = arith.cmpi sgt, %[[F]], %[[Z]] : i64
// CHECK-NEXT: %[[FZ:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[SEEN]], %[[WT]], %[[FZ]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<1x4xf32>
// CHECK-NEXT: %[[Y1:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK-NEXT: return %[[Y1]] : tensor<4xf32>
func.func @idf(%x: tensor<5xi32>) -> tensor<4xf32> {
  %0 = "onnx.TfIdfVectorizer"(%x) <{max_gram_length = 2 : i64, max_skip_count = 0 : i64, min_gram_length = 2 : i64, mode = "IDF", ngram_counts = array<i64: 0, 3>, ngram_indexes = array<i64: 3, 2, 0, 1, 1>, pool_int64s = array<i64: 2, 3, 5, 4, 5, 6, 7>, weights = array<f32: 5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00>}> : (tensor<5xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// TFIDF, unigrams only: the token table is one column wide ([2, 1]), one
// token compare per start; the body multiplies the count by the weight.
// CHECK-LABEL: func.func @tfidf(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x4xi64>) -> tensor<1x2xf32>
// CHECK: %[[TOK:.*]] = arith.constant dense<{{\[\[}}9], [8]]> : tensor<2x1xi64>
// CHECK: %[[SIZES:.*]] = arith.constant dense<1> : tensor<2xi64>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[SIZES]], %{{.*}} : tensor<2xi64>, tensor<1x4xi64>)
// CHECK-COUNT-1: tensor.extract %[[TOK]]
// CHECK-NOT: tensor.extract %[[TOK]]
// CHECK: } -> tensor<1x2xi64>
// CHECK: arith.constant dense<[1, 0]> : tensor<2xi64>
// CHECK: %[[WTS:.*]] = arith.constant dense<[2.500000e-01, 4.000000e+00]> : tensor<2xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WTS]] : tensor<1x2xi64>, tensor<2xf32>)
// CHECK-NEXT: ^bb0(%[[F:[a-z0-9_]+]]: i64, %[[WT:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[FF:.*]] = arith.sitofp %[[F]] : i64 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[FF]], %[[WT]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @tfidf(%x: tensor<1x4xi64>) -> tensor<1x2xf32> {
  %0 = "onnx.TfIdfVectorizer"(%x) <{max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TFIDF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 1, 0>, pool_int64s = array<i64: 9, 8>, weights = array<f32: 2.500000e-01, 4.000000e+00>}> : (tensor<1x4xi64>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}
