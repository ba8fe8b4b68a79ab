//===- ApiTest.cpp - The C API (dlc/runtime.h) and its C++ wrapper --------===//

#include "dlc/runtime.h"
#include "dlc/runtime.hpp"
#include "test/unit/runtime/TestModules.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdio>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

namespace {

using dlc::testing::Bytes;

Bytes variant(const std::string &name) {
  Bytes b;
  dlc::rt::Status s = dlc::testing::buildVariant(name, &b);
  EXPECT_TRUE(s.ok()) << s.toString();
  return b;
}

/// A DLTensor over `data` with `shape` (kept alive by the caller).
DLTensor tensor(float *data, std::vector<int64_t> &shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  return t;
}

/// Takes a status, returns "<code>: <message>" and frees it.
std::string describe(dlc_status_t s) {
  std::string out = std::to_string(dlc_status_code(s)) + ": " + dlc_status_message(s);
  dlc_status_free(s);
  return out;
}

class Api : public ::testing::Test {
public:
  void SetUp() override {
    Bytes b = variant("add");
    ASSERT_EQ(dlc_module_load_memory(b.data(), b.size(), &module), nullptr);
    ASSERT_EQ(dlc_session_create(module, "cpu", nullptr, &session), nullptr);
    a = tensor(av.data(), shape);
    b2 = tensor(bv.data(), shape);
    c = tensor(cv.data(), shape);
  }
  void TearDown() override {
    dlc_session_destroy(session);
    dlc_module_release(module);
  }
  dlc_status_t run() {
    const DLTensor *in[] = {&a, &b2};
    const DLTensor *out[] = {&c};
    return dlc_session_run(session, in, 2, out, 1);
  }

