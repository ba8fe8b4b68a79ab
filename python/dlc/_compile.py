"""dlc.compile: a model to a Module, by the dlc compiler.

The compiler runs as its own process (`dlc compile`), as IREE's Python
package runs iree-compile: a compile error or crash is an exception here, never
the end of the interpreter, and the compiler's LLVM/MLIR never share the
process with other libraries' copies. Which `dlc` runs: $DLC_EXECUTABLE, else
the one in this package (a wheel built with the compiler), else `dlc` on PATH.
"""

import os
import shutil
import subprocess
import tempfile


class CompileError(RuntimeError):
    """`dlc compile` failed: its message (file:line:col: error: ...) and exit
    code (2 for a bad model or option, 3 a runtime fault, 70 a compiler bug)."""

    def __init__(self, message, exit_code=None):
        super().__init__(message)
        self.exit_code = exit_code


def find_compiler():
    """The path of the `dlc` that dlc.compile runs, or None."""
    path = os.environ.get("DLC_EXECUTABLE")
    if path:
        return path
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "dlc")
    if os.access(bundled, os.X_OK):
        return bundled
    return shutil.which("dlc")


def _model_bytes(model):
    """The serialized ONNX model of an onnx.ModelProto, bytes as they are."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    return None


def compile(model, dims=None, target="cpu", output=None, flags=(), params=None, train=False):
    """Compiles `model` into a Module (dlc.Module; its .serialize() is the
    .dlcm bytes, which `output` also writes to a file when given).

    model   the path of a .dlg or .onnx file, an ONNX model's bytes, or an
            onnx.ModelProto
    dims    sizes of the symbolic dimensions, e.g. {"N": 64}, or one range,
            {"N": (1, 64)}: one module for every N in it
    target  "cpu" (the default) or "cuda:sm_80,sm_90"
    params  every parameter's value from a .safetensors or .npz file
    train   the graph's train step instead (its `train` block: loss and
            optimizer): a module whose state holds the parameters and the
            optimizer's moments, one step a call
    flags   further `dlc compile` options, e.g. ["--memory-budget", "3100000"]
    """
    from . import load  # the package imports this module first

    compiler = find_compiler()
    if not compiler:
        raise CompileError("dlc.compile needs the dlc compiler: this package was built without "
                           "it, and there is no `dlc` on PATH (set DLC_EXECUTABLE to its path)")
    with tempfile.TemporaryDirectory(prefix="dlc-compile-") as folder:
        data = _model_bytes(model)
        if data is not None:
            path = os.path.join(folder, "model.onnx")
            with open(path, "wb") as f:
                f.write(data)
        else:
            path = os.fspath(model)
            if not os.path.exists(path):
                raise FileNotFoundError("dlc.compile: no such model file: '%s'" % path)
        out = os.fspath(output) if output is not None else os.path.join(folder, "model.dlcm")
        command = [compiler, "compile", path, "-o", out, "--target", target]
        for name, size in (dims or {}).items():
            # A (min, max) pair: one module for every size in the range.
            value = ("%d..%d" % tuple(size)) if isinstance(size, (tuple, list)) else "%d" % size
            command += ["--dim", "%s=%s" % (name, value)]
        if params is not None:
            command += ["--params", os.fspath(params)]
        if train:
            command += ["--train"]
        command += list(flags)
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        if result.returncode != 0:
            message = (result.stderr or result.stdout).strip()
            raise CompileError(message or "dlc compile exited with %d" % result.returncode,
                               result.returncode)
        with open(out, "rb") as f:
            return load(f.read())
