"""dlc's runtime C API (runtime/api/include/dlc/runtime.h) through ctypes:
a module's session on a device, run on memory given by address (numpy
arrays, torch tensors), in DLPack's structs. For tests that need what the
command line cannot give (a caller's misaligned view) and for the GPU
checks (bench/gpu/check_gpu.py, which runs dlc's kernels in PyTorch's
process); bench/gpu/prepare.sh copies it into the GPU bundle."""
import ctypes

KDL_CPU, KDL_CUDA = 1, 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", DLDataType), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("size_bytes", ctypes.c_uint64)]


class Runtime:
    """libdlc_runtime.so, its functions typed."""

    def __init__(self, path):
        lib = self.lib = ctypes.CDLL(path)
        p, size = ctypes.c_void_p, ctypes.c_size_t
        for name, res, args in (
                ("dlc_module_load_file", p, [ctypes.c_char_p, ctypes.POINTER(p)]),
                ("dlc_module_input_count", size, [p]),
                ("dlc_module_output_count", size, [p]),
                ("dlc_module_input_info", p, [p, size, ctypes.POINTER(TensorInfo)]),
                ("dlc_module_output_info", p, [p, size, ctypes.POINTER(TensorInfo)]),
                ("dlc_session_create", p, [p, ctypes.c_char_p, p, ctypes.POINTER(p)]),
                ("dlc_session_run", p, [p, p, size, p, size]),
                ("dlc_module_state_count", size, [p]),
                ("dlc_module_state_info", p, [p, size, ctypes.POINTER(TensorInfo)]),
                ("dlc_session_read_state", p, [p, size, ctypes.POINTER(DLTensor)]),
                ("dlc_session_reset_state", p, [p]),
                ("dlc_session_destroy", None, [p]),
                ("dlc_status_message", ctypes.c_char_p, [p])):
            getattr(lib, name).restype = res
            getattr(lib, name).argtypes = args

    LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)

    def on_log(self, fn):
        """Calls fn(level, message) for each runtime log message (levels 0-3:
        error, warning, info, debug); the callback is kept alive here."""
        self._log = self.LOG_CALLBACK(lambda _, level, message: fn(level, message.decode()))
        self.lib.dlc_set_log_callback.restype = None
        self.lib.dlc_set_log_callback.argtypes = [self.LOG_CALLBACK, ctypes.c_void_p]
        self.lib.dlc_set_log_callback(self._log, None)

    def check(self, status, what=""):
        if status:
            raise RuntimeError(f"{what}: {self.lib.dlc_status_message(status).decode()}")


class Session:
    """A session of module `path` on `device` ("cpu", "cuda-emu", "cuda:0").
    inputs/outputs: (name, shape, DLDataType) per tensor."""

    def __init__(self, runtime, path, device):
        self.runtime, lib = runtime, runtime.lib
        module, session = ctypes.c_void_p(), ctypes.c_void_p()
        runtime.check(lib.dlc_module_load_file(path.encode(), ctypes.byref(module)), path)
        runtime.check(lib.dlc_session_create(module, device.encode(), None,
                                             ctypes.byref(session)), path)
        self.module, self.session, self.path = module, session, path

        def infos(count, getter):
            out = []
            for i in range(count(module)):
                info = TensorInfo()
                runtime.check(getter(module, i, ctypes.byref(info)), path)
                out.append((info.name.decode(), tuple(info.shape[k] for k in range(info.ndim)),
                            info.dtype))
            return out
        self.inputs = infos(lib.dlc_module_input_count, lib.dlc_module_input_info)
        self.outputs = infos(lib.dlc_module_output_count, lib.dlc_module_output_info)
        self.state = infos(lib.dlc_module_state_count, lib.dlc_module_state_info)

    def read_state(self, index, address):
        """Copies state tensor `index` into host memory at `address` (compact,
        the module's shape and dtype)."""
        _, shape, dtype = self.state[index]
        dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        t = DLTensor(address, DLDevice(KDL_CPU, 0), len(shape), dtype, dims, None, 0)
        self.runtime.check(self.runtime.lib.dlc_session_read_state(
            self.session, index, ctypes.byref(t)), self.path)

    def reset_state(self):
        self.runtime.check(self.runtime.lib.dlc_session_reset_state(self.session), self.path)

    def run(self, inputs, outputs, device_type=KDL_CPU):
        """One run; `inputs` and `outputs` are data addresses, in the
        module's order, of compact row-major tensors of the module's shapes
        on `device_type` (KDL_CPU, or KDL_CUDA for device 0)."""
        keep = []

        def tensors(addresses, infos):
            array = (ctypes.POINTER(DLTensor) * len(addresses))()
            for i, (address, (_, shape, dtype)) in enumerate(zip(addresses, infos)):
                dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
                t = DLTensor(address, DLDevice(device_type, 0), len(shape), dtype, dims, None, 0)
                keep.append((dims, t))
                array[i] = ctypes.pointer(t)
            return array
        lib = self.runtime.lib
        self.runtime.check(lib.dlc_session_run(self.session, tensors(inputs, self.inputs),
                                               len(inputs), tensors(outputs, self.outputs),
                                               len(outputs)), self.path)

    def close(self):
        self.runtime.lib.dlc_session_destroy(self.session)
