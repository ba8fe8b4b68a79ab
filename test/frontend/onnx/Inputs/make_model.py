#!/usr/bin/env python3
"""Builds the tiny ONNX models the lit tests in this folder import.

Usage: make_model.py CASE OUT.onnx   (CASE is a function name below)
Models use opset 13 and IR version 8 (what Debian's libonnx 1.12 checks),
unless a case says otherwise. Cases that end with `save_data` also write
OUT.<input>.npy and OUT.<output>.npy: seeded inputs and the outputs ONNX's
reference evaluator (or NumPy, for opset 6) computes from them.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=13, ir_version=8):
    if ir_version < 4:  # IR 3: every initializer is also a graph input
        inputs = list(inputs) + [helper.make_tensor_value_info(t.name, t.data_type, t.dims)
                                 for t in initializers]
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_version)


def save_data(m, path, expected=None):
    """Saves `m`, seeded inputs and the expected outputs next to `path`:
    `expected(inputs)` when given, else ONNX's reference evaluator."""
    onnx.save(m, path)
    rng = np.random.default_rng(0)
    inits = {t.name for t in m.graph.initializer}
    feeds = {}
    for i in m.graph.input:
        if i.name in inits:
            continue
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        elem = i.type.tensor_type.elem_type
        if elem == TensorProto.INT32:
            feeds[i.name] = rng.integers(-1000, 1000, shape).astype(np.int32)
        elif elem in (TensorProto.UINT8, TensorProto.INT8):
            dtype = helper.tensor_dtype_to_np_dtype(elem)
            info = np.iinfo(dtype)
            feeds[i.name] = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    if expected is None:
        from onnx.reference import ReferenceEvaluator
        outputs = ReferenceEvaluator(m).run(None, feeds)
    else:
        outputs = expected(feeds)
    base = os.path.splitext(path)[0]
    for name, value in feeds.items():
        np.save(f"{base}.{name}.npy", value)
    for o, value in zip(m.graph.output, outputs):
        np.save(f"{base}.{o.name}.npy", np.asarray(value))


def onnxruntime_outputs(m):
    """`expected` for save_data: ONNX Runtime's outputs (where ONNX's
    reference evaluator lacks the case: grouped ConvTranspose, RNN
    activations other than the defaults)."""
    import onnxruntime
    session = onnxruntime.InferenceSession(m.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


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


def shape_chains(path):
    """The shape arithmetic PyTorch exports around attention and position
    ids, all computable at import on static shapes: Shape -> Gather -> Div ->
    Unsqueeze -> Concat -> Reshape; Range -> Cast -> Reshape -> Expand to
    Shape(x); ConstantOfShape; a Mod of constants -> Reshape as Slice's end
    (the chain nn.TransformerEncoder's export stopped at)."""
    i64 = lambda *v: numpy_helper.from_array(np.array(v if len(v) != 1 else v[0], np.int64))
    C = lambda out, v: helper.make_node("Constant", [], [out], name=out, value=v)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        C("zero", i64(0)), C("one", i64(1)), C("two", i64(2)), C("axis0", i64([0])),
        C("seven", i64(7)), C("four", i64(4)), C("minus1", i64([-1])), C("two1", i64([2])),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
        helper.make_node("Gather", ["s", "one"], ["t"], name="seq", axis=0),
        helper.make_node("Div", ["t", "two"], ["half"], name="half"),
        helper.make_node("Unsqueeze", ["n", "axis0"], ["n1"], name="n1"),
        helper.make_node("Unsqueeze", ["half", "axis0"], ["h1"], name="h1"),
        helper.make_node("Concat", ["n1", "two1", "h1", "minus1"], ["target"], name="target",
                         axis=0),
        helper.make_node("Reshape", ["x", "target"], ["heads"], name="split_heads"),
        helper.make_node("Range", ["zero", "t", "one"], ["pos"], name="positions"),
        helper.make_node("Cast", ["pos"], ["posf"], name="posf", to=TensorProto.FLOAT),
        C("pos_shape", i64([1, -1, 1])),
        helper.make_node("Reshape", ["posf", "pos_shape"], ["pos3"], name="pos3"),
        helper.make_node("Expand", ["pos3", "s"], ["posx"], name="expand_positions"),
        helper.make_node("ConstantOfShape", ["s"], ["ones"], name="ones",
                         value=numpy_helper.from_array(np.float32([1]))),
        helper.make_node("Add", ["posx", "ones"], ["bias"], name="bias"),
        helper.make_node("Add", ["x", "bias"], ["shifted"], name="shift"),
        helper.make_node("Mod", ["seven", "four"], ["m"], name="mod"),
        helper.make_node("Reshape", ["m", "minus1"], ["end"], name="end"),
        helper.make_node("Slice", ["x", "axis0", "end", "one1"], ["head"], name="slice"),
    ]
    f = helper.make_tensor_value_info
    m = model(nodes, [f("x", F, [2, 6, 4])],
              [f("heads", F, [2, 2, 3, 4]), f("shifted", F, [2, 6, 4]), f("head", F, [2, 3, 4])],
              [const("one1", np.int64([1]))], opset=13)
    save_data(m, path)


