//===- DlcPython.cpp - dlc._dlc: the runtime's C API for Python -----------===//
//
// The extension under the `dlc` package (python/dlc/__init__.py): modules
// and sessions of runtime/api (dlc/runtime.h), with tensors passed by DLPack
// both ways. Inputs are used in place (any object with __dlpack__ or the
// buffer protocol, C-contiguous; nanobind makes a contiguous copy of one
// that is not); outputs are written by the runtime into fresh 64-byte
// aligned buffers handed to Python without a copy. The GIL is released while
// a session runs. Everything a user sees is in the Python package; these
// classes are its private handles.
//
//===----------------------------------------------------------------------===//

#include <dlc/runtime.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace {

/// dlc.Error: a runtime status as a Python exception, with the status's
/// name in `code` ("INVALID_MODULE", ...) and the dlc tools' exit code in
/// `exit_code`.
nb::handle errorType;

const char *codeName(dlc_status_code_t code) {
  switch (code) {
  case DLC_OK: return "OK";
  case DLC_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case DLC_INVALID_MODULE: return "INVALID_MODULE";
  case DLC_NOT_FOUND: return "NOT_FOUND";
  case DLC_UNAVAILABLE: return "UNAVAILABLE";
  case DLC_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
  case DLC_UNIMPLEMENTED: return "UNIMPLEMENTED";
  case DLC_INTERNAL: return "INTERNAL";
  case DLC_DATA_ERROR: return "DATA_ERROR";
  }
  return "UNKNOWN";
}

/// Frees `status` and raises it as dlc.Error.
[[noreturn]] void raise(dlc_status_t status) {
  std::string message = dlc_status_message(status);
  const char *code = codeName(dlc_status_code(status));
  int exitCode = dlc_status_exit_code(status);
  dlc_status_free(status);
  nb::object error = errorType(message);
  error.attr("code") = code;
  error.attr("exit_code") = exitCode;
  PyErr_SetObject(errorType.ptr(), error.ptr());
  throw nb::python_error();
}

void check(dlc_status_t status) {
  if (status)
    raise(status);
}

using Dtype = std::tuple<int, int, int>; // DLPack's (code, bits, lanes)
using Info = std::tuple<std::string, std::vector<int64_t>, Dtype, uint64_t>;

Info toInfo(const dlc_tensor_info_t &info) {
  return {info.name, std::vector<int64_t>(info.shape, info.shape + info.ndim),
          Dtype{info.dtype.code, info.dtype.bits, info.dtype.lanes}, info.size_bytes};
}

/// One loaded module (dlc_module_t, reference-counted by the runtime).
class Module {
public:
  explicit Module(dlc_module_t *module) : module_(module) {}
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module() { dlc_module_release(module_); }

  static Module *loadFile(const std::string &path) {
    dlc_module_t *module = nullptr;
    check(dlc_module_load_file(path.c_str(), &module));
    return new Module(module);
  }
  static Module *loadMemory(nb::bytes data) {
    dlc_module_t *module = nullptr;
    check(dlc_module_load_memory(data.c_str(), data.size(), &module));
    return new Module(module);
  }

  dlc_module_t *get() const { return module_; }
  std::string name() const { return dlc_module_name(module_); }

  std::vector<Info> inputs() const {
    return infos(dlc_module_input_count(module_), dlc_module_input_info);
  }
  std::vector<Info> outputs() const {
    return infos(dlc_module_output_count(module_), dlc_module_output_info);
  }
  std::vector<Info> state() const {
    return infos(dlc_module_state_count(module_), dlc_module_state_info);
  }
  /// (name, min, max) of each dimension chosen per run (format 1.3).
  std::vector<std::tuple<std::string, int64_t, int64_t>> dynamicDims() const {
    std::vector<std::tuple<std::string, int64_t, int64_t>> dims;
    for (size_t i = 0; i < dlc_module_dynamic_dim_count(module_); ++i) {
      const char *name = nullptr;
      int64_t min = 0, max = 0;
      check(dlc_module_dynamic_dim_info(module_, i, &name, &min, &max));
      dims.emplace_back(name ? name : "", min, max);
    }
    return dims;
  }

private:
  template <typename Query> std::vector<Info> infos(size_t count, Query query) const {
    std::vector<Info> result;
    for (size_t i = 0; i < count; ++i) {
      dlc_tensor_info_t info;
      check(query(module_, i, &info));
      result.push_back(toInfo(info));
    }
    return result;
  }

  dlc_module_t *module_;
};

/// An input or a state value: any DLPack producer or buffer, C-contiguous.
using InArray = nb::ndarray<nb::ro, nb::c_contig>;
/// A result: an array over memory this module allocated, with __dlpack__
/// and the buffer protocol (nanobind's nb_ndarray).
using OutArray = nb::ndarray<nb::array_api>;

