//===- Measure.cpp - dlc bench and dlc profile ----------------------------===//
//
// Both compile the model for one device (or load a .dlcm), bind its inputs
// once (seeded random unless given) and run it many times through the
// runtime's C API, as an embedder does. bench reports the latency
// distribution and throughput, like trtexec; profile times every kernel
// launch (the session's host timestamps) and writes a Chrome trace.
//
// What a kernel does (its FLOPs and bytes, the ops fused in it) comes from
// the planned IR, so a .dlcm is measured without those columns.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"

#include "driver/CompiledModel.h"
#include "driver/DriverSupport.h"
#include "driver/Inputs.h"
#include "passes/analysis/CostModel.h"
#include "passes/analysis/Liveness.h"
#include "runtime/base/HostCores.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

using namespace mlir;

namespace dlc {
namespace {

using Clock = std::chrono::steady_clock;

/// A model compiled, bound to its inputs and warmed up.
struct Measured {
  CompiledModel compiled;
  std::vector<HostTensor> inputs, outputs;
  /// The first input's leading dimension: the samples of one run.
  int64_t batch = 1;
  double compileSeconds = 0;
};

ExitCode prepareModel(const CommonOptions &options, const MeasureOptions &measure,
                      MLIRContext &context, llvm::SourceMgr &sourceMgr, Measured &out) {
  std::map<std::string, oracle::Tensor> given;
  if (ExitCode code = readInputFiles(context, measure.inputs, given))
    return code;
  CompileForDevice compile;
  compile.device = measure.device;
  compile.params = measure.params;
  auto started = Clock::now();
  if (ExitCode code = compileForDevice(options, compile, given, context, sourceMgr, out.compiled))
    return code;
  out.compileSeconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::vector<oracle::Tensor> inputs;
  if (ExitCode code = assembleInputs(context, out.compiled.inputs, given, measure.inputs,
                                     /*randomByDefault=*/true, out.compiled.what(), inputs))
    return code;
  for (const oracle::Tensor &t : inputs)
    out.inputs.push_back(t.toHost());
  if (!out.compiled.inputs.empty() && !out.compiled.inputs[0].shape.empty())
    out.batch = std::max<int64_t>(1, out.compiled.inputs[0].shape[0]);
  std::string error;
  if (ExitCode code = out.compiled.module.prepare(measure.device, out.inputs, out.outputs, error))
    return fail(context, code, error);
  for (int64_t i = 0; i < measure.warmup; ++i)
    if (ExitCode code = out.compiled.module.runPrepared(error))
      return fail(context, code, error);
  return kExitSuccess;
}

/// Runs `measure.iterations` times, or for `measure.duration` seconds (at
/// least 10 runs); each run's start and seconds.
ExitCode timeRuns(MLIRContext &context, const MeasureOptions &measure, const LoadedModule &module,
                  std::vector<std::pair<Clock::time_point, double>> &runs) {
  std::string error;
  auto began = Clock::now();
  for (int64_t i = 0;; ++i) {
    if (measure.iterations > 0 ? i >= measure.iterations
                               : i >= 10 && std::chrono::duration<double>(Clock::now() - began)
                                                    .count() >= measure.duration)
      break;
    auto started = Clock::now();
    if (ExitCode code = module.runPrepared(error))
      return fail(context, code, error);
    runs.push_back({started, std::chrono::duration<double>(Clock::now() - started).count()});
  }
  return kExitSuccess;
}

double percentile(const std::vector<double> &sorted, double p) {
  if (sorted.empty())
    return 0;
  double rank = p / 100.0 * double(sorted.size() - 1);
  size_t below = static_cast<size_t>(std::floor(rank));
  size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (rank - double(below));
}

/// The device's peaks, for the achieved shares: FLOP/s (f32) and memory
/// bandwidth. A CPU spec's rates are one thread's: the peak is that times
/// the threads the session runs.
struct Peaks {
  std::string name;
  double flops = 0, bandwidth = 0;
  int threads = 0;
};

/// Whether `device`'s kernels run on this host (cpu, cuda-emu).
bool onHost(const std::string &device) { return !isCudaDevice(device) || device == "cuda-emu"; }

/// --peak-spec, else the device spec of what the kernels run on.
std::string peakSpecOf(const MeasureOptions &measure) {
  return !measure.peakSpec.empty() ? measure.peakSpec : onHost(measure.device) ? "cpu" : "h100";
}

bool loadPeaks(const MeasureOptions &measure, Peaks &peaks, std::string &error) {
  bool host = onHost(measure.device);
  DeviceSpec device;
  if (!loadDeviceSpec(peakSpecOf(measure), device, error))
    return false;
  peaks.name = device.name;
  auto f32 = device.peakFlops.find("f32");
  peaks.flops = f32 == device.peakFlops.end() ? 0 : f32->second;
  peaks.bandwidth =
      device.hostMemoryBandwidth > 0 ? device.hostMemoryBandwidth : device.memoryBandwidth;
  if (host && device.cores > 0) {
    peaks.threads = rt::defaultDeviceThreads();
    peaks.flops *= std::min<int64_t>(peaks.threads, device.cores);
  }
  return true;
}

/// The FLOPs and bytes of one run: every kernel's, from the planned IR
/// (zero for a .dlcm).
KernelWork workOf(const CompiledModel &compiled) {
  KernelWork total;
  if (!compiled.planned)
    return total;
  for (Operation *op : kernelsOf(compiled.planned)) {
    KernelWork w = kernelWork(op);
    total.flops += w.flops;
    total.bytes += w.bytes;
  }
  return total;
}

double peakRssBytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) * 1024.0; // kilobytes on Linux
}

