"""The dlc Python module (python/dlc) against `dlc run`, with NumPy only.

Run by test/python/python.test after a `pip install` of the module; `dlc`
(the compiler) must be on PATH or in $DLC_EXECUTABLE.
"""
import os
import subprocess
import threading

import numpy as np
import pytest

import dlc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MNIST = os.path.join(ROOT, "examples", "mnist_mlp.dlg")
ONNX_ADD = "/usr/share/libonnx-testdata/data/node/test_add/model.onnx"

# A graph of two outputs.
TWO_OUTPUTS = """\
graph two(a: f32[2, 3], b: f32[2, 3]) -> (s: f32[2, 3], m: f32[3]) {
  s = a + b
  m = reduce_max(a * b, axes=[0])
}
"""


def dlc_run(*args):
    subprocess.run([dlc.find_compiler(), "run", *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def mnist():
    return dlc.compile(MNIST, dims={"N": 4})


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(7).standard_normal((4, 784), dtype=np.float32)


def test_mnist_matches_dlc_run(mnist, x, tmp_path):
    np.save(tmp_path / "x.npy", x)
    dlc_run(MNIST, "--dim", "N=4", "--input", "x=@%s" % (tmp_path / "x.npy"),
            "--output", "logits=@%s" % (tmp_path / "ref.npy"))
    ref = np.load(tmp_path / "ref.npy")
    logits = mnist(x)
    assert logits.dtype == np.float32 and logits.shape == (4, 10)
    np.testing.assert_array_equal(logits, ref)
    # The same module saved and run by `dlc run` from its .dlcm.
    mnist.save(tmp_path / "m.dlcm")
    dlc_run(str(tmp_path / "m.dlcm"), "--input", "x=@%s" % (tmp_path / "x.npy"),
            "--output", "logits=@%s" % (tmp_path / "ref2.npy"))
    np.testing.assert_array_equal(np.load(tmp_path / "ref2.npy"), logits)


def test_signature(mnist):
    assert mnist.name == "mnist_mlp"
    assert [(i.name, i.shape, i.dtype) for i in mnist.inputs] == [("x", (4, 784), "float32")]
    assert [(o.name, o.shape, o.dtype) for o in mnist.outputs] == [("logits", (4, 10), "float32")]
    assert mnist.inputs[0].nbytes == 4 * 784 * 4
    assert mnist.state == []


def test_compile_writes_output(tmp_path):
    module = dlc.compile(MNIST, dims={"N": 4}, output=tmp_path / "out.dlcm")
    assert (tmp_path / "out.dlcm").read_bytes() == module.serialize()


def test_load_from_path_and_bytes(mnist, x, tmp_path):
    path = tmp_path / "m.dlcm"
    mnist.save(path)
    data = path.read_bytes()
    assert data == mnist.serialize()
    from_path, from_bytes = dlc.load(path), dlc.load(data)
    assert from_path.serialize() == data
    np.testing.assert_array_equal(from_path(x), mnist(x))
    np.testing.assert_array_equal(from_bytes(x), mnist(x))


def test_inputs_by_name(mnist, x):
    np.testing.assert_array_equal(mnist(x=x), mnist(x))
    with pytest.raises(TypeError, match="missing input x"):
        mnist()
    with pytest.raises(TypeError, match="has no input 'y'; its inputs: x"):
        mnist(y=x)
    with pytest.raises(TypeError, match="input 'x' given twice"):
        mnist(x, x=x)
    with pytest.raises(TypeError, match="takes 1 inputs"):
        mnist(x, x)


def test_outputs_are_the_runtimes_buffers(mnist, x):
    first, second = mnist(x), mnist(x)
    for y in (first, second):
        # Not NumPy's own memory: the buffer the runtime wrote, 64-byte aligned.
        assert not y.flags.owndata
        assert y.ctypes.data % 64 == 0
        assert np.shares_memory(np.from_dlpack(y), y)
    # Each run gets fresh outputs: an earlier result is never overwritten.
    assert not np.shares_memory(first, second)
    kept = first.copy()
    mnist(np.zeros_like(x))
    np.testing.assert_array_equal(first, kept)


def test_input_kinds(mnist, x):
    ref = mnist(x)
    fortran = np.asfortranarray(x)          # strided: copied to C order first
    readonly = x.copy()
    readonly.flags.writeable = False
    view = np.repeat(x, 2, axis=1)[:, ::2]  # a strided view equal to x
    assert not view.flags.c_contiguous
    np.testing.assert_array_equal(view, x)
    for value in (fortran, readonly, view, x.tolist(), memoryview(x)):
        np.testing.assert_array_equal(mnist(value), ref)


class Foreign:
    """A tensor of another framework, as nanobind sees PyTorch's or JAX's:
    __dlpack__ and __dlpack_device__, no buffer protocol."""

    def __init__(self, array):
        self.array = array
        self.exports = 0

    def __dlpack__(self, **kwargs):
        self.exports += 1
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_inputs(mnist, x):
    foreign = Foreign(x)
    with pytest.raises(TypeError):
        memoryview(foreign)
    np.testing.assert_array_equal(mnist(foreign), mnist(x))
    assert foreign.exports == 1


def test_wrong_inputs_are_errors(mnist, x):
    with pytest.raises(dlc.Error, match=r"input 0 \('x'\): dtype float64 is not f32") as e:
        mnist(x.astype(np.float64))
    assert e.value.code == "INVALID_ARGUMENT" and e.value.exit_code == 2
    with pytest.raises(dlc.Error, match=r"shape \[2, 784\] is not \[4, 784\]"):
        mnist(x[:2])


def test_multiple_outputs(tmp_path):
    path = tmp_path / "two.dlg"
    path.write_text(TWO_OUTPUTS)
    module = dlc.compile(str(path))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), -2.0, dtype=np.float32)
    s, m = module(a, b)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(m, (a * b).max(axis=0))
    outputs = module.session().run(b=b, a=a)
    assert list(outputs) == ["s", "m"]
    np.testing.assert_array_equal(outputs["s"], s)