def unsupported(path):
    """Several op types dlc does not support, some used twice, one inside a
    Loop's body, among supported ones."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("NonMaxSuppression", ["boxes", "a"], ["b"], name="nms1"),
        helper.make_node("NonMaxSuppression", ["boxes", "a"], ["c"], name="nms2"),
        helper.make_node("Unique", ["c"], ["d"], name="unique"),
        helper.make_node("NonZero", ["d"], ["e"]),
        helper.make_node("Loop", ["trips", "", "a"], ["f"], name="loop", body=helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("NonMaxSuppression", ["boxes", "v_in"], ["v_out"], name="inner")],
            "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                     helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                     helper.make_tensor_value_info("v_in", F, None)],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v_out", F, None)])),
    ]
    inits = [const("boxes", np.zeros([1, 2, 4], np.float32)), const("trips", np.int64(2))]
    onnx.save(model(nodes, [helper.make_tensor_value_info("x", F, [1, 1, 2, 2])],
                    [helper.make_tensor_value_info("e", F, None)], inits), path)


def bad_attribute(path):
    """A supported op with an attribute dlc does not know."""
    node = helper.make_node("Softmax", ["x"], ["y"], name="probs", axis=1)
    node.attribute.append(helper.make_attribute("temperature", 2.0))
    m = model([node], [helper.make_tensor_value_info("x", F, [2, 3])],
              [helper.make_tensor_value_info("y", F, [2, 3])])
    onnx.save(m, path)


def bad_attributes(path):
    """Attributes dlc does not know on two nodes: one error lists both."""
    soft = helper.make_node("Softmax", ["x"], ["h"], name="probs", axis=1)
    soft.attribute.append(helper.make_attribute("temperature", 2.0))
    relu = helper.make_node("Relu", ["h"], ["y"], name="act")
    relu.attribute.append(helper.make_attribute("slope", 0.1))
    m = model([soft, relu], [helper.make_tensor_value_info("x", F, [2, 3])],
              [helper.make_tensor_value_info("y", F, [2, 3])])
    onnx.save(m, path)


def shape_error(path):
    """A MatMul whose operands do not agree: the error names the node."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [2, 3]),
                      helper.make_tensor_value_info("w", F, [4, 5])],
              [helper.make_tensor_value_info("y", F, [2, 5])])
    onnx.save(m, path, )


def wrong_value_info(path):
    """A value_info that contradicts the graph: y = relu(x) of [2, 3]
    declared [2, 4]. The importer's type is checked against it."""
    nodes = [helper.make_node("Relu", ["x"], ["h"], name="act"),
             helper.make_node("Neg", ["h"], ["y"], name="neg")]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [2, 3])],
              [helper.make_tensor_value_info("y", F, [2, 3])])
    m.graph.value_info.append(helper.make_tensor_value_info("h", F, [2, 4]))
    onnx.save(m, path)


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


