"""dlc: compile deep-learning models (.dlg, ONNX) and run them, from Python.

    import dlc, numpy as np
    mlp = dlc.compile("examples/mnist_mlp.dlg", dims={"N": 4})   # a Module
    logits = mlp(np.zeros((4, 784), np.float32))                 # a NumPy array
    mlp.save("mlp.dlcm"); mlp = dlc.load("mlp.dlcm")

A Module is a compiled model (the bytes of a .dlcm file). Calling it runs it
on the CPU in a session it keeps; `module.session(device=...)` makes others
("cpu", "cuda:N", "cuda-emu"). Inputs are taken positionally or by name, as
any object with __dlpack__ (NumPy, PyTorch, JAX arrays) or the buffer
protocol, and used in place when C-contiguous; outputs are NumPy arrays over
the memory the runtime wrote (no copy), or DLPack-capable arrays where NumPy
has no such dtype (bfloat16). docs/python.md has the rest.
"""

import os as _os

from . import _dlc
from ._dlc import Error, runtime_version
from ._compile import CompileError, compile, find_compiler

__all__ = ["CompileError", "Error", "Module", "Session", "TensorInfo", "compile",
           "find_compiler", "load", "runtime_version"]
__version__ = "0.1.0"

# DLPack's type codes (kDLInt, kDLUInt, kDLFloat, kDLBfloat, bool).
_DTYPE_NAMES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
                (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
                (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
                (4, 16): "bfloat16", (6, 8): "bool"}


class TensorInfo:
    """An input's, output's or state tensor's name, shape and dtype.

    dtype is NumPy's name for it ("float32", "int32", "bool", ...;
    "bfloat16", which NumPy lacks).
    """

    __slots__ = ("name", "shape", "dtype", "nbytes")

    def __init__(self, info):
        name, shape, (code, bits, lanes), nbytes = info
        self.name = name
        self.shape = tuple(shape)
        self.dtype = _DTYPE_NAMES.get((code, bits), "dlpack(%d,%d,%d)" % (code, bits, lanes))
        self.nbytes = nbytes

    def __repr__(self):
        return "TensorInfo(%r, shape=%r, dtype=%r)" % (self.name, self.shape, self.dtype)

    def __eq__(self, other):
        return (isinstance(other, TensorInfo) and
                (self.name, self.shape, self.dtype) == (other.name, other.shape, other.dtype))


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _to_result(array, info):
    """A NumPy array over the runtime's buffer where NumPy has the dtype;
    else (bfloat16, or no NumPy) the DLPack array itself."""
    np = _numpy()
    if np is None or info.dtype == "bfloat16":
        return array
    return np.from_dlpack(array)


def _as_input(value, info):
    """`value` as the extension takes it: as is when it speaks DLPack or the
    buffer protocol; a Python scalar or list becomes an array of the input's
    dtype."""
    if hasattr(value, "__dlpack__"):
        return value
    try:
        memoryview(value)
        return value
    except TypeError:
        pass
    np = _numpy()
    if np is None:
        raise TypeError("input '%s': expected an array (DLPack or buffer), got %s"
                        % (info.name, type(value).__name__))
    return np.asarray(value, dtype=info.dtype)


class Session:
    """The module on one device, with its own memory, threads and state.

    Calls on one session run one at a time (a second thread waits).
    """

    def __init__(self, module, device="cpu", threads=0, max_memory_bytes=0):
        self.module = module
        self._session = _dlc._Session(module._handle, device, threads, max_memory_bytes)

    @property
    def device(self):
        return self._session.device

    @property
    def rank(self):
        """(rank, world size) of this process for a module compiled for a mesh;
        (0, 1) otherwise."""
        return self._session.rank()

    def _inputs(self, args, kwargs):
        infos = self.module.inputs
        if len(args) > len(infos):
            raise TypeError("%s takes %d inputs (%s), got %d" % (
                self.module._what(), len(infos), ", ".join(i.name for i in infos), len(args)))
        given = dict(zip((i.name for i in infos), args))
        for name, value in kwargs.items():
            if name not in (i.name for i in infos):
                raise TypeError("%s has no input '%s'; its inputs: %s" % (
                    self.module._what(), name, ", ".join(i.name for i in infos)))
            if name in given:
                raise TypeError("input '%s' given twice" % name)
            given[name] = value
        missing = [i.name for i in infos if i.name not in given]
        if missing:
            raise TypeError("%s: missing input%s %s" % (
                self.module._what(), "s" if len(missing) > 1 else "", ", ".join(missing)))
        return [_as_input(given[i.name], i) for i in infos]

    def run(self, *args, **kwargs):
        """The outputs as a dict, by name."""
        results = self._session.run(self._inputs(args, kwargs))
        return {info.name: _to_result(r, info) for info, r in zip(self.module.outputs, results)}

    def __call__(self, *args, **kwargs):
        """The output, or a tuple of the outputs in order when there are several."""
        results = [_to_result(r, info) for info, r in
                   zip(self.module.outputs, self._session.run(self._inputs(args, kwargs)))]
        return results[0] if len(results) == 1 else tuple(results)

    # State (a training module's parameters and optimizer moments).
    def _state_index(self, name):
        for k, info in enumerate(self.module.state):
            if info.name == name:
                return k
        raise KeyError("%s has no state tensor '%s'" % (self.module._what(), name))

    def read_state(self, name):
        """A copy of state tensor `name`."""
        index = self._state_index(name)
        return _to_result(self._session.read_state(index), self.module.state[index])

    def write_state(self, name, value):
        index = self._state_index(name)
        self._session.write_state(index, _as_input(value, self.module.state[index]))

    def state_dict(self):
        return {info.name: self.read_state(info.name) for info in self.module.state}

    def load_state_dict(self, values):
        for name, value in values.items():
            self.write_state(name, value)

    def reset_state(self):
        self._session.reset_state()


class Module:
    """A compiled model: its signature, its bytes, and sessions to run it."""

    def __init__(self, handle, data=None, path=None):
        self._handle = handle
        self._data = data
        self._path = path
        self._default = None
        self.inputs = [TensorInfo(i) for i in handle.inputs]
        self.outputs = [TensorInfo(i) for i in handle.outputs]
        self.state = [TensorInfo(i) for i in handle.state]
        # {name: (min, max)} of a module compiled for a range of sizes
        # (dlc.compile(..., dims={"N": (1, 64)})): it runs any N in it, the
        # inputs' rows choosing; `inputs`/`outputs` give the shapes at max.
        self.dynamic_dims = {name: (lo, hi) for name, lo, hi in handle.dynamic_dims}

    @property
    def name(self):
        return self._handle.name

    def _what(self):
        return "module '%s'" % self.name

    def session(self, device="cpu", threads=0, max_memory_bytes=0):
        """A new session: device "cpu", "cuda:N" or "cuda-emu"; threads 0 for
        the runtime's default."""
        return Session(self, device, threads, max_memory_bytes)

    def __call__(self, *args, **kwargs):
        """Runs on the module's own CPU session (made on the first call)."""
        if self._default is None:
            self._default = Session(self)
        return self._default(*args, **kwargs)

    def serialize(self):
        """The .dlcm bytes."""
        if self._data is None:
            with open(self._path, "rb") as f:
                return f.read()
        return self._data

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.serialize())

    def __repr__(self):
        return "<dlc.Module '%s' inputs=%r outputs=%r>" % (self.name, self.inputs, self.outputs)


def load(source):
    """A Module from a .dlcm file's path or its bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return Module(_dlc._Module.load_memory(data), data=data)
    path = _os.fspath(source)
    return Module(_dlc._Module.load_file(path), path=path)
