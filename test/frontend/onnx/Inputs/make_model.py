#!/usr/bin/env python3
"""Builds the tiny ONNX models the lit tests in this folder import.

Usage: make_model.py CASE OUT.onnx   (CASE is a function name below)
Models use opset 13 and IR version 8 (what Debian's libonnx 1.12 checks).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def cnn(path):
    """Conv -> BatchNormalization -> Relu -> MaxPool -> GlobalAveragePool ->
    Flatten -> Gemm, as PyTorch exports a small CNN (batch N)."""
    rng = np.random.default_rng(0)
    inits = [
        const("conv.weight", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)),
        const("conv.bias", np.zeros(4, np.float32)),
        const("bn.scale", np.ones(4, np.float32)),
        const("bn.bias", np.zeros(4, np.float32)),
        const("bn.mean", np.zeros(4, np.float32)),
        const("bn.var", np.ones(4, np.float32)),
        const("fc.weight", rng.standard_normal((10, 4)).astype(np.float32)),
        const("fc.bias", np.zeros(10, np.float32)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"], name="conv1",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                         ["b"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b"], ["r"], name="relu1"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    ]
    onnx.save(model(nodes, [helper.make_tensor_value_info("x", F, ["N", 3, 8, 8])],
                    [helper.make_tensor_value_info("logits", F, ["N", 10])], inits), path)


def shape_arithmetic(path):
    """x.view(x.size(0), -1) as PyTorch exports it: Shape, Gather,
    Unsqueeze, Concat feeding Reshape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Constant", [], ["zero"], name="zero",
                         value=numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="view"),
    ]
    inits = [const("axes", np.array([0], np.int64)), const("minus_one", np.array([-1], np.int64))]
    onnx.save(model(nodes, [helper.make_tensor_value_info("x", F, [2, 3, 4])],
                    [helper.make_tensor_value_info("y", F, [2, 12])], inits), path)


def unsupported(path):
    """Several op types dlc does not support, some used twice, among
    supported ones."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Resize", ["a", "", "scales"], ["b"], name="up1"),
        helper.make_node("Resize", ["b", "", "scales"], ["c"], name="up2"),
        helper.make_node("TopK", ["c", "k"], ["d", "i"], name="topk"),
        helper.make_node("Einsum", ["d", "d"], ["e"], equation="ij,ij->ij"),
    ]
    inits = [const("scales", np.array([1, 1, 2, 2], np.float32)), const("k", np.array([1], np.int64))]
    onnx.save(model(nodes, [helper.make_tensor_value_info("x", F, [1, 1, 2, 2])],
                    [helper.make_tensor_value_info("e", F, None)], inits), path)


def bad_attribute(path):
    """A supported op with an attribute dlc does not know."""
    node = helper.make_node("Softmax", ["x"], ["y"], name="probs", axis=1)
    node.attribute.append(helper.make_attribute("temperature", 2.0))
    m = model([node], [helper.make_tensor_value_info("x", F, [2, 3])],
              [helper.make_tensor_value_info("y", F, [2, 3])])
    onnx.save(m, path)


def shape_error(path):
    """A MatMul whose operands do not agree: the error names the node."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [2, 3]),
                      helper.make_tensor_value_info("w", F, [4, 5])],
              [helper.make_tensor_value_info("y", F, [2, 5])])
    onnx.save(m, path, )


def add(path):
    """y = x + b, b an initializer; x of dynamic batch N."""
    nodes = [helper.make_node("Add", ["x", "b"], ["y"], name="add")]
    m = model(nodes, [helper.make_tensor_value_info("x", F, ["N", 3])],
              [helper.make_tensor_value_info("y", F, ["N", 3])],
              [const("b", np.array([1, 2, 3], np.float32))])
    onnx.save(m, path)


def unary_chain(path):
    """y = Floor(Erf(Sin(x))) and z = Softplus(x): element-wise ops the
    dialect has one to one."""
    nodes = [helper.make_node("Sin", ["x"], ["s"], name="sin"),
             helper.make_node("Erf", ["s"], ["e"], name="erf"),
             helper.make_node("Floor", ["e"], ["y"], name="floor"),
             helper.make_node("Softplus", ["x"], ["z"], name="softplus")]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [4, 8])],
              [helper.make_tensor_value_info("y", F, [4, 8]),
               helper.make_tensor_value_info("z", F, [4, 8])])
    onnx.save(m, path)


def softmax_cross_entropy(path):
    """SoftmaxCrossEntropyLoss without class weights, on [N, C, d] scores
    with an ignore_index: `loss` alone, and `each` with the log-probabilities
    too."""
    nodes = [helper.make_node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["loss"],
                              name="sce", ignore_index=-1),
             helper.make_node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["each", "logp"],
                              name="sce_none", reduction="none")]
    m = model(nodes, [helper.make_tensor_value_info("scores", F, [2, 5, 3]),
                      helper.make_tensor_value_info("labels", TensorProto.INT64, [2, 3])],
              [helper.make_tensor_value_info("loss", F, []),
               helper.make_tensor_value_info("each", F, [2, 3]),
               helper.make_tensor_value_info("logp", F, [2, 5, 3])])
    onnx.save(m, path)


def external(path, location):
    """`add` with `b` (100 floats) stored externally at `location`; the data
    file itself is written next to the model as weights.bin."""
    b = numpy_helper.from_array(np.arange(100, dtype=np.float32), "b")
    folder = os.path.dirname(path) or "."
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.write(b.raw_data)
    b.ClearField("raw_data")
    b.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "400")):
        entry = b.external_data.add()
        entry.key, entry.value = key, value
    nodes = [helper.make_node("Add", ["x", "b"], ["y"], name="add")]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [100])],
              [helper.make_tensor_value_info("y", F, [100])], [b])
    onnx.save(m, path)


def main():
    case, out = sys.argv[1], sys.argv[2]
    if case.startswith("external:"):
        external(out, case.split(":", 1)[1])
    else:
        globals()[case](out)


if __name__ == "__main__":
    main()
