//===- Runtime.cpp - The C API over the executor --------------------------===//
//
// Every entry point catches everything: no exception crosses the C boundary.
// DLPack tensors are checked here against the module's signature; the
// executor gets plain pointers.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.h"

#include "runtime/base/Log.h"
#include "runtime/executor/Session.h"
#include "runtime/format/ModuleReader.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>

using dlc::DType;
using dlc::format::TensorInfo;
using dlc::rt::Status;
using dlc::rt::StatusCode;
using dlc::rt::strCat;

struct dlc_status_s {
  dlc_status_code_t code;
  std::string message;
};

struct dlc_module_s {
  std::atomic<int> references{1};
  std::shared_ptr<const dlc::format::LoadedModule> module;
  std::string name;
};

struct dlc_session_s {
  std::unique_ptr<dlc::rt::Session> session;
  std::atomic<bool> busy{false};
  std::vector<const void *> inputs;
  std::vector<void *> outputs;
  std::unique_ptr<bool[]> inputOnDevice, outputOnDevice;
  int cudaOrdinal = -1; ///< the CUDA device, for kDLCUDA tensors; -1 on host-memory devices
  /// dlc_session_kernel_events' answer (filled by a const query).
  mutable std::vector<dlc_kernel_event_t> events;
};

namespace {

/// Returned when even a status cannot be allocated; dlc_status_free skips it.
dlc_status_s gOutOfMemory{DLC_RESOURCE_EXHAUSTED, "out of memory"};

dlc_status_t makeStatus(const Status &s) {
  if (s.ok())
    return nullptr;
  auto *out = new (std::nothrow) dlc_status_s;
  if (!out)
    return &gOutOfMemory;
  out->code = static_cast<dlc_status_code_t>(s.code());
  try {
    out->message = s.message();
  } catch (...) {
  }
  return out;
}

dlc_status_t makeStatus(StatusCode code, const char *message) {
  return makeStatus(Status(code, message));
}

/// Runs `body` (returning a Status) with every exception turned into one.
template <typename F> dlc_status_t guarded(F &&body) {
  try {
    return makeStatus(body());
  } catch (const std::bad_alloc &) {
    return &gOutOfMemory;
  } catch (const std::exception &e) {
    return makeStatus(StatusCode::kInternal, e.what());
  } catch (...) {
    return makeStatus(StatusCode::kInternal, "unknown exception");
  }
}

DLDataType toDLPack(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return {kDLFloat, 64, 1};
  case DType::F32:
    return {kDLFloat, 32, 1};
  case DType::F16:
    return {kDLFloat, 16, 1};
  case DType::BF16:
    return {kDLBfloat, 16, 1};
  case DType::I64:
    return {kDLInt, 64, 1};
  case DType::I32:
    return {kDLInt, 32, 1};
  case DType::I8:
    return {kDLInt, 8, 1};
  case DType::U8:
    return {kDLUInt, 8, 1};
  case DType::I1:
    return {DLC_DL_BOOL, 8, 1};
  }
  return {0, 0, 0};
}

bool dtypeMatches(DType dtype, DLDataType given) {
  DLDataType want = toDLPack(dtype);
  if (given.code == want.code && given.bits == want.bits && given.lanes == want.lanes)
    return true;
  return dtype == DType::I1 && given.code == kDLUInt && given.bits == 8 && given.lanes == 1;
}

std::string dlpackName(DLDataType t) {
  const char *code = t.code == kDLInt      ? "int"
                     : t.code == kDLUInt   ? "uint"
                     : t.code == kDLFloat  ? "float"
                     : t.code == kDLBfloat ? "bfloat"
                     : t.code == DLC_DL_BOOL ? "bool"
                                             : "code";
  std::string s = strCat(code, static_cast<int>(t.bits));
  if (t.code > DLC_DL_BOOL)
    s = strCat("code", static_cast<int>(t.code), "/", static_cast<int>(t.bits));
  if (t.lanes != 1)
    s += strCat("x", t.lanes);
  return s;
}

