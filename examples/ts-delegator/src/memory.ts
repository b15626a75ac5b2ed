// Memory settings of the runtime, applied before anything else runs (main.ts imports this module
// first). A large artifact streams through the SDK one event at a time and is written to disk as
// it arrives; what is left to bound is the garbage those events leave and the runtime's own work:
//
// - `--semi-space-growth-factor=1`: V8's young generation stays at its starting size instead of
//   doubling while events pour in, so each event's strings and buffers are collected within about
//   a MiB of new allocation rather than letting the heap grow by tens of MiB first.
// - `--liftoff-only`: Node's `fetch` (undici) parses HTTP with llhttp compiled to WebAssembly;
//   once a large body makes it hot, V8 recompiles it with its optimising compiler in the
//   background, which takes about 30 MiB for a moment. The baseline compiler parses fast enough.
//
// Both flags are read when they take effect (the young generation's next growth, the first
// WebAssembly compilation), so setting them at start-up works; they change speed, never results.

import * as v8 from "node:v8";

v8.setFlagsFromString("--semi-space-growth-factor=1");
v8.setFlagsFromString("--liftoff-only");