std::string ms(double seconds) { return llvm::formatv("{0:F3}", seconds * 1e3).str(); }
std::string mib(double bytes) { return llvm::formatv("{0:F1}", bytes / (1 << 20)).str(); }

} // namespace

ExitCode runBench(const CommonOptions &options, const MeasureOptions &measure,
                  MLIRContext &context, llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os) {
  Measured m;
  if (ExitCode code = prepareModel(options, measure, context, sourceMgr, m))
    return code;
  LoadedModule &module = m.compiled.module;
  std::vector<std::pair<Clock::time_point, double>> runs;
  if (ExitCode code = timeRuns(context, measure, module, runs))
    return code;
  std::vector<double> latency;
  for (auto &[start, seconds] : runs)
    latency.push_back(seconds);
  std::sort(latency.begin(), latency.end());
  double mean = std::accumulate(latency.begin(), latency.end(), 0.0) / double(latency.size());
  double median = percentile(latency, 50);

  // The kernels' share of a run: the same runs again with every launch
  // timed (host devices; the clock reads are not in the latencies above).
  double kernelSeconds = -1;
  size_t kernelsPerRun = 0;
  std::string timingError;
  if (module.enableKernelTiming(&timingError)) {
    MeasureOptions timed = measure;
    timed.iterations = std::clamp<int64_t>(int64_t(latency.size()), 10, 200);
    std::vector<std::pair<Clock::time_point, double>> timedRuns;
    if (ExitCode code = timeRuns(context, timed, module, timedRuns))
      return code;
    double total = 0;
    uint64_t calls = 0;
    for (const LoadedModule::KernelTime &t : module.kernelTimes()) {
      total += t.seconds;
      calls += t.calls;
    }
    kernelSeconds = total / double(timedRuns.size());
    kernelsPerRun = calls / timedRuns.size();
  }

  KernelWork work = workOf(m.compiled);
  Peaks peaks;
  std::string peakError;
  bool havePeaks = loadPeaks(measure, peaks, peakError);
  double gflops = work.flops / median / 1e9, gbytes = work.bytes / median / 1e9;
  double flopShare = havePeaks && peaks.flops > 0 ? work.flops / median / peaks.flops : 0;
  double byteShare = havePeaks && peaks.bandwidth > 0 ? work.bytes / median / peaks.bandwidth : 0;
  double hostSeconds = kernelSeconds >= 0 ? std::max(0.0, median - kernelSeconds) : -1;
  LoadedModule::Memory memory = module.memory();

  // What bounds it: the host (launches, copies) when it takes most of a
  // run, else whichever roofline the kernels are closer to.
  std::string bound;
  if (hostSeconds >= 0 && hostSeconds > 0.5 * median)
    bound = llvm::formatv("launch and host overhead: {0:F0}% of a run is outside the {1} "
                          "kernels (fewer, larger kernels or batching would help)",
                          100 * hostSeconds / median, kernelsPerRun)
                .str();
  else if (work.flops <= 0 || !havePeaks)
    bound = "unknown (no FLOP and byte counts for a compiled module: bench its source)";
  else if (flopShare >= byteShare)
    bound = llvm::formatv("compute: {0:F0}% of the peak FLOP/s, {1:F0}% of the memory "
                          "bandwidth",
                          100 * flopShare, 100 * byteShare)
                .str();
  else
    bound = llvm::formatv("memory bandwidth: {0:F0}% of it, {1:F0}% of the peak FLOP/s",
                          100 * byteShare, 100 * flopShare)
                .str();

  if (measure.json) {
    llvm::json::Object result{
        {"model", options.modelPath},
        {"device", measure.device},
        {"threads", int64_t(peaks.threads)},
        {"compile_seconds", m.compileSeconds},
        {"warmup", measure.warmup},
        {"iterations", int64_t(latency.size())},
        {"latency_ms",
         llvm::json::Object{{"min", latency.front() * 1e3},
                            {"mean", mean * 1e3},
                            {"median", median * 1e3},
                            {"p90", percentile(latency, 90) * 1e3},
                            {"p99", percentile(latency, 99) * 1e3},
                            {"max", latency.back() * 1e3}}},
        {"inferences_per_second", 1.0 / mean},
        {"batch", m.batch},
        {"samples_per_second", double(m.batch) / mean},
        {"flops_per_run", work.flops},
        {"bytes_per_run", work.bytes},
        {"gflops_per_second", gflops},
        {"gbytes_per_second", gbytes},
        {"peak_gflops_per_second", peaks.flops / 1e9},
        {"peak_gbytes_per_second", peaks.bandwidth / 1e9},
        {"kernel_ms_per_run", kernelSeconds >= 0 ? llvm::json::Value(kernelSeconds * 1e3)
                                                 : llvm::json::Value(nullptr)},
        {"host_overhead_ms_per_run", hostSeconds >= 0 ? llvm::json::Value(hostSeconds * 1e3)
                                                      : llvm::json::Value(nullptr)},
        {"kernels_per_run", int64_t(kernelsPerRun)},
        {"host_us_per_kernel", hostSeconds >= 0 && kernelsPerRun
                                   ? llvm::json::Value(hostSeconds / double(kernelsPerRun) * 1e6)
                                   : llvm::json::Value(nullptr)},
        {"arena_bytes", int64_t(memory.arena)},
        {"weight_bytes", int64_t(memory.weights)},
        {"peak_rss_bytes", peakRssBytes()},
        {"bound", bound}};
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(result))) << "\n";
    return kExitSuccess;
  }

  os << "dlc bench " << options.modelPath << " on " << measure.device;
  if (peaks.threads)
    os << " (" << peaks.threads << " threads)";
  os << "\ncompiled in " << llvm::formatv("{0:F2}", m.compileSeconds) << " s; " << measure.warmup
     << " warm-up runs, " << latency.size() << " measured\n\n";
  os << "latency (ms)   min " << ms(latency.front()) << "  mean " << ms(mean) << "  median "
     << ms(median) << "  p90 " << ms(percentile(latency, 90)) << "  p99 "
     << ms(percentile(latency, 99)) << "  max " << ms(latency.back()) << "\n";
  os << "throughput     " << llvm::formatv("{0:F1}", 1.0 / mean) << " inferences/s, "
     << llvm::formatv("{0:F1}", double(m.batch) / mean) << " samples/s (batch " << m.batch
     << ": the first input's leading dimension)\n";
  if (work.flops > 0) {
    os << "achieved       " << llvm::formatv("{0:F2}", gflops) << " GFLOP/s, "
       << llvm::formatv("{0:F2}", gbytes) << " GB/s (" << llvm::formatv("{0:F1}", work.flops / 1e6)
       << " MFLOP and " << mib(work.bytes) << " MiB of kernel operands per run)\n";
  }
  if (havePeaks)
    os << "device peak    " << llvm::formatv("{0:F1}", peaks.flops / 1e9) << " GFLOP/s f32"
       << (peaks.threads ? " (" + std::to_string(peaks.threads) + " threads at one's rate)" : "")
       << ", " << llvm::formatv("{0:F1}", peaks.bandwidth / 1e9) << " GB/s; spec: " << peaks.name
       << "\n";
  else
    os << "device peak    unknown (" << peakError << ")\n";
  if (kernelSeconds >= 0)
    os << "kernels        " << ms(kernelSeconds) << " ms per run in " << kernelsPerRun
       << " kernels; host overhead " << ms(hostSeconds) << " ms ("
       << llvm::formatv("{0:F0}", 100 * hostSeconds / median) << "% of the median, "
       << llvm::formatv("{0:F1}", kernelsPerRun ? hostSeconds / double(kernelsPerRun) * 1e6 : 0.0)
       << " us a kernel)\n";
  else
    os << "kernels        not timed on this device (" << timingError << ")\n";
  os << "memory         arena " << mib(memory.arena) << " MiB, weights " << mib(memory.weights)
     << " MiB, state " << mib(memory.state) << " MiB; process peak RSS " << mib(peakRssBytes())
     << " MiB\n";
  os << "bound by       " << bound << "\n";
  return kExitSuccess;
}