  dlc_module_t *module = nullptr;
  dlc_session_t *session = nullptr;
  std::vector<int64_t> shape = {6};
  std::vector<float> av{1, 2, 3, 4, 5, 6}, bv{6, 5, 4, 3, 2, 1}, cv = std::vector<float>(6);
  DLTensor a, b2, c;
};

TEST_F(Api, SignatureQueries) {
  EXPECT_STREQ(dlc_module_name(module), "add");
  ASSERT_EQ(dlc_module_input_count(module), 2u);
  ASSERT_EQ(dlc_module_output_count(module), 1u);
  dlc_tensor_info_t info;
  ASSERT_EQ(dlc_module_input_info(module, 1, &info), nullptr);
  EXPECT_STREQ(info.name, "b");
  EXPECT_EQ(info.dtype.code, kDLFloat);
  EXPECT_EQ(info.dtype.bits, 32);
  EXPECT_EQ(info.ndim, 1);
  EXPECT_EQ(info.shape[0], 6);
  EXPECT_EQ(info.size_bytes, 24u);
  dlc_status_t s = dlc_module_output_info(module, 5, &info);
  EXPECT_EQ(dlc_status_code(s), DLC_INVALID_ARGUMENT);
  EXPECT_NE(describe(s).find("output index 5 is out of range (1)"), std::string::npos);
}

TEST_F(Api, RunsWithDLPackTensors) {
  ASSERT_EQ(run(), nullptr);
  EXPECT_EQ(cv, std::vector<float>(6, 7));
  // Explicit compact strides and a byte offset are accepted.
  std::vector<int64_t> strides = {1};
  std::vector<float> padded(7, 0);
  c = tensor(padded.data(), shape);
  c.strides = strides.data();
  c.byte_offset = 4;
  ASSERT_EQ(run(), nullptr);
  EXPECT_EQ(padded, (std::vector<float>{0, 7, 7, 7, 7, 7, 7}));
}

TEST_F(Api, KernelTimesEventsAndMemory) {
  ASSERT_EQ(run(), nullptr); // untimed: no events
  const dlc_kernel_event_t *events = nullptr;
  size_t count = 99;
  ASSERT_EQ(dlc_session_kernel_events(session, &events, &count), nullptr);
  EXPECT_EQ(count, 0u);
  ASSERT_EQ(dlc_session_enable_kernel_timing(session), nullptr);
  ASSERT_EQ(run(), nullptr);
  ASSERT_EQ(run(), nullptr);
  size_t kernels = 0;
  ASSERT_EQ(dlc_session_kernel_count(session, &kernels), nullptr);
  ASSERT_GE(kernels, 1u);
  uint64_t launches = 0;
  for (size_t k = 0; k < kernels; ++k) {
    uint64_t calls = 0;
    double seconds = -1;
    const char *name = nullptr;
    ASSERT_EQ(dlc_session_kernel_time(session, k, &name, &calls, &seconds), nullptr);
    EXPECT_EQ(calls % 2, 0u) << name; // each launch of each of the two runs
    EXPECT_GE(seconds, 0);
    launches += calls;
  }
  ASSERT_EQ(dlc_session_kernel_events(session, &events, &count), nullptr);
  ASSERT_EQ(count, launches);
  for (size_t i = 0; i < count; ++i) {
    EXPECT_LT(events[i].kernel, kernels);
    EXPECT_LE(events[i].start_ns, events[i].end_ns);
    if (i)
      EXPECT_LE(events[i - 1].end_ns, events[i].start_ns); // launches one after another
  }
  uint64_t arena = 1, weights = 1, state = 1;
  ASSERT_EQ(dlc_session_memory(session, &arena, &weights, &state), nullptr);
  EXPECT_EQ(state, 0u); // "add" has no state; its arena and weights are the module's
  EXPECT_EQ(describe(dlc_session_kernel_events(nullptr, &events, &count)).substr(0, 2),
            std::to_string(DLC_INVALID_ARGUMENT) + ":");
  EXPECT_EQ(describe(dlc_session_memory(nullptr, nullptr, nullptr, nullptr)).substr(0, 2),
            std::to_string(DLC_INVALID_ARGUMENT) + ":");
}

TEST_F(Api, BadTensorsAreRefusedNamingTheArgument) {
  std::vector<int64_t> wrongShape = {5}, strides = {2};
  struct Case {
    std::function<void(Api &)> edit;
    const char *message;
  };
  std::vector<Case> cases = {
      {[](Api &t) { t.a.dtype = {kDLFloat, 64, 1}; }, "input 0 ('a'): dtype float64 is not f32"},
      {[](Api &t) { t.a.dtype = {kDLInt, 32, 1}; }, "input 0 ('a'): dtype int32 is not f32"},
      {[&](Api &t) { t.b2.shape = wrongShape.data(); }, "input 1 ('b'): shape [5] is not [6]"},
      {[](Api &t) { t.c.ndim = 2; }, "output 0 ('c'): rank 2 is not 1"},
      {[&](Api &t) { t.a.strides = strides.data(); }, "strides [2] are not compact row-major"},
      {[](Api &t) { t.a.device = {kDLCUDA, 0}; }, "a kDLCUDA tensor, but the session's device uses host memory"},
      {[](Api &t) { t.a.device = {kDLROCM, 0}; }, "device type 10 is not kDLCPU"},
      {[](Api &t) { t.c.data = nullptr; }, "output 0 ('c'): data is NULL"},
      {[](Api &t) { t.c.data = t.av.data() + 2; }, "input 0 and output 0 overlap"},
  };
  for (const Case &k : cases) {
    TearDown();
    SetUp();
    k.edit(*this);
    dlc_status_t s = run();
    EXPECT_EQ(dlc_status_code(s), DLC_INVALID_ARGUMENT);
    EXPECT_EQ(dlc_status_exit_code(s), 2);
    std::string d = describe(s);
    EXPECT_NE(d.find(k.message), std::string::npos) << d;
  }
  // Inputs may share memory.
  TearDown();
  SetUp();
  b2.data = av.data();
  EXPECT_EQ(run(), nullptr);
  EXPECT_EQ(cv, (std::vector<float>{2, 4, 6, 8, 10, 12}));
  // Wrong counts and NULLs.
  dlc_status_t s = dlc_session_run(session, nullptr, 0, nullptr, 0);
  EXPECT_NE(describe(s).find("0 inputs and 0 outputs given"), std::string::npos);
  s = dlc_session_run(nullptr, nullptr, 0, nullptr, 0);
  EXPECT_EQ(dlc_status_code(s), DLC_INVALID_ARGUMENT);
  dlc_status_free(s);
}

TEST(ApiLoad, CorruptModulesFromMemoryAndFile) {
  Bytes b = variant("add");
  b[b.size() - 3] ^= 0x10; // inside the kernel binary
  dlc_module_t *m = reinterpret_cast<dlc_module_t *>(0x1);
  dlc_status_t s = dlc_module_load_memory(b.data(), b.size(), &m);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(dlc_status_code(s), DLC_INVALID_MODULE);
  EXPECT_EQ(dlc_status_exit_code(s), 2);
  std::string d = describe(s);
  EXPECT_NE(d.find("<memory>: section 'kernels.so' at byte"), std::string::npos) << d;
  EXPECT_NE(d.find("checksum mismatch"), std::string::npos) << d;

  std::string path = ::testing::TempDir() + "/api-corrupt.dlcm";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(b.data()),
                                              static_cast<std::streamsize>(b.size()));
  s = dlc_module_load_file(path.c_str(), &m);
  d = describe(s);
  EXPECT_NE(d.find(path + ": section 'kernels.so' at byte"), std::string::npos) << d;
  std::remove(path.c_str());

