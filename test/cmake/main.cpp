// Runs the kiln-compiled libraries: the digits network (static, and shared
// under another name) on the digits test set, checking that both agree
// exactly and reach the expected accuracy; and the affine model (shared)
// on one input, checking its output against numpy's.
//
//   usage: consumer TEST_SET.bin EXPECTED_CORRECT AFFINE_CASE.bin
//
// TEST_SET.bin: uint32 magic 'KDG1', uint32 count N, N*64 float32 pixels,
// N uint8 labels (examples/digits/train.py writes it).
#include "affine.h"
#include "digits_shared.h"
#include "digits_static.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

static_assert(digits_static_OUTPUT_0_NUM_ELEMENTS == 10, "ten logits");
static_assert(digits_shared_INPUT_0_NUM_ELEMENTS == 64, "an 8x8 image");

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: consumer TEST_SET.bin EXPECTED_CORRECT AFFINE_CASE.bin\n");
    return 2;
  }
  // The affine model: y = relu(x W + b) against numpy's result.
  {
    std::ifstream c(argv[3], std::ios::binary);
    float x[4], want[3], got[3];
    if (!c.read(reinterpret_cast<char *>(x), sizeof x) ||
        !c.read(reinterpret_cast<char *>(want), sizeof want))
      return std::fprintf(stderr, "consumer: cannot read %s\n", argv[3]), 2;
    std::vector<unsigned char> ws(affine_WORKSPACE_SIZE + 64);
    void *w = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(ws.data()) + 63) & ~uintptr_t(63));
    if (affine_run_typed(x, got, w) != 0)
      return std::fprintf(stderr, "consumer: the affine model failed\n"), 2;
    for (int k = 0; k < 3; ++k)
      if (std::fabs(got[k] - want[k]) > 1e-5f)
        return std::fprintf(stderr, "consumer: affine y[%d] = %g, expected %g\n", k, got[k], want[k]), 1;
    std::printf("affine: y = [%g, %g, %g] as expected\n", got[0], got[1], got[2]);
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  uint32_t magic = 0, count = 0;
  if (bytes.size() < 8)
    return std::fprintf(stderr, "consumer: %s is too short\n", argv[1]), 2;
  std::memcpy(&magic, bytes.data(), 4);
  std::memcpy(&count, bytes.data() + 4, 4);
  if (magic != 0x4B444731u || bytes.size() != 8 + size_t(count) * (64 * 4 + 1))
    return std::fprintf(stderr, "consumer: %s is not a digits test set\n", argv[1]), 2;
  const unsigned char *labels = bytes.data() + 8 + size_t(count) * 64 * 4;

  // One workspace each, aligned as the headers say.
  std::vector<unsigned char> ws1(digits_static_WORKSPACE_SIZE + 64), ws2(digits_shared_WORKSPACE_SIZE + 64);
  auto align = [](std::vector<unsigned char> &v, size_t a) {
    return reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(v.data()) + a - 1) & ~(uintptr_t(a) - 1));
  };
  void *w1 = align(ws1, digits_static_WORKSPACE_ALIGNMENT);
  void *w2 = align(ws2, digits_shared_WORKSPACE_ALIGNMENT);

  int correct = 0;
  for (uint32_t i = 0; i < count; ++i) {
    float image[64], a[10], b[10];
    std::memcpy(image, bytes.data() + 8 + size_t(i) * 64 * 4, sizeof image);
    const void *ins[] = {image};
    void *outA[] = {a}, *outB[] = {b};
    if (digits_static_run(ins, outA, w1) != 0 || digits_shared_run(ins, outB, w2) != 0)
      return std::fprintf(stderr, "consumer: a run failed on sample %u\n", i), 2;
    if (std::memcmp(a, b, sizeof a) != 0)
      return std::fprintf(stderr, "consumer: the two libraries disagree on sample %u\n", i), 1;
    int best = 0;
    for (int k = 1; k < 10; ++k)
      if (a[k] > a[best])
        best = k;
    correct += best == labels[i];
  }
  std::printf("static and shared agree on %u samples; accuracy %d/%u\n", count, correct, count);
  return correct == std::atoi(argv[2]) ? 0 : 1;
}