def opset6(path):
    """An opset-6 model as PyTorch's first exporter wrote them (IR version
    3, initializers listed as inputs): a bias Add with `broadcast`,
    BatchNormalization and Dropout with `is_test`. ONNX's version converter
    upgrades it to opset 7."""
    rng = np.random.default_rng(1)
    bias = rng.standard_normal((3, 1, 1)).astype(np.float32)
    scale, shift = np.float32([1, 2, 0.5]), np.float32([0, 1, -1])
    inits = [const("bias", bias), const("scale", scale), const("shift", shift),
             const("mean", np.zeros(3, np.float32)), const("var", np.ones(3, np.float32))]
    nodes = [
        helper.make_node("Add", ["x", "bias"], ["a"], name="bias_add", broadcast=1),
        helper.make_node("BatchNormalization", ["a", "scale", "shift", "mean", "var"], ["b"],
                         name="bn", is_test=1, epsilon=1e-5),
        helper.make_node("Dropout", ["b"], ["y"], name="drop", is_test=1, ratio=0.5),
    ]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [2, 3, 4, 4])],
              [helper.make_tensor_value_info("y", F, [2, 3, 4, 4])], inits,
              opset=6, ir_version=3)

    def expected(feeds):
        a = feeds["x"] + bias.reshape(1, 3, 1, 1)
        return [a / np.sqrt(1 + 1e-5) * scale.reshape(1, 3, 1, 1) + shift.reshape(1, 3, 1, 1)]
    save_data(m, path, expected)


def opset6_unconvertible(path):
    """Opset 6 that ONNX 1.12's version converter gives up on (a Mul that
    broadcasts a Constant from `axis` 1, whose shape it does not infer):
    the importer reads `broadcast` and `axis` itself."""
    c = numpy_helper.from_array(np.float32([10, 20, 30]))
    nodes = [
        helper.make_node("Constant", [], ["c"], name="three", value=c),
        helper.make_node("Mul", ["x", "c"], ["y"], name="scale_channels", broadcast=1, axis=1),
        helper.make_node("Add", ["y", "one"], ["z"], name="add_one", broadcast=1),
    ]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [2, 3, 2])],
              [helper.make_tensor_value_info("z", F, [2, 3, 2])],
              [const("one", np.float32([1]))], opset=6, ir_version=3)
    save_data(m, path, lambda f: [f["x"] * np.float32([10, 20, 30]).reshape(1, 3, 1) + 1])


def opset18(path):
    """Opset 18's new signatures: Reduce* with axes as an input, Split with
    num_outputs (unequal last part), Pad with an axes input."""
    nodes = [
        helper.make_node("ReduceMean", ["x", "axes1"], ["m"], name="mean", keepdims=1),
        helper.make_node("ReduceMax", ["x", "axes1"], ["mx"], name="max", keepdims=0),
        helper.make_node("Split", ["x"], ["s0", "s1", "s2"], name="split", axis=1, num_outputs=3),
        helper.make_node("Pad", ["s0", "pads", "", "axes0"], ["p"], name="pad"),
        helper.make_node("Sub", ["x", "m"], ["c"], name="center"),
    ]
    f = helper.make_tensor_value_info
    m = model(nodes, [f("x", F, [2, 7])],
              [f("c", F, [2, 7]), f("mx", F, [2]), f("p", F, [5, 3]), f("s2", F, [2, 1])],
              [const("axes1", np.int64([1])), const("axes0", np.int64([0])),
               const("pads", np.int64([1, 2]))], opset=18)
    save_data(m, path)


def opset21(path):
    """Gelu (opset 20), GroupNormalization (scale and bias per channel
    from 21), Pad's wrap mode (19) and Cast's saturate (19), at opset 21."""
    rng = np.random.default_rng(2)
    nodes = [
        helper.make_node("Gelu", ["x"], ["g"], name="gelu"),
        helper.make_node("Gelu", ["x"], ["gt"], name="gelu_tanh", approximate="tanh"),
        helper.make_node("GroupNormalization", ["x", "gamma", "beta"], ["n"], name="gn",
                         num_groups=2, epsilon=1e-5),
        helper.make_node("Pad", ["x", "pads"], ["w"], name="wrap", mode="wrap"),
        helper.make_node("Cast", ["w"], ["wd"], name="to_double", to=TensorProto.DOUBLE,
                         saturate=1),
    ]
    f = helper.make_tensor_value_info
    m = model(nodes, [f("x", F, [2, 4, 3])],
              [f("g", F, [2, 4, 3]), f("gt", F, [2, 4, 3]), f("n", F, [2, 4, 3]),
               f("wd", TensorProto.DOUBLE, [2, 4, 5])],
              [const("gamma", rng.standard_normal(4).astype(np.float32)),
               const("beta", rng.standard_normal(4).astype(np.float32)),
               const("pads", np.int64([0, 0, 1, 0, 0, 1]))], opset=21, ir_version=10)
    save_data(m, path)