  s = dlc_module_load_file("/nonexistent.dlcm", &m);
  EXPECT_EQ(dlc_status_code(s), DLC_NOT_FOUND);
  dlc_status_free(s);
  s = dlc_module_load_memory(nullptr, 10, &m);
  EXPECT_EQ(dlc_status_code(s), DLC_INVALID_ARGUMENT);
  dlc_status_free(s);
}

TEST(ApiLoad, ModuleOutlivesItsReleaseWhileASessionHoldsIt) {
  Bytes b = variant("add");
  dlc_module_t *m = nullptr;
  ASSERT_EQ(dlc_module_load_memory(b.data(), b.size(), &m), nullptr);
  dlc_session_options_t options;
  dlc_session_options_init(&options);
  options.num_threads = 2;
  dlc_session_t *s = nullptr;
  ASSERT_EQ(dlc_session_create(m, "cpu", &options, &s), nullptr);
  dlc_module_release(m); // the session keeps what it needs
  std::vector<int64_t> shape = {6};
  std::vector<float> x(6, 1), y(6, 2), z(6);
  DLTensor tx = tensor(x.data(), shape), ty = tensor(y.data(), shape), tz = tensor(z.data(), shape);
  const DLTensor *in[] = {&tx, &ty};
  const DLTensor *out[] = {&tz};
  ASSERT_EQ(dlc_session_run(s, in, 2, out, 1), nullptr);
  EXPECT_EQ(z, std::vector<float>(6, 3));
  dlc_session_destroy(s);
}

TEST(ApiLoad, DevicesAndOptions) {
  Bytes b = variant("add");
  dlc_module_t *m = nullptr;
  ASSERT_EQ(dlc_module_load_memory(b.data(), b.size(), &m), nullptr);
  dlc_session_t *s = nullptr;
  dlc_status_t st = dlc_session_create(m, "cuda:0", nullptr, &s);
  EXPECT_EQ(dlc_status_code(st), DLC_UNAVAILABLE);
  EXPECT_EQ(dlc_status_exit_code(st), 3);
  EXPECT_NE(describe(st).find("4: no CUDA"), std::string::npos); // no driver, or no device
  st = dlc_session_create(m, "cuda-emu", nullptr, &s);
  EXPECT_EQ(dlc_status_code(st), DLC_UNAVAILABLE);
  dlc_status_free(st);
  dlc_session_options_t options{};
  options.struct_size = 4; // not initialised
  st = dlc_session_create(m, "cpu", &options, &s);
  EXPECT_NE(describe(st).find("call dlc_session_options_init"), std::string::npos);
  EXPECT_EQ(s, nullptr);
  dlc_module_release(m);
}

TEST(ApiLoad, StatusHelpersAcceptNull) {
  EXPECT_EQ(dlc_status_code(nullptr), DLC_OK);
  EXPECT_STREQ(dlc_status_message(nullptr), "");
  EXPECT_EQ(dlc_status_exit_code(nullptr), 0);
  dlc_status_free(nullptr);
  dlc_module_release(nullptr);
  dlc_session_destroy(nullptr);
  EXPECT_NE(std::string(dlc_runtime_version()).find("module format 1.5"), std::string::npos);
}