ExitCode runProfile(const CommonOptions &options, const MeasureOptions &measure,
                    MLIRContext &context, llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os) {
  Measured m;
  if (ExitCode code = prepareModel(options, measure, context, sourceMgr, m))
    return code;
  LoadedModule &module = m.compiled.module;
  std::string error;
  if (!module.enableKernelTiming(&error))
    return fail(context, kExitBadInput,
                "dlc profile times kernels on host devices (cpu, cuda-emu) only: " + error);
  std::vector<std::pair<Clock::time_point, double>> runs;
  if (ExitCode code = timeRuns(context, measure, module, runs))
    return code;
  double runSeconds = 0;
  for (auto &[start, seconds] : runs)
    runSeconds += seconds;

  DeviceSpec device;
  LinkSpec link;
  bool predict = loadDeviceSpec(peakSpecOf(measure), device, error) &&
                 loadLinkSpec(device.defaultLink.empty() ? "pcie4" : device.defaultLink, link,
                              error);
  if (predict)
    device.shareAmong(1); // one process, on the runtime's default threads

  struct Row {
    std::string name, ops;
    uint64_t calls = 0;
    double seconds = 0, flops = 0, bytes = 0, predicted = -1;
  };
  std::vector<Row> rows;
  double kernelTotal = 0;
  SmallVector<Operation *> kernels;
  if (m.compiled.planned)
    kernels = kernelsOf(m.compiled.planned);
  for (const LoadedModule::KernelTime &t : module.kernelTimes()) {
    Row row{t.name, "", t.calls, t.seconds};
    if (Operation *op = kernelNamed(t.name, kernels)) {
      row.ops = fusedOpNames(op);
      KernelWork w = kernelWork(op);
      row.flops = w.flops;
      row.bytes = w.bytes;
      if (predict)
        row.predicted = kernelCost(op, device, link).seconds;
    }
    kernelTotal += t.seconds;
    rows.push_back(std::move(row));
  }
  std::vector<Row> sorted = rows;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Row &a, const Row &b) { return a.seconds > b.seconds; });
  double perRun = runSeconds / double(runs.size());

  if (!measure.trace.empty()) {
    // Chrome's trace event format: complete events ("X") in microseconds;
    // the runs on the host lane, the kernels on the device's.
    llvm::json::Array events;
    Clock::time_point origin = runs.front().first;
    auto micros = [&](int64_t ns) {
      return double(ns - std::chrono::duration_cast<std::chrono::nanoseconds>(
                             origin.time_since_epoch())
                             .count()) /
             1e3;
    };
    auto lane = [&](int tid, std::string name) {
      events.push_back(llvm::json::Object{{"name", "thread_name"},
                                          {"ph", "M"},
                                          {"pid", 0},
                                          {"tid", tid},
                                          {"args", llvm::json::Object{{"name", name}}}});
    };
    lane(0, "host: dlc_session_run");
    lane(1, "device: " + measure.device + " kernels");
    for (auto [i, run] : llvm::enumerate(runs))
      events.push_back(llvm::json::Object{
          {"name", "run " + std::to_string(i)},
          {"ph", "X"},
          {"pid", 0},
          {"tid", 0},
          {"ts", micros(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            run.first.time_since_epoch())
                            .count())},
          {"dur", run.second * 1e6}});
    for (const LoadedModule::KernelEvent &e : module.kernelEvents()) {
      const Row &row = rows[e.kernel];
      llvm::json::Object args{{"ops", row.ops}};
      if (row.flops > 0)
        args["flops"] = row.flops;
      if (row.bytes > 0)
        args["bytes"] = row.bytes;
      events.push_back(llvm::json::Object{{"name", row.name},
                                          {"cat", "kernel"},
                                          {"ph", "X"},
                                          {"pid", 0},
                                          {"tid", 1},
                                          {"ts", micros(e.startNs)},
                                          {"dur", double(e.endNs - e.startNs) / 1e3},
                                          {"args", std::move(args)}});
    }
    std::error_code ec;
    llvm::raw_fd_ostream file(measure.trace, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail(context, kExitBadInput, "--trace " + measure.trace + ": " + ec.message());
    file << llvm::json::Value(llvm::json::Object{{"traceEvents", std::move(events)},
                                                 {"displayTimeUnit", "ms"}});
    file.close();
    if (file.has_error())
      return fail(context, kExitBadInput,
                  "--trace " + measure.trace + ": " + file.error().message());
  }

  double hostUsPerKernel = 0;
  {
    uint64_t launches = 0;
    for (const Row &row : sorted)
      launches += row.calls;
    if (launches)
      hostUsPerKernel = std::max(0.0, runSeconds - kernelTotal) / double(launches) * 1e6;
  }
  if (measure.json) {
    llvm::json::Array kernels;
    for (const Row &row : sorted)
      kernels.push_back(llvm::json::Object{
          {"kernel", row.name},
          {"ops", row.ops},
          {"calls", int64_t(row.calls)},
          {"total_ms", row.seconds * 1e3},
          {"percent", kernelTotal > 0 ? 100 * row.seconds / kernelTotal : 0.0},
          {"gflops_per_second",
           row.calls && row.seconds > 0 ? row.flops * double(row.calls) / row.seconds / 1e9 : 0.0},
          {"gbytes_per_second",
           row.calls && row.seconds > 0 ? row.bytes * double(row.calls) / row.seconds / 1e9 : 0.0},
          {"predicted_us", row.predicted >= 0 ? llvm::json::Value(row.predicted * 1e6)
                                              : llvm::json::Value(nullptr)}});
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"model", options.modelPath},
                                     {"device", measure.device},
                                     {"runs", int64_t(runs.size())},
                                     {"run_ms", perRun * 1e3},
                                     {"kernel_ms_per_run", kernelTotal / double(runs.size()) * 1e3},
                                     {"host_us_per_kernel", hostUsPerKernel},
                                     {"kernels", std::move(kernels)}}))
       << "\n";
    return kExitSuccess;
  }

  os << "dlc profile " << options.modelPath << " on " << measure.device << ": " << runs.size()
     << " runs, " << ms(perRun) << " ms a run, " << ms(kernelTotal / double(runs.size()))
     << " ms of it in kernels\n\n";
  os << llvm::formatv("{0,-16} {1,6} {2,10} {3,6} {4,10} {5,9} {6,8} {7,10}  {8}\n", "kernel",
                      "calls", "total ms", "%", "us/call", "GFLOP/s", "GB/s", "model us",
                      "ops fused");
  for (const Row &row : sorted) {
    double each = row.calls ? row.seconds / double(row.calls) : 0;
    os << llvm::formatv("{0,-16} {1,6} {2,10:F3} {3,6:F1} {4,10:F1} {5,9:F2} {6,8:F2} {7,10}  {8}\n",
                        row.name, row.calls, row.seconds * 1e3,
                        kernelTotal > 0 ? 100 * row.seconds / kernelTotal : 0.0, each * 1e6,
                        each > 0 ? row.flops / each / 1e9 : 0.0,
                        each > 0 ? row.bytes / each / 1e9 : 0.0,
                        row.predicted >= 0 ? llvm::formatv("{0:F1}", row.predicted * 1e6).str()
                                           : std::string("-"),
                        row.ops.empty() ? "-" : row.ops);
  }
  // The host's time per kernel launch: what a CUDA graph or fusion saves.
  double outside = std::max(0.0, runSeconds - kernelTotal);
  os << llvm::formatv("{0,-16} {1,6} {2,10:F3} {3,6:F1} {4,10:F2}  host overhead per kernel launch\n",
                      "(outside kernels)", runs.size(), outside * 1e3,
                      runSeconds > 0 ? 100 * outside / runSeconds : 0.0, hostUsPerKernel);
  if (!predict)
    os << "(no predictions: " << error << ")\n";
  if (!measure.trace.empty())
    os << "trace: " << measure.trace << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  return kExitSuccess;
}

} // namespace dlc