def group_norm18(path):
    """GroupNormalization at opset 18: scale and bias per group."""
    nodes = [helper.make_node("GroupNormalization", ["x", "gamma", "beta"], ["n"], name="gn",
                              num_groups=2, epsilon=1e-5)]
    f = helper.make_tensor_value_info
    m = model(nodes, [f("x", F, [2, 4, 3])], [f("n", F, [2, 4, 3])],
              [const("gamma", np.float32([2, -1])), const("beta", np.float32([0.5, 1]))],
              opset=18)

    def expected(feeds):
        x = feeds["x"].reshape(2, 2, 6)
        y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        y = y.reshape(2, 4, 3)
        return [y * np.float32([2, 2, -1, -1]).reshape(1, 4, 1)
                + np.float32([0.5, 0.5, 1, 1]).reshape(1, 4, 1)]
    save_data(m, path, expected)


def opset6_invalid(path):
    """An opset-6 model whose Add reads a tensor nothing defines: ONNX's
    checker rejects it before the version converter sees it."""
    m = model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add", broadcast=1)],
              [helper.make_tensor_value_info("x", F, [2])],
              [helper.make_tensor_value_info("y", F, [2])], opset=6, ir_version=3)
    onnx.save(m, path)


def opset22(path):
    """A Relu at opset 22, beyond what dlc imports."""
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [helper.make_tensor_value_info("x", F, [2])],
              [helper.make_tensor_value_info("y", F, [2])], opset=22, ir_version=10)
    onnx.save(m, path)


def bad_group_norm(path):
    """GroupNormalization at opset 18 whose num_groups does not divide the
    channels (ONNX's checker cannot see it; dlc's shape rules do)."""
    nodes = [helper.make_node("GroupNormalization", ["x", "gamma", "beta"], ["n"], name="gn",
                              num_groups=3)]
    f = helper.make_tensor_value_info
    m = model(nodes, [f("x", F, [2, 4, 3])], [f("n", F, [2, 4, 3])],
              [const("gamma", np.ones(3, np.float32)), const("beta", np.zeros(3, np.float32))],
              opset=18)
    onnx.save(m, path)


def resize(path):
    """Resize as opset 18 writes it: linear with antialias on two axes
    (`axes`), cubic to sizes with keep_aspect_ratio_policy, nearest with
    tf_crop_and_resize's extrapolation; and Upsample (opset 9)."""
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["lin"], name="down",
                         mode="linear", antialias=1, axes=[2, 3]),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["cub"], name="fit",
                         mode="cubic", keep_aspect_ratio_policy="not_larger",
                         axes=[2, 3]),
        helper.make_node("Resize", ["x", "roi", "", "sizes2"], ["crop"], name="crop",
                         mode="nearest", coordinate_transformation_mode="tf_crop_and_resize",
                         extrapolation_value=7.0, axes=[3]),
    ]
    m = model(nodes, [f("x", F, [1, 2, 6, 8])],
              [f("lin", F, None), f("cub", F, None), f("crop", F, None)],
              [const("scales", np.float32([0.6, 0.5])), const("sizes", np.int64([9, 9])),
               const("sizes2", np.int64([5])), const("roi", np.float32([-0.2, 0.9]))],
              opset=18)
    save_data(m, path)


def recurrent(path):
    """LSTM with peepholes and sequence lengths shorter than the sequence,
    a bidirectional GRU (linear_before_reset) from an initial state, a
    reverse RNN with clip and a LeakyRelu activation."""
    rng = np.random.default_rng(1)
    f = helper.make_tensor_value_info
    T, B, I, H = 4, 2, 3, 5
    w = lambda *s: const(s[0], rng.standard_normal(s[1:]).astype(np.float32) * 0.5)
    nodes = [
        helper.make_node("LSTM", ["x", "lw", "lr", "lb", "lens", "", "", "lp"],
                         ["ly", "lh", "lc"], name="lstm", hidden_size=H),
        helper.make_node("GRU", ["x", "gw", "gr", "gb", "", "gh0"], ["gy", "gh"],
                         name="gru", hidden_size=H, direction="bidirectional",
                         linear_before_reset=1),
        helper.make_node("RNN", ["x", "rw", "rr"], ["ry", "rh"], name="rnn",
                         hidden_size=H, direction="reverse", clip=1.5,
                         activations=["LeakyRelu"], activation_alpha=[0.1]),
    ]
    inits = [w("lw", 1, 4 * H, I), w("lr", 1, 4 * H, H), w("lb", 1, 8 * H),
             const("lens", np.int32([4, 2])), w("lp", 1, 3 * H),
             w("gw", 2, 3 * H, I), w("gr", 2, 3 * H, H), w("gb", 2, 6 * H),
             w("gh0", 2, B, H), w("rw", 1, H, I), w("rr", 1, H, H)]
    outs = [f("ly", F, [T, 1, B, H]), f("lh", F, [1, B, H]), f("lc", F, [1, B, H]),
            f("gy", F, [T, 2, B, H]), f("gh", F, [2, B, H]),
            f("ry", F, [T, 1, B, H]), f("rh", F, [1, B, H])]
    m = model(nodes, [f("x", F, [T, B, I])], outs, inits,
              opset=14)
    save_data(m, path, onnxruntime_outputs(m))