TEST(ApiLoad, LogCallbackHearsLoads) {
  std::vector<std::string> messages;
  dlc_set_log_callback(
      [](void *user, dlc_log_level_t, const char *message) {
        static_cast<std::vector<std::string> *>(user)->push_back(message);
      },
      &messages);
  Bytes b = variant("add");
  dlc_module_t *m = nullptr;
  ASSERT_EQ(dlc_module_load_memory(b.data(), b.size(), &m), nullptr);
  dlc_set_log_callback(nullptr, nullptr);
  dlc_module_release(m);
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages[0].find("loaded module 'add'"), std::string::npos) << messages[0];
}

TEST(CppWrapper, RunsAndThrowsDlcErrors) {
  Bytes b = variant("add");
  dlc::Module module = dlc::Module::loadMemory(b.data(), b.size());
  dlc::Module copy = module;
  EXPECT_EQ(copy.inputCount(), 2u);
  EXPECT_STREQ(copy.output(0).name, "c");
  dlc::Session session(copy, "cpu", 1);
  std::vector<int64_t> shape = {6};
  std::vector<float> x(6, 2), y(6, 3), z(6);
  DLTensor tx = tensor(x.data(), shape), ty = tensor(y.data(), shape), tz = tensor(z.data(), shape);
  session.run({&tx, &ty}, {&tz});
  EXPECT_EQ(z, std::vector<float>(6, 5));
  try {
    session.run({&tx}, {&tz});
    FAIL() << "no exception";
  } catch (const dlc::Error &e) {
    EXPECT_EQ(e.code(), DLC_INVALID_ARGUMENT);
    EXPECT_EQ(e.exitCode(), 2);
  }
  Bytes bad(b.begin(), b.begin() + 100);
  EXPECT_THROW(dlc::Module::loadMemory(bad.data(), bad.size()), dlc::Error);
  EXPECT_THROW(dlc::Session(module, "cuda:0"), dlc::Error);
}

} // namespace

namespace {

/// A run of the gather module (y[i] = x[idx[i]], data check 0) on `idx`.
dlc_status_t runGather(dlc_session_t *session, std::vector<int32_t> &idx,
                       std::vector<float> &y) {
  static std::vector<float> x{10, 11, 12, 13};
  static std::vector<int64_t> xShape{4};
  static std::vector<int64_t> shape{6};
  DLTensor xt = tensor(x.data(), xShape), yt = tensor(y.data(), shape);
  DLTensor it{};
  it.data = idx.data();
  it.device = {kDLCPU, 0};
  it.ndim = 1;
  it.dtype = {kDLInt, 32, 1};
  it.shape = shape.data();
  const DLTensor *in[] = {&xt, &it};
  const DLTensor *out[] = {&yt};
  return dlc_session_run(session, in, 2, out, 1);
}

} // namespace

// A kernel's data check (module format 1.2) fails the run with
// DLC_DATA_ERROR naming the op, where it came from, the value and the
// kernel (exit code 3); the session stays usable: the next run with good
// data succeeds, and a bad one fails again.
TEST(ApiDataChecks, FailedCheckIsAnErrorAndTheSessionStaysUsable) {
  Bytes b = variant("gather");
  dlc_module_t *module = nullptr;
  ASSERT_EQ(dlc_module_load_memory(b.data(), b.size(), &module), nullptr);
  dlc_session_t *session = nullptr;
  ASSERT_EQ(dlc_session_create(module, "cpu", nullptr, &session), nullptr);
  std::vector<float> y(6);
  std::vector<int32_t> good{0, 1, 2, 3, -1, -4}, past{0, 1, 7, 3, 0, 0}, before{-5, 0, 0, 0, 0, 0};

  for (int round = 0; round < 2; ++round) {
    dlc_status_t s = runGather(session, past, y);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(dlc_status_code(s), DLC_DATA_ERROR);
    EXPECT_EQ(dlc_status_exit_code(s), 3);
    EXPECT_EQ(describe(s), "8: model.dlg:3:7: gather: index 7 out of range for axis 0 of size 4 "
                           "(dlc.gather in kernel 'gather' on cpu)");

    s = runGather(session, good, y);
    ASSERT_EQ(s, nullptr) << describe(s);
    EXPECT_EQ(y, (std::vector<float>{10, 11, 12, 13, 13, 10}));
  }
  dlc_status_t s = runGather(session, before, y);
  EXPECT_NE(describe(s).find("gather: index -5 out of range"), std::string::npos);
  dlc_session_destroy(session);
  dlc_module_release(module);
}

