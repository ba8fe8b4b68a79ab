"""Writes malformed ONNX models into a folder, one per case, for
malformed-data.test: external data with a non-numeric offset, external data
that is a directory, an initializer whose dimensions multiply past 2^63."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper


def save(init, path):
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [2])], [init])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def external(location, offset):
    t = T()
    t.name, t.data_type, t.data_location = "w", T.FLOAT, T.EXTERNAL
    t.dims.extend([2])
    for key, value in (("location", location), ("offset", offset)):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return t


out = sys.argv[1]
os.makedirs(os.path.join(out, "adir"), exist_ok=True)
np.array([1, 2], np.float32).tofile(os.path.join(out, "w.bin"))
save(external("w.bin", "abc"), os.path.join(out, "bad-offset.onnx"))
save(external("adir", "0"), os.path.join(out, "directory.onnx"))
wrapped = T()
wrapped.name, wrapped.data_type = "w", T.FLOAT
wrapped.dims.extend([4294967296, 4294967296])  # 2^64 elements: 0 once wrapped
save(wrapped, os.path.join(out, "wrapped.onnx"))