/// A run's dynamic dimension (module format 1.3) as dlc_session_run checks
/// the tensors against it: the N the first dynamic tensor gives, which
/// every other one must give too.
struct RunDim {
  const dlc::format::DynamicDimInfo *dim = nullptr; ///< null: a static module
  int64_t n = 0;                                    ///< 0 until a tensor gives it
  const char *firstKind = nullptr;                  ///< that tensor
  size_t firstIndex = 0;
  const TensorInfo *first = nullptr;
};

/// "[2 * N, 3]": a dynamic tensor's shape with its rows per N.
std::string dynamicShapeString(const TensorInfo &info, const dlc::format::DynamicDimInfo &dim) {
  const int64_t rows = info.shape[0] / dim.max;
  std::string s = rows == 1 ? strCat("[", dim.name) : strCat("[", rows, " * ", dim.name);
  for (size_t d = 1; d < info.shape.size(); ++d)
    s += strCat(", ", info.shape[d]);
  return s + "]";
}

/// Dimension 0 of a dynamic tensor: rows * N for one N in [min, max], that
/// of the other dynamic tensors of the run.
template <typename Who>
Status checkDynamicRows(const Who &who, const char *kind, size_t index, const TensorInfo &info,
                        int64_t given, RunDim *run) {
  const dlc::format::DynamicDimInfo &dim = *run->dim;
  const int64_t rows = info.shape[0] / dim.max;
  auto shape = [&] { return dynamicShapeString(info, dim); };
  if (given % rows != 0)
    return dlc::rt::invalidArgument(who(), ": dimension 0 is ", given, ", not a multiple of ",
                                    rows, " (the shape is ", shape(), " for ", dim.name, " in [",
                                    dim.min, ", ", dim.max, "])");
  const int64_t n = given / rows;
  if (n < dim.min || n > dim.max)
    return dlc::rt::invalidArgument(
        who(), ": dimension 0 is ", given, rows == 1 ? "" : strCat(" = ", rows, " * ", n), ", but ",
        dim.name, " = ", n, " is outside [", dim.min, ", ", dim.max, "] (the shape is ", shape(),
        ")");
  if (run->n && n != run->n)
    return dlc::rt::invalidArgument(
        who(), ": dimension 0 is ", given, ", so ", dim.name, " = ", n, ", but ", run->firstKind,
        " ", run->firstIndex, " ('", run->first->name, "') has ", dim.name, " = ", run->n,
        " (every dynamic input and output of a run has the same ", dim.name, ")");
  if (!run->n) {
    run->n = n;
    run->firstKind = kind;
    run->firstIndex = index;
    run->first = &info;
  }
  return dlc::rt::okStatus();
}

