//===- TestModules.cpp - Small modules for the runtime's tests ------------===//

#include "test/unit/runtime/TestModules.h"

#include "runtime/base/Checksum.h"
#include "runtime/format/HostArch.h"
#include "runtime/format/ModuleFormat.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#ifndef DLC_TEST_CXX
#define DLC_TEST_CXX "c++"
#endif
#ifndef DLC_TEST_KERNEL_CACHE
#define DLC_TEST_KERNEL_CACHE "/tmp/dlc-test-kernels"
#endif

namespace dlc::testing {

using format::BufferRef;
using format::ModuleWriter;
using rt::strCat;

namespace {

bool readFile(const std::string &path, Bytes *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

template <typename T> Bytes toBytes(const std::vector<T> &values) {
  Bytes b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

} // namespace

Status compileSharedObject(const std::string &source, Bytes *out) {
  const std::string compiler = DLC_TEST_CXX;
  const std::string flags = "-O2 -shared -fPIC -std=c++17";
  uint64_t hash = rt::fnv1a64(rt::asBytes(source));
  hash = rt::fnv1a64(rt::asBytes(compiler + flags), hash);
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(hash));
  const std::string dir = DLC_TEST_KERNEL_CACHE;
  mkdir(dir.c_str(), 0755);
  const std::string so = dir + "/" + name + ".so";
  if (readFile(so, out) && !out->empty())
    return rt::okStatus();
  // Compile under unique names, then rename: concurrent tests may race here.
  const std::string unique = strCat(dir, "/", name, ".", getpid());
  const std::string cpp = unique + ".cpp";
  {
    std::ofstream f(cpp);
    f << source;
    if (!f)
      return rt::internalError("cannot write ", cpp);
  }
  const std::string command =
      strCat(compiler, " ", flags, " -o '", unique, ".so' '", cpp, "' 2>&1");
  int rc = std::system(command.c_str());
  std::remove(cpp.c_str());
  if (rc != 0)
    return rt::internalError("host compiler failed (", rc, "): ", command);
  if (std::rename((unique + ".so").c_str(), so.c_str()) != 0)
    return rt::internalError("cannot rename ", unique, ".so");
  if (!readFile(so, out))
    return rt::internalError("cannot read ", so);
  return rt::okStatus();
}

std::string testKernelSource(int64_t k, int64_t n) {
  std::ostringstream s;
  s << "// Test kernels for the dlc runtime (test/unit/runtime/TestModules.cpp).\n"
       "#include <cstdint>\n"
       "static constexpr int64_t K = "
    << k << ", N = " << n
    << ";\n"
       "extern \"C\" {\n"
       "void dlc_test_add(void *const *buf, int64_t begin, int64_t end) {\n"
       "  const float *a = static_cast<const float *>(buf[0]);\n"
       "  const float *b = static_cast<const float *>(buf[1]);\n"
       "  float *c = static_cast<float *>(buf[2]);\n"
       "  for (int64_t i = begin; i < end; ++i) c[i] = a[i] + b[i];\n"
       "}\n"
       "// y[i] = x[idx[i]] over f32 x[4]: an index outside [-4, 4) fails data\n"
       "// check 0 as compiled kernels do (module.fbs Check) and reads x[0].\n"
       "void dlc_test_gather(void *const *buf, int64_t begin, int64_t end) {\n"
       "  const float *x = static_cast<const float *>(buf[0]);\n"
       "  const int32_t *idx = static_cast<const int32_t *>(buf[1]);\n"
       "  float *y = static_cast<float *>(buf[2]);\n"
       "  int64_t *status = static_cast<int64_t *>(buf[3]);\n"
       "  for (int64_t i = begin; i < end; ++i) {\n"
       "    int64_t j = idx[i] < 0 ? idx[i] + 4 : idx[i];\n"
       "    if (j < 0 || j >= 4) {\n"
       "      int64_t expected = 0;\n"
       "      if (__atomic_compare_exchange_n(status, &expected, 1, false, __ATOMIC_RELAXED,\n"
       "                                      __ATOMIC_RELAXED)) {\n"
       "        status[1] = idx[i];\n"
       "        status[2] = i;\n"
       "      }\n"
       "      j = 0;\n"
       "    }\n"
       "    y[i] = x[j];\n"
       "  }\n"
       "}\n"
       "void dlc_test_matmul(void *const *buf, int64_t begin, int64_t end) {\n"
       "  const float *x = static_cast<const float *>(buf[0]);\n"
       "  const float *w = static_cast<const float *>(buf[1]);\n"
       "  float *y = static_cast<float *>(buf[2]);\n"
       "  for (int64_t r = begin; r < end; ++r)\n"
       "    for (int64_t j = 0; j < N; ++j) {\n"
       "      float acc = 0;\n"
       "      for (int64_t i = 0; i < K; ++i) acc += x[r * K + i] * w[i * N + j];\n"
       "      y[r * N + j] = acc;\n"
       "    }\n"
       "}\n"
       "void dlc_test_bias_relu(void *const *buf, int64_t begin, int64_t end) {\n"
       "  const float *h = static_cast<const float *>(buf[0]);\n"
       "  const float *b = static_cast<const float *>(buf[1]);\n"
       "  float *y = static_cast<float *>(buf[2]);\n"
       "  for (int64_t r = begin; r < end; ++r)\n"
       "    for (int64_t j = 0; j < N; ++j) {\n"
       "      float v = h[r * N + j] + b[j];\n"
       "      y[r * N + j] = v > 0 ? v : 0;\n"
       "    }\n"
       "}\n"
       "// y[r, :] = 2 x[r, :] + b + s[r / K] over rows [begin, end) of N columns:\n"
       "// K rows of x and y per element of s (a dynamic dimension's rows). A 0\n"
       "// in x fails data check 0 (value: the row), so that a run that reads\n"
       "// rows nobody gave (zeros) fails.\n"
       "void dlc_test_rows(void *const *buf, int64_t begin, int64_t end) {\n"
       "  const float *x = static_cast<const float *>(buf[0]);\n"
       "  const float *s = static_cast<const float *>(buf[1]);\n"
       "  const float *b = static_cast<const float *>(buf[2]);\n"
       "  float *y = static_cast<float *>(buf[3]);\n"
       "  int64_t *status = static_cast<int64_t *>(buf[4]);\n"
       "  for (int64_t r = begin; r < end; ++r)\n"
       "    for (int64_t j = 0; j < N; ++j) {\n"
       "      float v = x[r * N + j];\n"
       "      int64_t expected = 0;\n"
       "      if (v == 0 && __atomic_compare_exchange_n(status, &expected, 1, false,\n"
       "                                                __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {\n"
       "        status[1] = r;\n"
       "        status[2] = r * N + j;\n"
       "      }\n"
       "      y[r * N + j] = 2 * v + b[j] + s[r / K];\n"
       "    }\n"
       "}\n"
       "// cuda-emu's launch stub for dlc_test_rows (hal/cuda_emu/dlc_emu_launch.h:\n"
       "// the launch starts with unsigned grid[3], block[3]; args[i] points at\n"
       "// parameter i): one row per thread of the grid.\n"
       "void dlc_emu_launch_dlc_test_rows(const unsigned *launch, void **args) {\n"
       "  void *buf[5];\n"
       "  for (int i = 0; i < 5; ++i) buf[i] = *static_cast<void **>(args[i]);\n"
       "  dlc_test_rows(buf, 0, int64_t(launch[0]) * launch[3]);\n"
       "}\n"
       "}\n";
  return s.str();
}

namespace {

/// What the writer-built hostile variants change in the add module.
struct AddTweaks {
  std::string entry = "dlc_test_add";
  size_t launchArgs = 3;         ///< buffers the launch passes (the kernel takes 3)
  bool writeToInput = false;     ///< bind the written argument to input 1
  uint64_t arenaSize = 0;
  bool libraryCall = false;      ///< append a LibraryCall command
};

Status buildAdd(int64_t n, ModuleWriter *w, const AddTweaks &t) {
  Bytes so;
  const std::string source = testKernelSource(1, 1);
  DLC_RETURN_IF_ERROR(compileSharedObject(source, &so));
  const uint64_t bytes = static_cast<uint64_t>(n) * 4;
  w->setName("add");
  w->addInput({"a", DType::F32, {n}});
  w->addInput({"b", DType::F32, {n}});
  w->addOutput({"c", DType::F32, {n}});
  uint32_t bin = w->addBinary("kernels.so", fb::BinaryFormat::shared_object,
                              format::hostArchitecture(), std::move(so));
  format::KernelDesc k;
  k.name = "add";
  k.entry = t.entry;
  k.source = source;
  k.binaries = {bin};
  k.args = {{"a", fb::Access::read, bytes}, {"b", fb::Access::read, bytes},
            {"c", fb::Access::write, bytes}};
  k.parallelExtent = n;
  k.grain = 1;
  uint32_t add = w->addKernel(k);
  format::PlanDesc plan;
  plan.arenaSize = t.arenaSize;
  std::vector<BufferRef> args = {format::inputRef(0, 0, bytes), format::inputRef(1, 0, bytes),
                                 t.writeToInput ? format::inputRef(1, 0, bytes)
                                                : format::outputRef(0, 0, bytes)};
  args.resize(t.launchArgs, format::outputRef(0, 0, bytes));
  plan.commands.push_back(format::LaunchDesc{add, args});
  if (t.libraryCall)
    plan.commands.push_back(format::LibraryCallDesc{"gemm", {format::outputRef(0, 0, bytes)}});
  w->addPlan(plan);
  return rt::okStatus();
}

} // namespace

Status buildAddModule(int64_t n, ModuleWriter *w) { return buildAdd(n, w, AddTweaks()); }

Status buildDrawnStateModule(ModuleWriter *w) {
  DLC_RETURN_IF_ERROR(buildAddModule(6, w));
  format::StateDesc normal{{"w", DType::F32, {3, 4}}};
  normal.draw = format::Draw{InitKind::Normal, {}};
  normal.draw->options.std = 0.02, normal.draw->options.seed = 7;
  w->addState(normal);
  w->addState(format::StateDesc{{"m", DType::F32, {2}}});
  format::StateDesc he{{"h", DType::F32, {4, 2}}};
  he.draw = format::Draw{InitKind::He, {}};
  he.draw->options.seed = 3;
  w->addState(he);
  return rt::okStatus();
}

Status buildGatherModule(int64_t n, ModuleWriter *w) {
  Bytes so;
  const std::string source = testKernelSource(1, 1);
  DLC_RETURN_IF_ERROR(compileSharedObject(source, &so));
  const uint64_t bytes = static_cast<uint64_t>(n) * 4;
  w->setName("gather");
  w->addInput({"x", DType::F32, {4}});
  w->addInput({"idx", DType::I32, {n}});
  w->addOutput({"y", DType::F32, {n}});
  uint32_t bin = w->addBinary("kernels.so", fb::BinaryFormat::shared_object,
                              format::hostArchitecture(), std::move(so));
  format::KernelDesc k;
  k.name = "gather";
  k.entry = "dlc_test_gather";
  k.source = source;
  k.binaries = {bin};
  k.args = {{"x", fb::Access::read, 16},
            {"idx", fb::Access::read, bytes},
            {"y", fb::Access::write, bytes},
            {"status", fb::Access::read_write, format::kStatusBytes}};
  k.parallelExtent = n;
  uint32_t gather = w->addKernel(k);
  format::CheckDesc check;
  check.kind = fb::CheckKind::gather_index;
  check.kernel = gather;
  check.op = "dlc.gather";
  check.location = "model.dlg:3:7";
  check.bound = 4;
  w->addCheck(check);
  format::PlanDesc plan;
  plan.commands.push_back(format::LaunchDesc{
      gather, {format::inputRef(0, 0, 16), format::inputRef(1, 0, bytes),
               format::outputRef(0, 0, bytes), format::statusRef()}});
  w->addPlan(plan);
  return rt::okStatus();
}

Status buildDynamicModule(int64_t max, const DynamicTweaks &t, ModuleWriter *w) {
  constexpr int64_t kRowsPerN = 2, kColumns = 3;
  Bytes so;
  const std::string source = testKernelSource(kRowsPerN, kColumns);
  DLC_RETURN_IF_ERROR(compileSharedObject(source, &so));
  const int64_t rows = kRowsPerN * max;
  const uint64_t yBytes = static_cast<uint64_t>(rows * kColumns) * 4,
                 sBytes = static_cast<uint64_t>(max) * 4, bBytes = kColumns * 4;
  w->setName("dynamic");
  const int32_t n = static_cast<int32_t>(w->addDynamicDim({"N", 1, max}));
  w->addInput({"x", DType::F32, {rows, kColumns}, n});
  w->addInput({"s", DType::F32, {max}, n});
  w->addInput({"b", DType::F32, {kColumns}});
  w->addOutput({"y", DType::F32, {rows, kColumns}, n});
  uint32_t bin = w->addBinary("kernels.so", fb::BinaryFormat::shared_object,
                              format::hostArchitecture(), std::move(so));
  format::KernelDesc k;
  k.name = "rows";
  k.entry = "dlc_test_rows";
  k.source = source;
  k.binaries = {bin};
  k.args = {{"x", fb::Access::read, yBytes},
            {"s", fb::Access::read, sBytes},
            {"b", fb::Access::read, bBytes},
            {"y", fb::Access::write, yBytes},
            {"status", fb::Access::read_write, format::kStatusBytes}};
  if (t.cudaEmu) {
    // Its shared_object binary is what cuda-emu runs (the stub above).
    k.target = fb::Target::cuda;
    k.grid = {static_cast<uint32_t>(rows), 1, 1};
  } else {
    k.parallelExtent = rows;
    k.grain = t.grain;
    k.dynamicDim = t.scaled ? n : -1;
  }
  uint32_t kernel = w->addKernel(k);
  format::CheckDesc check;
  check.kind = fb::CheckKind::division_by_zero;
  check.kernel = kernel;
  check.op = "dlc.div";
  check.location = "model.dlg:2:5";
  w->addCheck(check);
  format::PlanDesc plan;
  const bool viaArena = t.copyOut || t.chained;
  const BufferRef y = viaArena ? format::arenaRef(0, yBytes) : format::outputRef(0, 0, yBytes);
  if (viaArena)
    plan.arenaSize = yBytes;
  plan.commands.push_back(format::LaunchDesc{
      kernel, {format::inputRef(0, 0, yBytes), format::inputRef(1, 0, sBytes),
               format::inputRef(2, 0, bBytes), y, format::statusRef()}});
  if (t.copyOut)
    plan.commands.push_back(format::CopyDesc{y, format::outputRef(0, 0, yBytes), yBytes});
  if (t.chained) {
    // The same code, its rows not scaled: it reads all max rows of the
    // arena, so the runtime must run the first launch in full as well.
    k.name = "rows_full";
    k.source.clear();
    k.dynamicDim = -1;
    uint32_t full = w->addKernel(k);
    plan.commands.push_back(format::LaunchDesc{
        full, {y, format::inputRef(1, 0, sBytes), format::inputRef(2, 0, bBytes),
               format::outputRef(0, 0, yBytes), format::statusRef()}});
  }
  w->addPlan(plan);
  return rt::okStatus();
}

float dynamicReference(const std::vector<float> &x, const std::vector<float> &s,
                       const std::vector<float> &b, int64_t i) {
  return 2 * x[i] + b[i % 3] + s[i / 3 / 2];
}

float mlpWeight(int64_t i) { return static_cast<float>((3 * i) % 7 - 3); }
float mlpBias(int64_t j) { return static_cast<float>(j % 3 - 1); }

Status buildMlpModule(int64_t m, int64_t k, int64_t n, ModuleWriter *w) {
  Bytes so;
  const std::string source = testKernelSource(k, n);
  DLC_RETURN_IF_ERROR(compileSharedObject(source, &so));
  const uint64_t xBytes = m * k * 4, wBytes = k * n * 4, bBytes = n * 4, yBytes = m * n * 4;
  w->setName("mlp");
  w->addInput({"x", DType::F32, {m, k}});
  w->addOutput({"y", DType::F32, {m, n}});
  w->addOutput({"h", DType::F32, {m, n}});
  std::vector<float> weight(k * n), bias(n);
  for (int64_t i = 0; i < k * n; ++i)
    weight[i] = mlpWeight(i);
  for (int64_t j = 0; j < n; ++j)
    bias[j] = mlpBias(j);
  w->addWeight({"w", DType::F32, {k, n}}, toBytes(weight));
  w->addWeight({"b", DType::F32, {n}}, toBytes(bias));
  uint32_t bin = w->addBinary("kernels.so", fb::BinaryFormat::shared_object,
                              format::hostArchitecture(), std::move(so));
  format::KernelDesc mm;
  mm.name = "matmul";
  mm.entry = "dlc_test_matmul";
  mm.source = source;
  mm.binaries = {bin};
  mm.args = {{"x", fb::Access::read, xBytes}, {"w", fb::Access::read, wBytes},
             {"h", fb::Access::write, yBytes}};
  mm.parallelExtent = m;
  uint32_t matmul = w->addKernel(mm);
  format::KernelDesc br = mm;
  br.name = "bias_relu";
  br.entry = "dlc_test_bias_relu";
  br.source.clear();
  br.args = {{"h", fb::Access::read, yBytes}, {"b", fb::Access::read, bBytes},
             {"y", fb::Access::write, yBytes}};
  uint32_t biasRelu = w->addKernel(br);
  format::PlanDesc plan;
  // The arena holds h at offset 64 (not 0, so offsets are exercised).
  plan.arenaSize = 64 + yBytes;
  plan.commands.push_back(format::LaunchDesc{
      matmul, {format::inputRef(0, 0, xBytes), format::weightRef(0, 0, wBytes),
               format::arenaRef(64, yBytes)}});
  plan.commands.push_back(format::LaunchDesc{
      biasRelu, {format::arenaRef(64, yBytes), format::weightRef(1, 0, bBytes),
                 format::outputRef(0, 0, yBytes)}});
  plan.commands.push_back(
      format::CopyDesc{format::arenaRef(64, yBytes), format::outputRef(1, 0, yBytes), yBytes});
  w->addPlan(plan);
  return rt::okStatus();
}

void resealHeader(Bytes &bytes) {
  format::Prelude p = format::decodePrelude(bytes.data());
  p.headerCrc32 = rt::crc32(rt::ByteSpan(bytes.data() + format::kHeaderOffset, p.headerSize));
  format::encodePrelude(p, bytes.data());
}

namespace {

fb::Module *mutableRoot(Bytes &bytes) {
  return fb::GetMutableModule(bytes.data() + format::kHeaderOffset);
}

Status serializeUnchecked(const ModuleWriter &w, Bytes *out) {
  return w.serialize(out, /*verify=*/false);
}

} // namespace

const std::vector<std::string> &variantNames() {
  static const std::vector<std::string> names = {
      "add", "mlp", "bad-identifier", "bad-version", "huge-dims", "negative-dim",
      "weight-offset-max", "section-past-end", "kernel-index", "args-mismatch",
      "empty-entry", "arena-ref-past-end", "write-to-input", "unknown-command",
      "missing-symbol", "huge-arena", "library-call", "gather", "status-ref-offset",
      "check-kernel-index", "gib-arena", "dynamic", "dynamic-unscaled", "dynamic-copy",
      "dynamic-emu", "dynamic-chained"};
  return names;
}

Status buildVariant(const std::string &name, Bytes *out) {
  ModuleWriter w;
  if (name == "add") {
    DLC_RETURN_IF_ERROR(buildAddModule(6, &w));
    return w.serialize(out);
  }
  if (name == "mlp") {
    DLC_RETURN_IF_ERROR(buildMlpModule(4, 8, 5, &w));
    return w.serialize(out);
  }
  if (name == "gather") {
    DLC_RETURN_IF_ERROR(buildGatherModule(6, &w));
    return w.serialize(out);
  }
  if (name.rfind("dynamic", 0) == 0) {
    DynamicTweaks t;
    if (name == "dynamic-unscaled")
      t.scaled = false;
    else if (name == "dynamic-copy")
      t.copyOut = true;
    else if (name == "dynamic-emu")
      t.cudaEmu = true;
    else if (name == "dynamic-chained")
      t.chained = true;
    else if (name != "dynamic")
      return rt::notFound("no test module named '", name, "'");
    DLC_RETURN_IF_ERROR(buildDynamicModule(kDynamicMax, t, &w));
    return w.serialize(out);
  }
  // The data checks' channel bound wrong.
  if (name == "status-ref-offset" || name == "check-kernel-index") {
    DLC_RETURN_IF_ERROR(buildGatherModule(6, &w));
    DLC_RETURN_IF_ERROR(w.serialize(out));
    fb::Module *m = mutableRoot(*out);
    if (name == "status-ref-offset") {
      const auto *launch = m->plans()->Get(0)->commands()->GetAs<fb::Launch>(0);
      const_cast<fb::Launch *>(launch)->mutable_args()->GetMutableObject(3)->mutate_offset(8);
    } else {
      m->mutable_checks()->GetMutableObject(0)->mutate_kernel(9);
    }
    resealHeader(*out);
    return rt::okStatus();
  }
  // Edits of a valid module's header, resealed.
  auto edited = [&](bool mlp, auto edit) -> Status {
    DLC_RETURN_IF_ERROR(mlp ? buildMlpModule(4, 8, 5, &w) : buildAddModule(6, &w));
    DLC_RETURN_IF_ERROR(w.serialize(out));
    edit(mutableRoot(*out));
    resealHeader(*out);
    return rt::okStatus();
  };
  if (name == "bad-identifier") {
    DLC_RETURN_IF_ERROR(buildAddModule(6, &w));
    DLC_RETURN_IF_ERROR(w.serialize(out));
    std::memcpy(out->data(), "XLCM", 4);
    return rt::okStatus();
  }
  if (name == "bad-version") {
    DLC_RETURN_IF_ERROR(buildAddModule(6, &w));
    w.setOverrides({true, 2});
    return serializeUnchecked(w, out);
  }
  if (name == "huge-dims")
    return edited(true, [](fb::Module *m) {
      auto *shape = m->mutable_inputs()->GetMutableObject(0)->mutable_shape();
      shape->Mutate(0, int64_t(1) << 40);
      shape->Mutate(1, int64_t(1) << 40);
    });
  if (name == "negative-dim")
    return edited(true, [](fb::Module *m) {
      m->mutable_inputs()->GetMutableObject(0)->mutable_shape()->Mutate(1, -5);
    });
  if (name == "weight-offset-max")
    return edited(true, [](fb::Module *m) {
      m->mutable_weights()->GetMutableObject(1)->mutate_offset(~uint64_t(63));
    });
  if (name == "section-past-end")
    return edited(true, [&](fb::Module *m) {
      auto *s = m->mutable_sections()->GetMutableObject(1);
      s->mutate_offset(format::kSectionAlignment * ((out->size() + 4095) / 64));
    });
  if (name == "kernel-index")
    return edited(true, [](fb::Module *m) {
      const auto *commands = m->mutable_plans()->GetMutableObject(0)->mutable_commands();
      const_cast<fb::Launch *>(commands->GetAs<fb::Launch>(1))->mutate_kernel(7);
    });
  if (name == "unknown-command")
    return edited(true, [](fb::Module *m) {
      m->mutable_plans()->GetMutableObject(0)->mutable_commands_type()->Mutate(
          2, static_cast<fb::Command>(42));
    });
  if (name == "arena-ref-past-end")
    return edited(true, [](fb::Module *m) {
      m->mutable_plans()->GetMutableObject(0)->mutate_arena_size(64);
    });
  // Modules the writer builds wrong on purpose.
  AddTweaks t;
  if (name == "args-mismatch")
    t.launchArgs = 2;
  else if (name == "empty-entry")
    t.entry = "";
  else if (name == "write-to-input")
    t.writeToInput = true;
  else if (name == "missing-symbol")
    t.entry = "dlc_no_such_kernel";
  else if (name == "huge-arena")
    t.arenaSize = uint64_t(1) << 47;
  else if (name == "gib-arena")
    t.arenaSize = uint64_t(1) << 30;
  else if (name == "library-call")
    t.libraryCall = true;
  else
    return rt::notFound("no test module named '", name, "'");
  DLC_RETURN_IF_ERROR(buildAdd(6, &w, t));
  return serializeUnchecked(w, out);
}

} // namespace dlc::testing