/// The DLTensor the C API reads for `array`.
DLTensor toDLTensor(const InArray &array) {
  DLTensor t;
  std::memset(&t, 0, sizeof t);
  t.data = const_cast<void *>(array.data_handle());
  t.byte_offset = array.byte_offset();
  t.device.device_type = static_cast<DLDeviceType>(array.device_type());
  t.device.device_id = array.device_id();
  t.ndim = static_cast<int32_t>(array.ndim());
  t.dtype.code = array.dtype().code;
  t.dtype.bits = array.dtype().bits;
  t.dtype.lanes = array.dtype().lanes;
  t.shape = const_cast<int64_t *>(array.shape_ptr());
  t.strides = nullptr; // c_contig: compact row-major
  return t;
}

/// Host memory for a tensor of `info`, 64-byte aligned, zeroed, and the
/// DLTensor over it.
struct HostBuffer {
  void *data = nullptr;
  std::vector<size_t> shape;
  std::vector<int64_t> dims; ///< what tensor.shape points to
  DLTensor tensor;
};

/// `outer`: dimension 0 when it is not the info's (a dynamic output at the
/// run's N), else -1.
HostBuffer allocate(const dlc_tensor_info_t &info, int64_t outer = -1) {
  HostBuffer buffer;
  buffer.dims.assign(info.shape, info.shape + info.ndim);
  uint64_t sizeBytes = info.size_bytes;
  if (outer >= 0 && info.ndim > 0 && info.shape[0] > 0) {
    sizeBytes = sizeBytes / static_cast<uint64_t>(info.shape[0]) * static_cast<uint64_t>(outer);
    buffer.dims[0] = outer;
  }
  size_t bytes = (static_cast<size_t>(sizeBytes) + 63) / 64 * 64;
  buffer.data = std::aligned_alloc(64, bytes ? bytes : 64);
  if (!buffer.data)
    throw std::bad_alloc();
  std::memset(buffer.data, 0, bytes);
  buffer.shape.assign(buffer.dims.begin(), buffer.dims.end());
  std::memset(&buffer.tensor, 0, sizeof buffer.tensor);
  buffer.tensor.data = buffer.data;
  buffer.tensor.device.device_type = kDLCPU;
  buffer.tensor.ndim = info.ndim;
  buffer.tensor.dtype = info.dtype;
  buffer.tensor.shape = buffer.dims.data(); // heap memory: stays put when moved
  return buffer;
}

/// `buffer` as a Python array that owns (and at the end frees) its memory.
OutArray toArray(HostBuffer &buffer) {
  nb::capsule owner(buffer.data, [](void *p) noexcept { std::free(p); });
  void *data = buffer.data;
  buffer.data = nullptr;
  nb::dlpack::dtype dtype;
  dtype.code = buffer.tensor.dtype.code;
  dtype.bits = buffer.tensor.dtype.bits;
  dtype.lanes = buffer.tensor.dtype.lanes;
  return OutArray(data, buffer.shape.size(), buffer.shape.data(), owner, nullptr, dtype,
                  nb::device::cpu::value);
}

/// Buffers not (yet) handed to Python.
struct Buffers {
  std::vector<HostBuffer> list;
  ~Buffers() {
    for (HostBuffer &b : list)
      std::free(b.data);
  }
};

