// RUN: kiln-opt %s --kiln-vectorize-int8-matmul=kind=vnni512 --split-input-file | FileCheck %s --check-prefix=VNNI
// RUN: kiln-opt %s --kiln-vectorize-int8-matmul=kind=pmaddwd256 --split-input-file | FileCheck %s --check-prefix=WORDS
// RUN: kiln-opt %s --kiln-vectorize-int8-matmul --split-input-file | FileCheck %s --check-prefix=NONE
// kiln-vectorize-int8-matmul: the int8 matmul generic (out += ext(A) *
// extsi(B) in i32, B a constant global) as a dot-product kernel. Numerics
// are checked end to end by int8-kernels.test; here, the structure.

// uint8 A [7, 6] by B [6, 20]. vnni512: 16 lanes, groups of 4 bytes: one
// panel of 2 vectors (32 columns, the last 12 padding), 2 groups (the
// second holds k = 4, 5); one tile of 7 rows, a loop over the one full
// group, then the partial group read byte by byte.
// The original weights are read packed only: their global goes.
// VNNI-NOT: constant @w
// VNNI-LABEL: func.func @u8(
// VNNI: memref.get_global @__kiln_int8_packed_0 : memref<1x2x128xi8>
// VNNI: vector.maskedload %{{.*}} : memref<7x20xi32>, vector<16xi1>, vector<16xi32> into vector<16xi32>
// VNNI: scf.for %{{.*}} iter_args({{.*}}) -> (vector<16xi32>,
// VNNI: vector.load %{{.*}} : memref<1x2x128xi8>, vector<64xi8>
// VNNI: vector.load %{{.*}} : memref<7x6xi8>, vector<4xi8>
// VNNI: vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// VNNI: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// VNNI: memref.load %{{.*}} : memref<7x6xi8>
// VNNI: arith.shli
// VNNI: vector.maskedstore %{{.*}} : memref<7x20xi32>, vector<16xi1>, vector<16xi32>
// VNNI-NOT: linalg.generic
// VNNI: memref.global "private" constant @__kiln_int8_packed_0 : memref<1x2x128xi8>
// pmaddwd256: 8 lanes, groups of 2 words: panels of 2 vectors (16
// columns), 2 tiles (the second partial), 3 groups, no tail; the product
// added to the accumulator.
// WORDS-LABEL: func.func @u8(
// WORDS: vector.load %{{.*}} : memref<7x6xi8>, vector<2xi8>
// WORDS: arith.extui %{{.*}} : vector<2xi8> to vector<2xi16>
// WORDS: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// WORDS: arith.addi %{{.*}}, %{{.*}} : vector<8xi32>
// WORDS-NOT: linalg.generic
// WORDS: memref.global "private" constant @__kiln_int8_packed_0 : memref<2x3x32xi16>
// Without a kind: left alone.
// NONE-LABEL: func.func @u8(
// NONE: linalg.generic
memref.global "private" constant @w : memref<6x20xi8> = dense<"0xF9C23D72A1867004F7E270734BCDF6CD4787A0D1951A8F0972465A4A63C43BB192C57DEF045F1A57453350F62C8E0FD327B5EC0811BFA07677AD30A252CD8A165A54BC969741290EF8921E83A7B790E5501506CF952D2038C641406B45B40A5CF91A5F041B2D8554218A40C49E2A6E34340E7A8B9F8A3D00"> {alignment = 64 : i64}
func.func @u8(%a: memref<7x6xi8>, %out: memref<7x20xi32>) {
  %w = memref.get_global @w : memref<6x20xi8>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : memref<7x6xi8>, memref<6x20xi8>) outs(%out : memref<7x20xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// int8 A: vnni512 reads it as A + 128 (each group's bytes xor 0x80) and
// starts the accumulators from -128 x sum_k B[k, n], a packed constant;
// vpmaddwd sign-extends the words instead.
// VNNI-LABEL: func.func @s8(
// VNNI: %[[C:.*]] = memref.get_global @__kiln_int8_packed_1 : memref<32xi32>
// VNNI: vector.load %[[C]]
// VNNI: arith.xori %{{.*}}, %{{.*}} : i32
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VNNI: memref.global "private" constant @__kiln_int8_packed_1 : memref<32xi32>
// WORDS-LABEL: func.func @s8(
// WORDS-NOT: arith.xori
// WORDS: arith.extsi %{{.*}} : vector<2xi8> to vector<2xi16>
// WORDS-NOT: arith.xori
memref.global "private" constant @w : memref<6x20xi8> = dense<"0xF9C23D72A1867004F7E270734BCDF6CD4787A0D1951A8F0972465A4A63C43BB192C57DEF045F1A57453350F62C8E0FD327B5EC0811BFA07677AD30A252CD8A165A54BC969741290EF8921E83A7B790E5501506CF952D2038C641406B45B40A5CF91A5F041B2D8554218A40C49E2A6E34340E7A8B9F8A3D00"> {alignment = 64 : i64}
func.func @s8(%a: memref<7x6xi8>, %out: memref<7x20xi32>) {
  %w = memref.get_global @w : memref<6x20xi8>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : memref<7x6xi8>, memref<6x20xi8>) outs(%out : memref<7x20xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// The weights are not a constant: left alone.
// VNNI-LABEL: func.func @weights_input(
// VNNI: linalg.generic
func.func @weights_input(%a: memref<7x6xi8>, %w: memref<6x20xi8>, %out: memref<7x20xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : memref<7x6xi8>, memref<6x20xi8>) outs(%out : memref<7x20xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// An integer conv's weights-left form (X [9, 20] uint8, the weights [4, 9]
// on the left, out [4, 20]) with a zero fill before it and a float
// epilogue after it (the accumulator times a per-channel scale into a
// [4, 4, 5] output). vnni512: the weights one i32 per row and group of 4
// k ([4, 3]), a scratch buffer on the stack for the packed rows (four
// rows loaded and interleaved by shuffles; the third group's last three
// rows past K are zero), accumulators from zero (the fill goes), and the
// epilogue applied to them and stored into its output (the epilogue
// generic and the int32 stores go; the int32 output is a view of the
// workspace, which the output, an argument, cannot share).
// VNNI-LABEL: func.func @conv_epilogue(
// VNNI-NOT: linalg.fill
// VNNI: memref.get_global @__kiln_int8_packed_{{[0-9]+}} : memref<4x3xi32>
// VNNI: llvm.intr.stacksave
// VNNI: memref.alloca() {alignment = 64 : i64, kiln.scratch} : memref<3x128xi8>
// VNNI: vector.shuffle
// VNNI: vector.store %{{.*}} : memref<3x128xi8>, vector<64xi8>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VNNI: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// VNNI: arith.mulf %{{.*}} : vector<16xf32>
// VNNI: vector.maskedstore %{{.*}} : memref<4x20xf32>, vector<16xi1>, vector<16xf32>
// VNNI-NOT: vector.{{(masked)?}}store %{{.*}} : memref<4x20xi32>
// VNNI: llvm.intr.stackrestore
// VNNI-NOT: linalg.generic
// pmaddwd256: pairs of words (a [4, 5] i32 weight table, the rows widened).
// WORDS-LABEL: func.func @conv_epilogue(
// WORDS: memref.alloca() {alignment = 64 : i64, kiln.scratch} : memref<5x32xi16>
// WORDS: arith.extui %{{.*}} : vector<8xi8> to vector<8xi16>
// WORDS: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// WORDS-NOT: linalg.generic
memref.global "private" constant @cw : memref<4x9xi8> = dense<"0x82B70EEE7F1A5039BEF07EC2347F066ED08F5DC7512447E3404300026B6E545594A06568"> {alignment = 64 : i64}
func.func @conv_epilogue(%x: memref<9x20xi8>, %scale: memref<4xf32>, %y: memref<4x4x5xf32>, %ws: memref<320xi8>) {
  %w = memref.get_global @cw : memref<4x9xi8>
  %c0i = arith.constant 0 : index
  %acc = memref.view %ws[%c0i][] : memref<320xi8> to memref<4x20xi32>
  %c0 = arith.constant 0 : i32
  linalg.fill ins(%c0 : i32) outs(%acc : memref<4x20xi32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<9x20xi8>, memref<4x9xi8>) outs(%acc : memref<4x20xi32>) {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %o, %2 : i32
    linalg.yield %3 : i32
  }
  %e = memref.expand_shape %acc [[0], [1, 2]] output_shape [4, 4, 5] : memref<4x20xi32> into memref<4x4x5xi32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %scale : memref<4x4x5xi32>, memref<4xf32>) outs(%y : memref<4x4x5xf32>) {
  ^bb0(%a: i32, %s: f32, %o: f32):
    %0 = arith.sitofp %a : i32 to f32
    %1 = arith.mulf %0, %s : f32
    linalg.yield %1 : f32
  }
  return
}