def conv_transpose(path):
    """ConvTranspose with groups, strides, dilations, asymmetric pads and
    output_padding; and a 1-D one to an output_shape."""
    rng = np.random.default_rng(2)
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], name="up",
                         group=2, strides=[2, 3], dilations=[1, 2],
                         pads=[1, 0, 0, 2], output_padding=[1, 0]),
        helper.make_node("ConvTranspose", ["x1", "w1"], ["y1"], name="up1d",
                         strides=[2], output_shape=[12]),
    ]
    inits = [const("w", rng.standard_normal([4, 3, 3, 2]).astype(np.float32)),
             const("b", rng.standard_normal([6]).astype(np.float32)),
             const("w1", rng.standard_normal([2, 3, 3]).astype(np.float32))]
    m = model(nodes, [f("x", F, [1, 4, 4, 5]), f("x1", F, [1, 2, 5])],
              [f("y", F, [1, 6, 9, 13]), f("y1", F, [1, 3, 12])], inits)
    save_data(m, path, onnxruntime_outputs(m))


def int8(path):
    """8-bit integer arithmetic wraps (Mul of uint8, Sub of int8), Max and
    Clip stay in range, MaxPool of uint8, BitShift."""
    f = helper.make_tensor_value_info
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["prod"], name="mul"),
        helper.make_node("Sub", ["c", "d"], ["diff"], name="sub"),
        helper.make_node("Max", ["c", "d"], ["most"], name="max"),
        helper.make_node("Clip", ["c", "lo", "hi"], ["clip"], name="clip"),
        helper.make_node("MaxPool", ["img"], ["pool"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("BitShift", ["a", "shift"], ["shl"], name="shl", direction="LEFT"),
    ]
    m = model(nodes, [f("a", U8, [3, 4]), f("b", U8, [3, 4]), f("c", I8, [3, 4]),
                      f("d", I8, [3, 4]), f("img", U8, [1, 1, 4, 4])],
              [f("prod", U8, [3, 4]), f("diff", I8, [3, 4]), f("most", I8, [3, 4]),
               f("clip", I8, [3, 4]), f("pool", U8, [1, 1, 2, 2]), f("shl", U8, [3, 4])],
              [const("lo", np.int8(-20)), const("hi", np.int8(90)),
               const("shift", np.uint8([1, 2, 3, 7]))])
    save_data(m, path)


def scatter_gather(path):
    """ScatterElements with reduction max (opset 18) on a short index
    block, ScatterND adding at a repeated index, GatherND with a batch
    dimension, MaxUnpool."""
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("ScatterElements", ["x", "ei", "u"], ["se"], name="se",
                         axis=1, reduction="max"),
        helper.make_node("ScatterND", ["x", "ni", "nu"], ["sn"], name="sn",
                         reduction="add"),
        helper.make_node("GatherND", ["g", "gi"], ["gn"], name="gn", batch_dims=1),
        helper.make_node("MaxUnpool", ["p", "pi"], ["mu"], name="mu",
                         kernel_shape=[2, 2], strides=[2, 2]),
    ]
    inits = [const("ei", np.int64([[3, -1], [0, 0]])),
             const("ni", np.int64([[1], [-3], [1]])),
             const("gi", np.int64([[[1, 0], [0, 2]], [[1, 1], [0, 0]]])),
             const("pi", np.int64([[[[0, 3], [9, 14]]]]))]
    m = model(nodes, [f("x", F, [3, 4]), f("u", F, [2, 2]), f("nu", F, [3, 4]),
                      f("g", F, [2, 2, 3]), f("p", F, [1, 1, 2, 2])],
              [f("se", F, [3, 4]), f("sn", F, [3, 4]), f("gn", F, [2, 2]),
               f("mu", F, [1, 1, 4, 4])], inits, opset=18)
    save_data(m, path)