// Out of memory when a session is created (here under an address-space
// limit, `ulimit -v`): RESOURCE_EXHAUSTED naming the buffer, the bytes it
// needs and the bytes available (exit code 3); nothing is left half made,
// and a session created with the memory back runs.
TEST(ApiOutOfMemory, SessionNamesTheBufferAndTheMemoryAvailable) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory needs the address space";
#else
  Bytes b = variant("gib-arena");
  dlc_module_t *module = nullptr;
  ASSERT_EQ(dlc_module_load_memory(b.data(), b.size(), &module), nullptr);
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
  // Room for 256 MiB more than is mapped now.
  uint64_t mapped = 0;
  {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("VmSize:", 0) == 0)
        mapped = std::stoull(line.substr(7)) * 1024;
  }
  ASSERT_GT(mapped, 0u);
  struct rlimit tight = saved;
  tight.rlim_cur = mapped + (uint64_t(256) << 20);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  dlc_session_t *session = nullptr;
  dlc_status_t s = dlc_session_create(module, "cpu", nullptr, &session);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(dlc_status_code(s), DLC_RESOURCE_EXHAUSTED);
  EXPECT_EQ(dlc_status_exit_code(s), 3);
  std::string message = describe(s);
  EXPECT_NE(message.find("cannot allocate the arena (1073741824 bytes) on device 'cpu': out of "
                         "memory for 1073741824 bytes: "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("bytes available (under the address-space limit (ulimit -v)"),
            std::string::npos)
      << message;

  ASSERT_EQ(dlc_session_create(module, "cpu", nullptr, &session), nullptr);
  std::vector<int64_t> shape{6};
  std::vector<float> av{1, 2, 3, 4, 5, 6}, bv(6, 1), cv(6);
  DLTensor a = tensor(av.data(), shape), b2 = tensor(bv.data(), shape),
           c = tensor(cv.data(), shape);
  const DLTensor *in[] = {&a, &b2};
  const DLTensor *out[] = {&c};
  ASSERT_EQ(dlc_session_run(session, in, 2, out, 1), nullptr);
  EXPECT_EQ(cv, (std::vector<float>{2, 3, 4, 5, 6, 7}));
  dlc_session_destroy(session);
  dlc_module_release(module);
#endif
}

//===----------------------------------------------------------------------===//
// Dynamic dimensions (module format 1.3)
//===----------------------------------------------------------------------===//

namespace {

/// The "dynamic" module (TestModules.h: x f32[2N, 3], s f32[N], b f32[3]
/// -> y f32[2N, 3], N in [1, 8]) through the C API.
class ApiDynamic : public ::testing::Test {
public:
  void SetUp() override { open("dynamic"); }
  void TearDown() override { close(); }
  void open(const std::string &name) {
    Bytes b = variant(name);
    ASSERT_EQ(dlc_module_load_memory(b.data(), b.size(), &module), nullptr);
    ASSERT_EQ(dlc_session_create(module, "cpu", nullptr, &session), nullptr);
  }
  void close() {
    dlc_session_destroy(session);
    dlc_module_release(module);
    session = nullptr;
    module = nullptr;
  }
  /// Tensors of N = n's rows (x, s, y with the given dimension 0 when not 0).
  void shapes(int64_t n, int64_t x0 = 0, int64_t s0 = 0, int64_t y0 = 0) {
    xShape = {x0 ? x0 : 2 * n, 3};
    sShape = {s0 ? s0 : n};
    yShape = {y0 ? y0 : 2 * n, 3};
    // Room for the largest dimension 0 a test gives, and a guard after y.
    x.assign(64 * 3, 0);
    s.assign(64, 0);
    y.assign(64 * 3, kGuard);
    for (int64_t i = 0; i < 2 * n * 3; ++i)
      x[i] = float(i % 5 + 1);
    for (int64_t i = 0; i < n; ++i)
      s[i] = float(i);
  }
  dlc_status_t run() {
    DLTensor tx = tensor(x.data(), xShape), ts = tensor(s.data(), sShape),
             tb = tensor(b.data(), bShape), ty = tensor(y.data(), yShape);
    const DLTensor *in[] = {&tx, &ts, &tb};
    const DLTensor *out[] = {&ty};
    return dlc_session_run(session, in, 3, out, 1);
  }
  ::testing::AssertionResult matches(int64_t n) const {
    for (int64_t i = 0; i < 2 * n * 3; ++i)
      if (y[i] != dlc::testing::dynamicReference(x, s, b, i))
        return ::testing::AssertionFailure() << "N = " << n << ": y[" << i << "] = " << y[i];
    for (size_t i = 2 * n * 3; i < y.size(); ++i)
      if (y[i] != kGuard)
        return ::testing::AssertionFailure() << "N = " << n << ": y[" << i << "] written";
    return ::testing::AssertionSuccess();
  }

