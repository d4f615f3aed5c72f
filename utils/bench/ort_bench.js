// Times one ONNX model under ONNX Runtime (onnxruntime-node), for
// utils/bench/bench.py.
//
//   node ort_bench.js MODEL.onnx INPUTS.json THREADS ITERATIONS WARMUP [OUT_DIR]
//
// INPUTS.json: [{"name", "dtype" ("float32" | "int64" | "int32" | "uint8" | "int8"), "dims",
// "file" (raw little-endian bytes)}]. The session uses graph optimisation
// level 'all', intraOpNumThreads = THREADS, interOpNumThreads = 1, sequential
// execution. Prints one JSON line: {"times_ms": [...], "median_ms": m}. With
// OUT_DIR, writes each output's raw bytes to OUT_DIR/<i>.bin (for the
// harness's parity check).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

const TYPED = {float32: Float32Array, int64: BigInt64Array, int32: Int32Array,
               uint8: Uint8Array, int8: Int8Array};

async function main() {
  const [model, inputsJson, threads, iterations, warmup, outDir] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const feeds = {};
  for (const spec of JSON.parse(fs.readFileSync(inputsJson, 'utf8'))) {
    const bytes = fs.readFileSync(spec.file);
    const Typed = TYPED[spec.dtype];
    if (!Typed) throw new Error('unsupported input dtype ' + spec.dtype);
    const data = new Typed(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    feeds[spec.name] = new ort.Tensor(spec.dtype, data, spec.dims);
  }
  let results;
  for (let i = 0; i < Number(warmup); ++i)
    results = await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(iterations); ++i) {
    const start = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  if (outDir) {
    session.outputNames.forEach((name, i) => {
      const t = results[name];
      fs.writeFileSync(path.join(outDir, i + '.bin'),
                       Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    });
  }
  const sorted = [...times].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  console.log(JSON.stringify({times_ms: times, median_ms: median}));
}

main().catch((e) => {
  console.error('ort_bench.js: ' + (e && e.message ? e.message : e));
  process.exit(2);
});