def einsum(path):
    """Einsum: a batched matmul with a broadcast ellipsis, a diagonal, and
    three operands contracted in one node; Det of 3x3 matrices."""
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Einsum", ["a", "b"], ["ab"], name="bmm", equation="...ij,jk->...ik"),
        helper.make_node("Einsum", ["s"], ["d"], name="diag", equation="bii->bi"),
        helper.make_node("Einsum", ["a", "b", "c"], ["abc"], name="chain",
                         equation="xij,jk,kl->li"),
        helper.make_node("Det", ["s"], ["det"], name="det"),
    ]
    m = model(nodes, [f("a", F, [2, 3, 4]), f("b", F, [4, 5]), f("s", F, [2, 3, 3]),
                      f("c", F, [5, 2])],
              [f("ab", F, [2, 3, 5]), f("d", F, [2, 3]), f("abc", F, [2, 3]),
               f("det", F, [2])], [])
    save_data(m, path)


def selection(path):
    """TopK (smallest, along axis 0), Compress, ReverseSequence, LRN and
    BatchNormalization in training mode (running statistics out)."""
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["tv", "ti"], name="topk", axis=0, largest=0),
        helper.make_node("Compress", ["x", "keep"], ["cx"], name="compress", axis=1),
        helper.make_node("ReverseSequence", ["x", "lens"], ["rx"], name="reverse",
                         batch_axis=1, time_axis=0),
        helper.make_node("LRN", ["img"], ["lrn"], name="lrn", size=3, alpha=0.01, beta=0.6, bias=2.0),
        helper.make_node("BatchNormalization", ["img", "gamma", "beta", "mean", "var"],
                         ["bn", "rmean", "rvar"], name="bn", training_mode=1, momentum=0.8),
    ]
    inits = [const("k", np.int64([2])), const("keep", np.bool_([True, False, False, True])),
             const("lens", np.int64([1, 3, 2, 4])),
             const("gamma", np.float32([1.0, 2.0, 0.5])), const("beta", np.float32([0.0, 1.0, -1.0])),
             const("mean", np.float32([0.1, 0.2, 0.3])), const("var", np.float32([1.0, 2.0, 0.5]))]
    # img has as many images as channels: onnx.reference's LRN loops over
    # the batch where it means the channels (onnx 1.23).
    m = model(nodes, [f("x", F, [5, 4]), f("img", F, [3, 3, 2, 2])],
              [f("tv", F, [2, 4]), f("ti", TensorProto.INT64, [2, 4]), f("cx", F, [5, 2]),
               f("rx", F, [5, 4]), f("lrn", F, [3, 3, 2, 2]), f("bn", F, [3, 3, 2, 2]),
               f("rmean", F, [3]), f("rvar", F, [3])], inits, opset=15)
    save_data(m, path)


def spectral(path):
    """DFT (one-sided, zero-padded by dft_length; inverse of a complex
    signal) and STFT with a window."""
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("DFT", ["x", "len"], ["fx"], name="dft", axis=1, onesided=1),
        helper.make_node("DFT", ["z"], ["iz"], name="idft", axis=1, inverse=1),
        helper.make_node("STFT", ["sig", "step", "win"], ["st"], name="stft"),
    ]
    inits = [const("len", np.int64(12)), const("step", np.int64(3)),
             const("win", np.hanning(8).astype(np.float32))]
    m = model(nodes, [f("x", F, [2, 10, 1]), f("z", F, [2, 6, 2]), f("sig", F, [1, 20, 1])],
              [f("fx", F, [2, 7, 2]), f("iz", F, [2, 6, 2]), f("st", F, [1, 5, 5, 2])],
              inits, opset=17)
    save_data(m, path)


