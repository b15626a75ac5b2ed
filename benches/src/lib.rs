//! Throughput benchmarks (filled by the benchmark issue).