/// Checks one tensor against the signature; returns its data pointer and
/// whether it is device memory. `cudaOrdinal` is the session's CUDA device
/// (kDLCUDA tensors on it are accepted), or -1 for a host-memory device.
/// `run` (null for state tensors) takes a dynamic tensor's N; `bytes`
/// (may be null) receives the tensor's size at that N.
Status checkTensor(const char *kind, size_t index, const TensorInfo &info, const DLTensor *t,
                   int cudaOrdinal, void **data, bool *onDevice, RunDim *run = nullptr,
                   uint64_t *bytes = nullptr) {
  // Built only for an error: run() checks every tensor on every call.
  auto who = [&] { return strCat(kind, " ", index, " ('", info.name, "')"); };
  if (!t)
    return dlc::rt::invalidArgument(who(), ": tensor is NULL");
  *onDevice = t->device.device_type == kDLCUDA;
  if (*onDevice && cudaOrdinal < 0)
    return dlc::rt::invalidArgument(who(), ": a kDLCUDA tensor, but the session's device uses "
                                         "host memory (pass kDLCPU tensors)");
  if (*onDevice && t->device.device_id != cudaOrdinal)
    return dlc::rt::invalidArgument(who(), ": on CUDA device ", t->device.device_id,
                                    ", the session is on cuda:", cudaOrdinal);
  if (t->device.device_type != kDLCPU && !*onDevice)
    return dlc::rt::invalidArgument(who(), ": device type ", static_cast<int>(t->device.device_type),
                                    " is not kDLCPU", cudaOrdinal >= 0 ? " or kDLCUDA" : "");
  if (!dtypeMatches(info.dtype, t->dtype))
    return dlc::rt::invalidArgument(who(), ": dtype ", dlpackName(t->dtype), " is not ",
                                    dlc::dtypeName(info.dtype));
  if (t->ndim < 0 || static_cast<size_t>(t->ndim) != info.shape.size() ||
      (t->ndim > 0 && !t->shape))
    return dlc::rt::invalidArgument(who(), ": rank ", t->ndim, " is not ", info.shape.size());
  // A dynamic tensor's dimension 0 is its rows at the run's N; the rest
  // are the signature's.
  const bool dynamic = run && run->dim && info.dynamicDim >= 0;
  for (size_t d = dynamic ? 1 : 0; d < info.shape.size(); ++d)
    if (t->shape[d] != info.shape[d])
      return dlc::rt::invalidArgument(
          who(), ": shape ", dlc::format::shapeString(t->shape, info.shape.size()), " is not ",
          dynamic ? strCat(dynamicShapeString(info, *run->dim), " for ", run->dim->name, " in [",
                           run->dim->min, ", ", run->dim->max, "]")
                  : dlc::format::shapeString(info.shape.data(), info.shape.size()));
  uint64_t size = info.bytes;
  if (dynamic) {
    DLC_RETURN_IF_ERROR(checkDynamicRows(who, kind, index, info, t->shape[0], run));
    size = info.bytesAt(run->n, run->dim->max);
  }
  if (t->strides) {
    int64_t expected = 1;
    for (size_t d = info.shape.size(); d-- > 0;) {
      if (t->shape[d] != 1 && t->strides[d] != expected)
        return dlc::rt::invalidArgument(
            who(), ": strides ", dlc::format::shapeString(t->strides, info.shape.size()),
            " are not compact row-major");
      expected *= t->shape[d];
    }
  }
  if (!t->data && size != 0)
    return dlc::rt::invalidArgument(who(), ": data is NULL");
  if (bytes)
    *bytes = size;
  *data = t->data ? static_cast<uint8_t *>(t->data) + t->byte_offset : nullptr;
  return dlc::rt::okStatus();
}

void describe(const TensorInfo &info, dlc_tensor_info_t *out) {
  out->name = info.name.c_str();
  out->dtype = toDLPack(info.dtype);
  out->ndim = static_cast<int32_t>(info.shape.size());
  out->shape = info.shape.data();
  out->size_bytes = info.bytes;
}

Status tensorInfo(const dlc_module_t *module, size_t index, bool input,
                  dlc_tensor_info_t *out) {
  if (!module || !out)
    return dlc::rt::invalidArgument("module or out_info is NULL");
  const auto &list = input ? module->module->inputs() : module->module->outputs();
  if (index >= list.size())
    return dlc::rt::invalidArgument(input ? "input" : "output", " index ", index,
                                    " is out of range (", list.size(), ")");
  describe(list[index], out);
  return dlc::rt::okStatus();
}

/// Checks `t` against state tensor `index` of the session's module and
/// copies it in or out (on a device without host memory, device tensors go
/// through a host copy).
Status transferState(dlc_session_t *session, size_t index, const DLTensor *t, bool read) {
  if (!session)
    return dlc::rt::invalidArgument("session is NULL");
  const auto &state = session->session->module().state();
  if (index >= state.size())
    return dlc::rt::invalidArgument("state index ", index, " is out of range (",
                                    state.size(), " state tensors)");
  void *data = nullptr;
  bool onDevice = false;
  DLC_RETURN_IF_ERROR(checkTensor("state", index, state[index], t, session->cudaOrdinal,
                                  &data, &onDevice));
  uint32_t i = static_cast<uint32_t>(index);
  return read ? session->session->readState(i, data) : session->session->writeState(i, data);
}

} // namespace