# bfloat16, which NumPy lacks, and a boolean (i1) output.
BF16_AND_BOOL = """\
graph h(x: f32[4]) -> (y: bf16[4], b: i1[4]) {
  y = cast(x, to=bf16)
  b = gt(x, 1.0)
}
"""


def dlpack_uint16(array):
    """The 16-bit elements of a 1-D DLPack array, read through its DLTensor
    (NumPy cannot import bfloat16 itself)."""
    import ctypes

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                    ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                    ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]

    capsule = array.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = DLTensor.from_address(get(capsule, b"dltensor"))  # DLManagedTensor starts with it
    assert (t.device_type, t.ndim, t.code, t.bits, t.lanes) == (1, 1, 4, 16, 1)
    data = ctypes.cast(t.data + t.byte_offset, ctypes.POINTER(ctypes.c_uint16))
    return np.array([data[i] for i in range(t.shape[0])], dtype=np.uint16)


def test_bfloat16_and_bool_outputs(tmp_path):
    path = tmp_path / "h.dlg"
    path.write_text(BF16_AND_BOOL)
    module = dlc.compile(str(path))
    assert [(o.name, o.dtype) for o in module.outputs] == [("y", "bfloat16"), ("b", "bool")]
    x = np.array([0.0, 1.5, -2.0, 3.0], dtype=np.float32)
    y, b = module(x)
    assert b.dtype == np.bool_
    np.testing.assert_array_equal(b, x > 1.0)
    # bfloat16 stays a DLPack array (PyTorch and JAX take it): its bits are
    # the top half of the float32's.
    assert not isinstance(y, np.ndarray) and y.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(dlpack_uint16(y), x.view(np.uint32) >> 16)


@pytest.mark.skipif(not os.path.exists(ONNX_ADD), reason="no libonnx-testdata")
def test_compile_onnx_bytes():
    with open(ONNX_ADD, "rb") as f:
        module = dlc.compile(f.read())
    assert [i.name for i in module.inputs] == ["x", "y"]
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((3, 4, 5), dtype=np.float32) for _ in range(2))
    np.testing.assert_array_equal(module(a, b), a + b)


def test_compile_errors(tmp_path):
    bad = tmp_path / "bad.dlg"
    bad.write_text("graph g(x: f32[2]) -> (y: f32[2]) {\n  y = nosuchop(x)\n}\n")
    with pytest.raises(dlc.CompileError, match=r"bad.dlg:2:7: error: unknown op 'nosuchop'") as e:
        dlc.compile(str(bad))
    assert e.value.exit_code == 2
    with pytest.raises(FileNotFoundError):
        dlc.compile(str(tmp_path / "missing.dlg"))