def control_flow(path):
    """If with a condition known at import (a Greater of two constants)
    whose branch reads the outer scope; Loop with a trip count of 3, a
    loop-carried sum and a scan output; Scan of x's columns in reverse, a
    running sum."""
    f = helper.make_tensor_value_info
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"], name="double")],
                               "then", [], [f("t", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="negate")],
                               "else", [], [f("e", F, [2, 3])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "fi"], ["step"], name="scale"),
         helper.make_node("Add", ["acc_in", "step"], ["acc_out"], name="accumulate"),
         helper.make_node("Identity", ["acc_out"], ["each"])],
        "body", [f("i", TensorProto.INT64, []), f("c_in", TensorProto.BOOL, []),
                 f("acc_in", F, [2, 3])],
        [f("c_out", TensorProto.BOOL, []), f("acc_out", F, [2, 3]), f("each", F, [2, 3])])
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["run_in", "column"], ["run_out"], name="running_sum"),
         helper.make_node("Identity", ["run_out"], ["partial"])],
        "scan_body", [f("run_in", F, [2]), f("column", F, [2])],
        [f("run_out", F, [2]), f("partial", F, [2])])
    nodes = [
        helper.make_node("Greater", ["a", "b"], ["cond"], name="choose"),
        helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g,
                         else_branch=else_g),
        helper.make_node("Loop", ["trips", "", "x"], ["total", "steps"], name="loop", body=body),
        helper.make_node("Scan", ["x0", "x"], ["last", "sums"], name="scan", body=scan_body,
                         num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                         scan_output_axes=[1]),
    ]
    inits = [const("a", np.int64(2)), const("b", np.int64(1)),
             const("two", np.float32(2.0)), const("trips", np.int64(3)),
             const("x0", np.float32([0.5, -1.0]))]
    m = model(nodes, [f("x", F, [2, 3])],
              [f("y", F, [2, 3]), f("total", F, [2, 3]), f("steps", F, [3, 2, 3]),
               f("last", F, [2]), f("sums", F, [2, 3])], inits)
    save_data(m, path, onnxruntime_outputs(m))


def quantize(path):
    """QuantizeLinear per channel to uint8 and per tensor to int8 (rounding
    half to even, saturating), DequantizeLinear per channel and of int32."""
    f = helper.make_tensor_value_info
    U8, I8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s3", "z3"], ["qu"], name="qu", axis=1),
        helper.make_node("QuantizeLinear", ["x", "s", "zs"], ["qs"], name="qs"),
        helper.make_node("DequantizeLinear", ["qu", "s3", "z3"], ["dq"], name="dq", axis=1),
        helper.make_node("DequantizeLinear", ["acc", "s"], ["da"], name="da"),
    ]
    inits = [const("s3", np.float32([0.01, 0.02, 0.5])), const("z3", np.uint8([128, 0, 3])),
             const("s", np.float32(0.015)), const("zs", np.int8(-4))]
    m = model(nodes, [f("x", F, [2, 3, 4]), f("acc", I32, [5])],
              [f("qu", U8, [2, 3, 4]), f("qs", I8, [2, 3, 4]), f("dq", F, [2, 3, 4]),
               f("da", F, [5])], inits)
    save_data(m, path, onnxruntime_outputs(m))


def windows3d(path):
    """3-D windows: a grouped, strided, dilated, padded Conv; MaxPool with
    ceil_mode; AveragePool not counting the padding; a 3-D ConvTranspose;
    a 2-D MaxPool with dilations, and one with its Indices (column-major)."""
    rng = np.random.default_rng(3)
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv3d", group=2,
                         strides=[2, 1, 2], dilations=[1, 2, 1], pads=[1, 0, 1, 0, 2, 1]),
        helper.make_node("MaxPool", ["x"], ["mp"], name="maxpool3d", kernel_shape=[2, 3, 2],
                         strides=[2, 2, 2], ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["ap"], name="avgpool3d", kernel_shape=[3, 3, 3],
                         pads=[1, 1, 1, 1, 1, 1], strides=[2, 2, 2]),
        helper.make_node("ConvTranspose", ["x", "wt"], ["ct"], name="convtranspose3d",
                         strides=[2, 1, 2], pads=[0, 1, 0, 1, 0, 0]),
        helper.make_node("MaxPool", ["img"], ["dmp"], name="dilated", kernel_shape=[2, 2],
                         dilations=[2, 3], pads=[1, 1, 0, 1]),
        helper.make_node("MaxPool", ["img"], ["mpv", "mpi"], name="argmax", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1], storage_order=1),
    ]
    inits = [const("w", rng.standard_normal([4, 2, 2, 3, 2]).astype(np.float32)),
             const("b", rng.standard_normal([4]).astype(np.float32)),
             const("wt", rng.standard_normal([4, 3, 2, 2, 3]).astype(np.float32))]
    m = model(nodes, [f("x", F, [1, 4, 5, 6, 7]), f("img", F, [2, 3, 7, 8])],
              [f("c", F, [1, 4, 3, 4, 4]), f("mp", F, [1, 4, 3, 3, 4]),
               f("ap", F, [1, 4, 3, 3, 4]), f("ct", F, [1, 3, 9, 6, 15]),
               f("dmp", F, [2, 3, 6, 7]), f("mpv", F, [2, 3, 4, 4]),
               f("mpi", TensorProto.INT64, [2, 3, 4, 4])], inits)
    save_data(m, path, onnxruntime_outputs(m))