extern "C" {

dlc_status_code_t dlc_status_code(dlc_status_t status) {
  return status ? status->code : DLC_OK;
}

const char *dlc_status_message(dlc_status_t status) {
  return status ? status->message.c_str() : "";
}

int dlc_status_exit_code(dlc_status_t status) {
  switch (dlc_status_code(status)) {
  case DLC_OK:
    return 0;
  case DLC_INVALID_ARGUMENT:
  case DLC_INVALID_MODULE:
  case DLC_NOT_FOUND:
    return 2;
  case DLC_UNAVAILABLE:
  case DLC_RESOURCE_EXHAUSTED:
  case DLC_UNIMPLEMENTED:
  case DLC_DATA_ERROR:
    return 3;
  default:
    return 70;
  }
}

void dlc_status_free(dlc_status_t status) {
  if (status != &gOutOfMemory)
    delete status;
}

const char *dlc_runtime_version(void) { return "0.1.0 (module format 1.5)"; }

namespace {
/// The embedder's callback, called through a trampoline (the C type takes a
/// dlc_log_level_t, the runtime's an int).
struct CLogCallback {
  dlc_log_callback_t callback = nullptr;
  void *user = nullptr;
};
CLogCallback gCLog;
std::mutex gCLogMutex;

void logTrampoline(void *user, int level, const char *message) {
  const auto *c = static_cast<const CLogCallback *>(user);
  c->callback(c->user, static_cast<dlc_log_level_t>(level), message);
}
} // namespace

void dlc_set_log_callback(dlc_log_callback_t callback, void *user_data) {
  std::lock_guard<std::mutex> lock(gCLogMutex);
  // Unset first: when this returns, no call of the old callback is running,
  // so gCLog can change.
  dlc::rt::setLogCallback(nullptr, nullptr);
  gCLog.callback = callback;
  gCLog.user = user_data;
  if (callback)
    dlc::rt::setLogCallback(logTrampoline, &gCLog);
}

static dlc_status_t finishLoad(std::shared_ptr<const dlc::format::LoadedModule> loaded,
                               dlc_module_t **out) {
  auto *m = new dlc_module_s;
  m->module = std::move(loaded);
  if (const auto *name = m->module->root().name())
    m->name = name->str();
  *out = m;
  return nullptr;
}

dlc_status_t dlc_module_load_file(const char *path, dlc_module_t **out_module) {
  if (!path || !out_module)
    return makeStatus(StatusCode::kInvalidArgument, "dlc_module_load_file: path or out_module is NULL");
  *out_module = nullptr;
  std::shared_ptr<const dlc::format::LoadedModule> loaded;
  dlc_status_t s = guarded([&] { return dlc::format::readModuleFile(path, &loaded); });
  if (s)
    return s;
  try {
    return finishLoad(std::move(loaded), out_module);
  } catch (...) {
    return &gOutOfMemory;
  }
}

dlc_status_t dlc_module_load_memory(const void *data, size_t size, dlc_module_t **out_module) {
  if ((!data && size) || !out_module)
    return makeStatus(StatusCode::kInvalidArgument,
                      "dlc_module_load_memory: data or out_module is NULL");
  *out_module = nullptr;
  std::shared_ptr<const dlc::format::LoadedModule> loaded;
  dlc_status_t s = guarded([&] {
    return dlc::format::readModuleMemory(
        dlc::rt::ByteSpan(static_cast<const uint8_t *>(data), size), &loaded);
  });
  if (s)
    return s;
  try {
    return finishLoad(std::move(loaded), out_module);
  } catch (...) {
    return &gOutOfMemory;
  }
}

void dlc_module_retain(dlc_module_t *module) {
  if (module)
    module->references.fetch_add(1, std::memory_order_relaxed);
}

void dlc_module_release(dlc_module_t *module) {
  if (module && module->references.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete module;
}

const char *dlc_module_name(const dlc_module_t *module) {
  return module ? module->name.c_str() : "";
}

size_t dlc_module_input_count(const dlc_module_t *module) {
  return module ? module->module->inputs().size() : 0;
}

size_t dlc_module_output_count(const dlc_module_t *module) {
  return module ? module->module->outputs().size() : 0;
}

dlc_status_t dlc_module_input_info(const dlc_module_t *module, size_t index,
                                   dlc_tensor_info_t *out_info) {
  return guarded([&] { return tensorInfo(module, index, true, out_info); });
}

dlc_status_t dlc_module_output_info(const dlc_module_t *module, size_t index,
                                    dlc_tensor_info_t *out_info) {
  return guarded([&] { return tensorInfo(module, index, false, out_info); });
}

size_t dlc_module_dynamic_dim_count(const dlc_module_t *module) {
  return module ? module->module->dynamicDims().size() : 0;
}

dlc_status_t dlc_module_dynamic_dim_info(const dlc_module_t *module, size_t index,
                                         const char **name, int64_t *min, int64_t *max) {
  return guarded([&]() -> Status {
    if (!module)
      return dlc::rt::invalidArgument("module is NULL");
    const auto &dims = module->module->dynamicDims();
    if (index >= dims.size())
      return dlc::rt::invalidArgument("dynamic dimension index ", index, " is out of range (",
                                      dims.size(), ")");
    if (name)
      *name = dims[index].name.c_str();
    if (min)
      *min = dims[index].min;
    if (max)
      *max = dims[index].max;
    return dlc::rt::okStatus();
  });
}

int32_t dlc_module_input_dynamic_dim(const dlc_module_t *module, size_t index) {
  if (!module || index >= module->module->inputs().size())
    return -1;
  return module->module->inputs()[index].dynamicDim;
}

int32_t dlc_module_output_dynamic_dim(const dlc_module_t *module, size_t index) {
  if (!module || index >= module->module->outputs().size())
    return -1;
  return module->module->outputs()[index].dynamicDim;
}

void dlc_session_options_init(dlc_session_options_t *options) {
  if (!options)
    return;
  options->struct_size = sizeof(dlc_session_options_t);
  options->num_threads = 0;
  options->max_memory_bytes = 0;
}

dlc_status_t dlc_session_create(dlc_module_t *module, const char *device,
                                const dlc_session_options_t *options,
                                dlc_session_t **out_session) {
  if (!module || !device || !out_session)
    return makeStatus(StatusCode::kInvalidArgument,
                      "dlc_session_create: module, device or out_session is NULL");
  *out_session = nullptr;
  return guarded([&]() -> Status {
    dlc::rt::SessionOptions opts;
    if (options) {
      if (options->struct_size < sizeof(dlc_session_options_t))
        return dlc::rt::invalidArgument("dlc_session_options_t.struct_size is ",
                                        options->struct_size, "; call dlc_session_options_init");
      opts.device.numThreads = options->num_threads;
      opts.device.maxMemoryBytes = options->max_memory_bytes;
    }
    auto session = std::make_unique<dlc_session_s>();
    DLC_RETURN_IF_ERROR(
        dlc::rt::Session::create(module->module, device, opts, &session->session));
    // "cuda:N" (a device without host memory) accepts kDLCUDA tensors on N.
    const std::string &name = session->session->device().name();
    if (!session->session->device().sharesHostMemory() && name.rfind("cuda:", 0) == 0)
      session->cudaOrdinal = std::atoi(name.c_str() + 5);
    *out_session = session.release();
    return dlc::rt::okStatus();
  });
}

void dlc_session_destroy(dlc_session_t *session) { delete session; }

size_t dlc_module_state_count(const dlc_module_t *module) {
  return module ? module->module->state().size() : 0;
}

dlc_status_t dlc_module_state_info(const dlc_module_t *module, size_t index,
                                   dlc_tensor_info_t *out_info) {
  return guarded([&]() -> Status {
    if (!module || !out_info)
      return dlc::rt::invalidArgument("module or out_info is NULL");
    const auto &state = module->module->state();
    if (index >= state.size())
      return dlc::rt::invalidArgument("state index ", index, " is out of range (",
                                      state.size(), ")");
    describe(state[index], out_info);
    return dlc::rt::okStatus();
  });
}

dlc_status_t dlc_module_state_index(const dlc_module_t *module, const char *name,
                                    size_t *out_index) {
  return guarded([&]() -> Status {
    if (!module || !name || !out_index)
      return dlc::rt::invalidArgument("module, name or out_index is NULL");
    const auto &state = module->module->state();
    std::string names;
    for (size_t i = 0; i < state.size(); ++i) {
      if (state[i].name == name) {
        *out_index = i;
        return dlc::rt::okStatus();
      }
      names += (i ? ", " : "") + state[i].name;
    }
    return dlc::rt::invalidArgument("the module has no state tensor '", name, "' (",
                                    state.empty() ? "it has no state" : "its state: " + names,
                                    ")");
  });
}

dlc_status_t dlc_session_read_state(dlc_session_t *session, size_t index, const DLTensor *out) {
  return guarded([&] { return transferState(session, index, out, true); });
}

dlc_status_t dlc_session_write_state(dlc_session_t *session, size_t index,
                                     const DLTensor *value) {
  return guarded([&] { return transferState(session, index, value, false); });
}

dlc_status_t dlc_session_reset_state(dlc_session_t *session) {
  return guarded([&]() -> Status {
    if (!session)
      return dlc::rt::invalidArgument("session is NULL");
    return session->session->resetState();
  });
}

dlc_status_t dlc_session_rank(const dlc_session_t *session, int32_t *rank,
                              int32_t *world_size) {
  return guarded([&]() -> Status {
    if (!session)
      return dlc::rt::invalidArgument("session is NULL");
    if (rank)
      *rank = session->session->rank();
    if (world_size)
      *world_size = session->session->worldSize();
    return dlc::rt::okStatus();
  });
}

dlc_status_t dlc_session_collective_seconds(const dlc_session_t *session, double *busy_seconds,
                                            double *waited_seconds) {
  return guarded([&]() -> Status {
    if (!session)
      return dlc::rt::invalidArgument("session is NULL");
    if (busy_seconds)
      *busy_seconds = session->session->collectiveSeconds();
    if (waited_seconds)
      *waited_seconds = session->session->collectiveWaitSeconds();
    return dlc::rt::okStatus();
  });
}

dlc_status_t dlc_session_enable_kernel_timing(dlc_session_t *session) {
  return guarded([&]() -> Status {
    if (!session)
      return dlc::rt::invalidArgument("session is NULL");
    return session->session->enableKernelTiming();
  });
}

dlc_status_t dlc_session_kernel_count(const dlc_session_t *session, size_t *count) {
  return guarded([&]() -> Status {
    if (!session || !count)
      return dlc::rt::invalidArgument("session or count is NULL");
    *count = session->session->kernelTimes().size();
    return dlc::rt::okStatus();
  });
}

dlc_status_t dlc_session_kernel_time(const dlc_session_t *session, size_t index,
                                     const char **name, uint64_t *calls, double *seconds) {
  return guarded([&]() -> Status {
    if (!session)
      return dlc::rt::invalidArgument("session is NULL");
    const auto &times = session->session->kernelTimes();
    if (index >= times.size())
      return dlc::rt::invalidArgument("kernel index ", index, " is not below the session's ",
                                      times.size(), " kernels");
    if (name)
      *name = times[index].name.c_str();
    if (calls)
      *calls = times[index].calls;
    if (seconds)
      *seconds = times[index].seconds;
    return dlc::rt::okStatus();
  });
}

dlc_status_t dlc_session_kernel_events(const dlc_session_t *session,
                                       const dlc_kernel_event_t **events, size_t *count) {
  return guarded([&]() -> Status {
    if (!session || !events || !count)
      return dlc::rt::invalidArgument("session, events or count is NULL");
    static_assert(sizeof(dlc_kernel_event_t) == 24, "dlc_kernel_event_t's layout");
    const auto &recorded = session->session->kernelEvents();
    session->events.resize(recorded.size());
    for (size_t i = 0; i < recorded.size(); ++i)
      session->events[i] = {recorded[i].kernel, 0, recorded[i].startNs, recorded[i].endNs};
    *events = session->events.data();
    *count = session->events.size();
    return dlc::rt::okStatus();
  });
}

dlc_status_t dlc_session_memory(const dlc_session_t *session, uint64_t *arena_bytes,
                                uint64_t *weight_bytes, uint64_t *state_bytes) {
  return guarded([&]() -> Status {
    if (!session)
      return dlc::rt::invalidArgument("session is NULL");
    const dlc::rt::Session &s = *session->session;
    if (arena_bytes)
      *arena_bytes = s.arenaSize();
    if (weight_bytes)
      *weight_bytes = s.weightBytes();
    if (state_bytes) {
      uint64_t total = 0;
      for (const auto &state : s.module().state())
        total += state.bytes;
      *state_bytes = total;
    }
    return dlc::rt::okStatus();
  });
}

dlc_status_t dlc_session_run(dlc_session_t *session, const DLTensor *const *inputs,
                             size_t num_inputs, const DLTensor *const *outputs,
                             size_t num_outputs) {
  if (!session)
    return makeStatus(StatusCode::kInvalidArgument, "dlc_session_run: session is NULL");
  if (session->busy.exchange(true, std::memory_order_acquire))
    return makeStatus(StatusCode::kInvalidArgument,
                      "dlc_session_run: the session is already running on another thread "
                      "(a session is used by one thread at a time)");
  dlc_status_t result = guarded([&]() -> Status {
    const dlc::format::LoadedModule &m = session->session->module();
    if (num_inputs != m.inputs().size() || num_outputs != m.outputs().size())
      return dlc::rt::invalidArgument("dlc_session_run: ", num_inputs, " inputs and ",
                                      num_outputs, " outputs given; the module takes ",
                                      m.inputs().size(), " and returns ", m.outputs().size());
    if ((num_inputs && !inputs) || (num_outputs && !outputs))
      return dlc::rt::invalidArgument("dlc_session_run: inputs or outputs is NULL");
    session->inputs.resize(num_inputs);
    session->outputs.resize(num_outputs);
    session->inputOnDevice.reset(new bool[num_inputs + 1]);
    session->outputOnDevice.reset(new bool[num_outputs + 1]);
    // Byte ranges, to refuse outputs that overlap anything.
    struct Range {
      uintptr_t begin, end;
      bool output;
      size_t index;
    };
    std::vector<Range> ranges;
    // Format 1.3: dynamic tensors give the run's N by their dimension 0.
    RunDim run;
    if (!m.dynamicDims().empty())
      run.dim = &m.dynamicDims()[0];
    for (size_t i = 0; i < num_inputs; ++i) {
      void *p = nullptr;
      uint64_t bytes = 0;
      DLC_RETURN_IF_ERROR(checkTensor("input", i, m.inputs()[i], inputs[i],
                                      session->cudaOrdinal, &p, &session->inputOnDevice[i], &run,
                                      &bytes));
      session->inputs[i] = p;
      uintptr_t b = reinterpret_cast<uintptr_t>(p);
      if (bytes)
        ranges.push_back({b, b + bytes, false, i});
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      void *p = nullptr;
      uint64_t bytes = 0;
      DLC_RETURN_IF_ERROR(checkTensor("output", i, m.outputs()[i], outputs[i],
                                      session->cudaOrdinal, &p, &session->outputOnDevice[i], &run,
                                      &bytes));
      session->outputs[i] = p;
      uintptr_t b = reinterpret_cast<uintptr_t>(p);
      if (bytes)
        ranges.push_back({b, b + bytes, true, i});
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const Range &a, const Range &b) { return a.begin < b.begin; });
    // Sweep by start: a range starting before the furthest end seen so far
    // overlaps the range that reached it; that is an error when either is an
    // output (inputs may share memory).
    const Range *furthest = nullptr;
    for (const Range &r : ranges) {
      if (furthest && r.begin < furthest->end && (r.output || furthest->output))
        return dlc::rt::invalidArgument(
            "dlc_session_run: ", furthest->output ? "output " : "input ", furthest->index,
            " and ", r.output ? "output " : "input ", r.index,
            " overlap; outputs may not overlap anything");
      if (!furthest || r.end > furthest->end)
        furthest = &r;
    }
    // A module whose dynamic dimension no tensor carries runs at its max.
    return session->session->run(session->inputs.data(), num_inputs, session->outputs.data(),
                                  num_outputs, session->inputOnDevice.get(),
                                  session->outputOnDevice.get(), run.n);
  });
  session->busy.store(false, std::memory_order_release);
  return result;
}

} // extern "C"