def test_corrupt_module_is_an_error(mnist, tmp_path):
    data = bytearray(mnist.serialize())
    with pytest.raises(dlc.Error, match="not a dlc module") as e:
        dlc.load(b"garbage!" + bytes(data[8:]))
    assert e.value.code == "INVALID_MODULE"
    with pytest.raises(dlc.Error, match="truncated"):
        dlc.load(bytes(data[:1000]))
    with pytest.raises(dlc.Error) as e:
        dlc.load(tmp_path / "missing.dlcm")
    assert e.value.code == "NOT_FOUND"


def test_module_for_a_range_of_sizes(mnist, x):
    ranged = dlc.compile(MNIST, dims={"N": (1, 8)})
    assert ranged.dynamic_dims == {"N": (1, 8)}
    assert mnist.dynamic_dims == {}
    assert ranged.inputs[0].shape == (8, 784)
    for n in (1, 3, 4):
        y = ranged(x[:n])
        assert y.shape == (n, 10)
        np.testing.assert_allclose(y, mnist(x)[:n], rtol=1e-5, atol=1e-6)
    with pytest.raises(dlc.Error, match=r"outside \[1, 8\]"):
        ranged(np.zeros((9, 784), np.float32))


def test_sessions(mnist, x):
    ref = mnist(x)
    one = mnist.session(threads=1)
    assert one.device == "cpu"
    assert one.rank == (0, 1)
    # Another thread count splits the GEMMs' rows into other blocks, which a
    # GEMM library may round differently (oneDNN's AVX2 kernels do); bit for
    # bit across thread counts is DLC_DETERMINISTIC=1's (dlc train
    # --deterministic).
    np.testing.assert_allclose(one(x), ref, rtol=1e-5, atol=1e-6)
    # A CPU module has no kernels for the CUDA emulator.
    with pytest.raises(dlc.Error, match="targets cpu, not device 'cuda-emu'"):
        mnist.session(device="cuda-emu")


def test_cuda_target_on_the_emulator(mnist, x):
    # target= reaches the compiler: CUDA kernels, which the CPU device refuses
    # and the CUDA emulator runs (no GPU needed).
    cuda = dlc.compile(MNIST, dims={"N": 4}, target="cuda:sm_80")
    with pytest.raises(dlc.Error, match="targets cuda, not device 'cpu'") as e:
        cuda(x)
    assert e.value.code == "UNAVAILABLE"
    np.testing.assert_allclose(cuda.session(device="cuda-emu")(x), mnist(x),
                               rtol=1e-5, atol=1e-5)


def test_concurrent_calls_wait_for_each_other(mnist, x):
    # One session runs one call at a time: a second thread waits (the
    # runtime itself refuses overlapping runs on one session).
    ref = mnist(x)
    session = mnist.session()
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(session(x))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(results) == 80
    for r in results:
        np.testing.assert_array_equal(r, ref)


def test_training_state():
    step = dlc.compile(MNIST, dims={"N": 8}, train=True)
    assert [i.name for i in step.inputs] == ["x", "label", "lr"]
    assert [s.name for s in step.state][:4] == ["w1", "b1", "w2", "b2"]
    session = step.session()
    initial = session.state_dict()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 784), dtype=np.float32)
    label = rng.integers(0, 10, 8, dtype=np.int32)
    lr = np.float32(0.01)
    losses = [float(session(x, label, np.array(lr))) for _ in range(5)]
    assert losses[-1] < losses[0]  # the same batch five times
    assert int(session.read_state("step")) == 5
    assert not np.array_equal(session.read_state("w1"), initial["w1"])
    session.reset_state()
    np.testing.assert_array_equal(session.read_state("w1"), initial["w1"])
    # A checkpoint round trip: the state after one step, written back.
    session(x, label, np.array(lr))
    after_one = session.state_dict()
    session.load_state_dict(initial)
    np.testing.assert_array_equal(session.read_state("w1"), initial["w1"])
    session.load_state_dict(after_one)
    np.testing.assert_array_equal(float(session(x, label, np.array(lr))), losses[1])
    with pytest.raises(KeyError, match="no state tensor 'nope'"):
        session.read_state("nope")