/// A session on a device (dlc_session_t). Runs on one session never overlap
/// (the runtime refuses them): a call from a second thread waits here.
class Session {
public:
  Session(const Module &module, const std::string &device, uint32_t numThreads,
          uint64_t maxMemoryBytes)
      : module_(module.get()) {
    dlc_session_options_t options;
    dlc_session_options_init(&options);
    options.num_threads = numThreads;
    options.max_memory_bytes = maxMemoryBytes;
    dlc_status_t status;
    {
      nb::gil_scoped_release release;
      status = dlc_session_create(module_, device.c_str(), &options, &session_);
    }
    check(status);
    device_ = device;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { dlc_session_destroy(session_); }

  const std::string &device() const { return device_; }

  std::vector<OutArray> run(const std::vector<InArray> &inputs) {
    size_t numOutputs = dlc_module_output_count(module_);
    std::vector<DLTensor> in;
    in.reserve(inputs.size());
    for (const InArray &a : inputs)
      in.push_back(toDLTensor(a));
    // A module for a range of N (format 1.3) runs at the N of the inputs'
    // rows; its dynamic outputs get that many rows (the runtime checks that
    // every input agrees).
    int64_t max = 0, n = 0;
    if (dlc_module_dynamic_dim_count(module_) > 0)
      check(dlc_module_dynamic_dim_info(module_, 0, nullptr, nullptr, &max));
    for (size_t i = 0; max > 0 && i < in.size() && i < dlc_module_input_count(module_); ++i) {
      dlc_tensor_info_t info;
      check(dlc_module_input_info(module_, i, &info));
      int64_t perN = info.ndim > 0 ? info.shape[0] / max : 0;
      if (dlc_module_input_dynamic_dim(module_, i) >= 0 && perN > 0 && in[i].ndim > 0 &&
          in[i].shape[0] % perN == 0) {
        n = in[i].shape[0] / perN;
        break;
      }
    }
    Buffers out;
    for (size_t i = 0; i < numOutputs; ++i) {
      dlc_tensor_info_t info;
      check(dlc_module_output_info(module_, i, &info));
      bool dynamic = n > 0 && dlc_module_output_dynamic_dim(module_, i) >= 0 && info.ndim > 0;
      out.list.push_back(allocate(info, dynamic ? info.shape[0] / max * n : -1));
    }
    std::vector<const DLTensor *> inPtrs, outPtrs;
    for (DLTensor &t : in)
      inPtrs.push_back(&t);
    for (HostBuffer &b : out.list)
      outPtrs.push_back(&b.tensor);
    dlc_status_t status;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      status = dlc_session_run(session_, inPtrs.data(), inPtrs.size(), outPtrs.data(),
                               outPtrs.size());
    }
    check(status);
    std::vector<OutArray> results;
    for (HostBuffer &b : out.list)
      results.push_back(toArray(b));
    return results;
  }

  OutArray readState(size_t index) {
    dlc_tensor_info_t info;
    check(dlc_module_state_info(module_, index, &info));
    Buffers out;
    out.list.push_back(allocate(info));
    dlc_status_t status;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      status = dlc_session_read_state(session_, index, &out.list[0].tensor);
    }
    check(status);
    return toArray(out.list[0]);
  }

  void writeState(size_t index, const InArray &value) {
    DLTensor t = toDLTensor(value);
    dlc_status_t status;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      status = dlc_session_write_state(session_, index, &t);
    }
    check(status);
  }

  void resetState() {
    dlc_status_t status;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      status = dlc_session_reset_state(session_);
    }
    check(status);
  }

  std::tuple<int32_t, int32_t> rank() const {
    int32_t rank = 0, worldSize = 1;
    check(dlc_session_rank(session_, &rank, &worldSize));
    return {rank, worldSize};
  }

private:
  dlc_module_t *module_; // kept alive by the session itself
  dlc_session_t *session_ = nullptr;
  std::string device_;
  std::mutex mutex_;
};

} // namespace

NB_MODULE(_dlc, m) {
  m.doc() = "dlc's runtime (dlc/runtime.h) for the dlc package: use `import dlc`.";

  nb::object error = nb::steal(PyErr_NewExceptionWithDoc(
      "dlc.Error",
      "An error from dlc's runtime. `code` names the status (INVALID_MODULE, "
      "INVALID_ARGUMENT, ...); `exit_code` is the exit code the dlc tools use for it.",
      PyExc_RuntimeError, nullptr));
  m.attr("Error") = error;
  errorType = error.release();

  m.def("runtime_version", [] { return std::string(dlc_runtime_version()); },
        "The runtime's version and its module format's, e.g. '0.1.0 (module format 1.2)'.");
  m.attr("API_VERSION") = DLC_RUNTIME_API_VERSION;

  nb::class_<Module>(m, "_Module")
      .def_static("load_file", &Module::loadFile, nb::arg("path"))
      .def_static("load_memory", &Module::loadMemory, nb::arg("data"))
      .def_prop_ro("name", &Module::name)
      .def_prop_ro("inputs", &Module::inputs)
      .def_prop_ro("outputs", &Module::outputs)
      .def_prop_ro("state", &Module::state)
      .def_prop_ro("dynamic_dims", &Module::dynamicDims);

  nb::class_<Session>(m, "_Session")
      .def(nb::init<const Module &, const std::string &, uint32_t, uint64_t>(),
           nb::arg("module"), nb::arg("device") = "cpu", nb::arg("num_threads") = 0,
           nb::arg("max_memory_bytes") = 0)
      .def_prop_ro("device", &Session::device)
      .def("run", &Session::run, nb::arg("inputs"))
      .def("read_state", &Session::readState, nb::arg("index"))
      .def("write_state", &Session::writeState, nb::arg("index"), nb::arg("value"))
      .def("reset_state", &Session::resetState)
      .def("rank", &Session::rank);
}