  static constexpr float kGuard = -777;
  dlc_module_t *module = nullptr;
  dlc_session_t *session = nullptr;
  std::vector<int64_t> xShape, sShape, bShape{3}, yShape;
  std::vector<float> x, s, b{1, 2, 3}, y;
};

} // namespace

TEST_F(ApiDynamic, Queries) {
  ASSERT_EQ(dlc_module_dynamic_dim_count(module), 1u);
  const char *name = nullptr;
  int64_t min = 0, max = 0;
  ASSERT_EQ(dlc_module_dynamic_dim_info(module, 0, &name, &min, &max), nullptr);
  EXPECT_STREQ(name, "N");
  EXPECT_EQ(min, 1);
  EXPECT_EQ(max, 8);
  EXPECT_EQ(dlc_module_dynamic_dim_info(module, 0, nullptr, nullptr, nullptr), nullptr);
  EXPECT_NE(describe(dlc_module_dynamic_dim_info(module, 1, &name, &min, &max))
                .find("dynamic dimension index 1 is out of range (1)"),
            std::string::npos);
  EXPECT_EQ(dlc_module_input_dynamic_dim(module, 0), 0);
  EXPECT_EQ(dlc_module_input_dynamic_dim(module, 1), 0);
  EXPECT_EQ(dlc_module_input_dynamic_dim(module, 2), -1);
  EXPECT_EQ(dlc_module_input_dynamic_dim(module, 3), -1);
  EXPECT_EQ(dlc_module_output_dynamic_dim(module, 0), 0);
  EXPECT_EQ(dlc_module_output_dynamic_dim(nullptr, 0), -1);
  EXPECT_EQ(dlc_module_dynamic_dim_count(nullptr), 0u);
  // The signature reports the shapes at max.
  dlc_tensor_info_t info;
  ASSERT_EQ(dlc_module_input_info(module, 0, &info), nullptr);
  EXPECT_EQ(info.shape[0], 16);
  EXPECT_EQ(info.size_bytes, 16u * 3 * 4);
  // A static module has none.
  Bytes add = variant("add");
  dlc_module_t *m = nullptr;
  ASSERT_EQ(dlc_module_load_memory(add.data(), add.size(), &m), nullptr);
  EXPECT_EQ(dlc_module_dynamic_dim_count(m), 0u);
  EXPECT_EQ(dlc_module_input_dynamic_dim(m, 0), -1);
  dlc_module_release(m);
  // The C++ wrapper.
  Bytes b2 = variant("dynamic");
  dlc::Module wrapped = dlc::Module::loadMemory(b2.data(), b2.size());
  ASSERT_EQ(wrapped.dynamicDimCount(), 1u);
  EXPECT_EQ(wrapped.dynamicDim(0).name, "N");
  EXPECT_EQ(wrapped.dynamicDim(0).max, 8);
  EXPECT_EQ(wrapped.inputDynamicDim(1), 0);
  EXPECT_EQ(wrapped.outputDynamicDim(0), 0);
  EXPECT_THROW(wrapped.dynamicDim(1), dlc::Error);
}