def grid_sample(path):
    """GridSample with a grid reaching past the image: linear with
    reflection and align_corners, cubic with border padding, nearest with
    zeros. Opset 20's mode names (opset 16's bilinear/bicubic are the
    same); expected outputs from ONNX's reference, which moves out-of-border
    coordinates into the image before taking cubic taps (ONNX Runtime 1.32
    does not, for cubic: 6 of these 108 values differ there). RoiAlign
    (average and maximum) of regions partly outside the image."""
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Mul", ["g", "reach"], ["grid"], name="widen"),
        helper.make_node("GridSample", ["x", "grid"], ["lin"], name="linear",
                         mode="linear", padding_mode="reflection", align_corners=1),
        helper.make_node("GridSample", ["x", "grid"], ["cub"], name="cubic",
                         mode="cubic", padding_mode="border"),
        helper.make_node("GridSample", ["x", "grid"], ["near"], name="nearest",
                         mode="nearest", padding_mode="zeros"),
        helper.make_node("RoiAlign", ["x", "rois", "which"], ["ra"], name="roi_avg",
                         output_height=2, output_width=3, sampling_ratio=2, spatial_scale=0.5),
        helper.make_node("RoiAlign", ["x", "rois", "which"], ["rm"], name="roi_max",
                         mode="max", coordinate_transformation_mode="output_half_pixel",
                         output_height=3, output_width=2, sampling_ratio=3),
    ]
    m = model(nodes, [f("x", F, [2, 3, 4, 5]), f("g", F, [2, 3, 6, 2])],
              [f("lin", F, [2, 3, 3, 6]), f("cub", F, [2, 3, 3, 6]), f("near", F, [2, 3, 3, 6]),
               f("ra", F, [3, 3, 2, 3]), f("rm", F, [3, 3, 3, 2])],
              [const("reach", np.float32(1.5)),
               const("rois", np.float32([[0, 0, 8, 6], [1.5, 0.5, 4.2, 3.9], [-1, 2, 6, 9]])),
               const("which", np.int64([1, 0, 1]))], opset=20)
    save_data(m, path)


def data_condition(path):
    """An If whose condition is a graph input's comparison: not known at
    import time."""
    f = helper.make_tensor_value_info
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                               [f("t", F, [2])])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [],
                               [f("e", F, [2])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="total", keepdims=0),
             helper.make_node("Less", ["s", "zero"], ["c"], name="negative"),
             helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_g,
                              else_branch=else_g)]
    m = model(nodes, [f("x", F, [2])], [f("y", F, [2])], [const("zero", np.float32(0))])
    onnx.save(m, path)


def adaptive_roi_align(path):
    """RoiAlign with sampling_ratio 0 (the adaptive grid)."""
    f = helper.make_tensor_value_info
    nodes = [helper.make_node("RoiAlign", ["x", "rois", "which"], ["y"], name="pool_rois",
                              output_height=2, output_width=2)]
    m = model(nodes, [f("x", F, [1, 1, 4, 4])], [f("y", F, [1, 1, 2, 2])],
              [const("rois", np.float32([[0, 0, 3, 3]])), const("which", np.int64([0]))],
              opset=16)
    onnx.save(m, path)


def big_det(path):
    """Det of 5x5 matrices."""
    f = helper.make_tensor_value_info
    m = model([helper.make_node("Det", ["x"], ["y"], name="det")],
              [f("x", F, [5, 5])], [f("y", F, [])])
    onnx.save(m, path)


def main():
    case, out = sys.argv[1], sys.argv[2]
    if case.startswith("external:"):
        external(out, case.split(":", 1)[1])
    else:
        globals()[case](out)


if __name__ == "__main__":
    main()