TEST_F(ApiDynamic, RunsAtEveryNWritingOnlyItsRows) {
  for (const char *name : {"dynamic", "dynamic-unscaled", "dynamic-copy"}) {
    close();
    open(name);
    for (int64_t n : {1, 3, 8, 2}) {
      shapes(n);
      dlc_status_t st = run();
      ASSERT_EQ(st, nullptr) << name << ", N = " << n << ": " << describe(st);
      EXPECT_TRUE(matches(n)) << name;
    }
  }
}

TEST_F(ApiDynamic, ShapesOfNoOneNAreRefusedNamingTheTensorAndTheRange) {
  struct Case {
    int64_t n, x0, s0, y0;
    const char *message;
  };
  const Case cases[] = {
      {3, 5, 0, 0,
       "input 0 ('x'): dimension 0 is 5, not a multiple of 2 (the shape is [2 * N, 3] for N in "
       "[1, 8])"},
      {3, 18, 0, 0, "input 0 ('x'): dimension 0 is 18 = 2 * 9, but N = 9 is outside [1, 8] "
                    "(the shape is [2 * N, 3])"},
      {3, 0, 9, 0, "input 1 ('s'): dimension 0 is 9, but N = 9 is outside [1, 8] (the shape "
                   "is [N])"},
      {3, 0, 0, -2, "output 0 ('y'): dimension 0 is -2 = 2 * -1, but N = -1 is outside [1, 8]"},
      {1, 0, 0, 0, nullptr}, // (a valid run between the refusals)
      {3, 0, 4, 0,
       "input 1 ('s'): dimension 0 is 4, so N = 4, but input 0 ('x') has N = 3 (every dynamic "
       "input and output of a run has the same N)"},
      {3, 0, 0, 8, "output 0 ('y'): dimension 0 is 8, so N = 4, but input 0 ('x') has N = 3"},
  };
  for (const Case &c : cases) {
    shapes(c.n, c.x0, c.s0, c.y0);
    dlc_status_t st = run();
    if (!c.message) {
      EXPECT_EQ(st, nullptr) << describe(st);
      continue;
    }
    EXPECT_EQ(dlc_status_code(st), DLC_INVALID_ARGUMENT);
    std::string d = describe(st);
    EXPECT_NE(d.find(c.message), std::string::npos) << d;
  }
  // N = 0: no rows.
  shapes(1, 0, 0, 0);
  xShape[0] = 0;
  std::string d = describe(run());
  EXPECT_NE(d.find("input 0 ('x'): dimension 0 is 0 = 2 * 0, but N = 0 is outside [1, 8]"),
            std::string::npos)
      << d;
  // The other dimensions are the signature's.
  shapes(3);
  xShape[1] = 4;
  d = describe(run());
  EXPECT_NE(d.find("input 0 ('x'): shape [6, 4] is not [2 * N, 3] for N in [1, 8]"),
            std::string::npos)
      << d;
  // A static input keeps its shape.
  shapes(3);
  bShape = {6};
  d = describe(run());
  EXPECT_NE(d.find("input 2 ('b'): shape [6] is not [3]"), std::string::npos) << d;
}

// The overlap check sizes dynamic tensors at the run's N: an output right
// after N's rows of an input does not overlap it.
TEST_F(ApiDynamic, OutputsMayFollowTheGivenRows) {
  shapes(2);
  std::vector<float> both(2 * 2 * 3 * 2 + 16, kGuard);
  for (int i = 0; i < 12; ++i)
    both[i] = x[i];
  DLTensor tx = tensor(both.data(), xShape), ts = tensor(s.data(), sShape),
           tb = tensor(b.data(), bShape), ty = tensor(both.data() + 12, yShape);
  const DLTensor *in[] = {&tx, &ts, &tb};
  const DLTensor *out[] = {&ty};
  ASSERT_EQ(dlc_session_run(session, in, 3, out, 1), nullptr);
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(both[12 + i], dlc::testing::dynamicReference(x, s, b, i)) << i;
  EXPECT_EQ(both[24], kGuard);
  ty = tensor(both.data() + 11, yShape);
  std::string d = describe(dlc_session_run(session, in, 3, out, 1));
  EXPECT_NE(d.find("input 0 and output 0 overlap"), std::string::npos) << d;
}
