#!/usr/bin/env python3
"""Generates the checked-in real-model tests of test/models/ (run once, by hand).

Each model is built with a tiny configuration and a fixed seed (random
weights), exported by PyTorch twice:

  <name>-opset17.onnx   torch.onnx.export(..., dynamo=False, opset_version=17)
                        (the TorchScript exporter)
  <name>-opset20.onnx   torch.onnx.export(..., dynamo=True) with the exporter's
                        default opset (20 for torch 2.15), weights embedded
                        (external_data=False)

and beside each `<name>-opset<N>.npz` holds the model's inputs as
`input:<onnx input name>` and ONNX Runtime's outputs (CPU provider, on those
inputs) as `output:<onnx output name>`. run_models.py (needing only NumPy)
runs every checked-in model on dlc's cpu and cuda-emu devices and compares.

Environment it was run in (a venv outside the repository, PyPI only):

  python3 -m venv /opt/export-venv
  /opt/export-venv/bin/pip install torch==2.15.0 torchvision transformers \
      onnx onnxscript onnxruntime numpy
  /opt/export-venv/bin/python test/models/export.py [--only NAME ...]

  torch 2.15.0 (+cu132 wheel from PyPI, run on the CPU), torchvision 0.29.2,
  transformers 5.24.0, onnx 1.23.2, onnxscript 0.7.2, onnxruntime 1.32.0,
  numpy 2.4.6.

Shapes are fixed (batch 2); nothing is left symbolic. ONNX Runtime's outputs
are also checked against PyTorch's here (a generator sanity check).
"""

import argparse
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
TORCHSCRIPT_OPSET = 17


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------

class BasicBlock(nn.Module):
    """ResNet-18's BasicBlock: two 3x3 convs with BatchNorm, a projection
    shortcut (1x1 conv + BN) where the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + idt)


class ResNet18Tiny(nn.Module):
    """ResNet-18's layout ([2, 2, 2, 2] BasicBlocks, 7x7 stem, max pool,
    global average pool, fc) at widths 8-16-24-32."""

    def __init__(self, widths=(8, 16, 24, 32), classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            layers += [BasicBlock(cin, w, stride), BasicBlock(w, w, 1)]
            cin = w
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def randomize_batchnorm(model, gen):
    """Non-trivial running statistics and affine parameters (a fresh
    BatchNorm's are the identity, which would test nothing)."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)


def make_resnet(gen):
    m = ResNet18Tiny()
    randomize_batchnorm(m, gen)
    return m, {"x": torch.randn(2, 3, 32, 32, generator=gen)}, ["logits"]


def make_mobilenetv2(gen):
    """torchvision's MobileNetV2 at width 0.25 (inverted residuals, depthwise
    convs, ReLU6), its 1280-wide last conv narrowed to 64 to stay small."""
    from torchvision.models import mobilenet_v2
    from torchvision.ops.misc import Conv2dNormActivation
    m = mobilenet_v2(weights=None, width_mult=0.25, num_classes=10)
    cin = m.features[-1][0].in_channels
    m.features[-1] = Conv2dNormActivation(cin, 64, kernel_size=1,
                                          norm_layer=nn.BatchNorm2d,
                                          activation_layer=nn.ReLU6)
    m.classifier[1] = nn.Linear(64, 10)
    m.last_channel = 64
    randomize_batchnorm(m, gen)
    return m, {"x": torch.randn(2, 3, 32, 32, generator=gen)}, ["logits"]


class TransformerEncoderModel(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                           dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=2,
                                         enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


def make_transformer(gen):
    return (TransformerEncoderModel(),
            {"x": torch.randn(2, 8, 32, generator=gen)}, ["y"])


class LstmModel(nn.Module):
    """A 2-layer batch-first LSTM and a linear head on every step."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=8, hidden_size=16, num_layers=2,
                            batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


def make_lstm(gen):
    return LstmModel(), {"x": torch.randn(2, 6, 8, generator=gen)}, ["y"]


class HfWrapper(nn.Module):
    """Calls a transformers model with keyword inputs and returns a tuple
    (no cache, no dict) so both exporters see plain tensors."""

    def __init__(self, model, keys):
        super().__init__()
        self.model = model
        self.keys = keys

    def forward(self, *args):
        out = self.model(**dict(zip(self.keys, args)), return_dict=False)
        return tuple(o for o in out if isinstance(o, torch.Tensor))


def make_gpt2(gen):
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(vocab_size=100, n_positions=16, n_embd=32, n_layer=2,
                     n_head=2, bos_token_id=0, eos_token_id=0, use_cache=False,
                     attn_implementation="eager")
    m = GPT2LMHeadModel(cfg)
    ids = torch.randint(0, 100, (2, 8), generator=gen)
    # With an attention mask (as Optimum exports GPT-2): without one,
    # transformers' packed-sequence check calls aten::diff, which the
    # TorchScript exporter cannot export.
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 6:] = 0  # the second sequence is right-padded
    return (HfWrapper(m, ["input_ids", "attention_mask"]),
            {"input_ids": ids, "attention_mask": mask}, ["logits"])


def make_bert(gen):
    from transformers import BertConfig, BertModel
    cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64,
                     max_position_embeddings=16, attn_implementation="eager")
    m = BertModel(cfg)
    ids = torch.randint(0, 100, (2, 8), generator=gen)
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 6:] = 0  # the second sequence is padded
    types = torch.zeros(2, 8, dtype=torch.int64)
    types[:, 4:] = 1
    return (HfWrapper(m, ["input_ids", "attention_mask", "token_type_ids"]),
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            ["last_hidden_state", "pooler_output"])


def make_vit(gen):
    from transformers import ViTConfig, ViTModel
    cfg = ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32,
                    num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, attn_implementation="eager")
    m = ViTModel(cfg)
    return (HfWrapper(m, ["pixel_values"]),
            {"pixel_values": torch.randn(2, 3, 16, 16, generator=gen)},
            ["last_hidden_state", "pooler_output"])


MODELS = {
    "resnet18": make_resnet,
    "mobilenetv2": make_mobilenetv2,
    "transformer_encoder": make_transformer,
    "gpt2": make_gpt2,
    "bert": make_bert,
    "vit": make_vit,
    "lstm": make_lstm,
}


# ---------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------

def export(name, make, dynamo):
    import onnx
    import onnxruntime as ort
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model, inputs, out_names = make(gen)
    model.eval()
    args = tuple(inputs.values())
    with torch.no_grad():
        ref = model(*args)
    ref = ref if isinstance(ref, tuple) else (ref,)
    tmp = os.path.join(HERE, name + ".tmp.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            prog = torch.onnx.export(model, args, dynamo=True, external_data=False,
                                     input_names=list(inputs),
                                     output_names=out_names)
            prog.save(tmp, external_data=False)
        else:
            torch.onnx.export(model, args, tmp, dynamo=False,
                              opset_version=TORCHSCRIPT_OPSET,
                              input_names=list(inputs), output_names=out_names,
                              do_constant_folding=True)
    proto = onnx.load(tmp)
    opset = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    path = os.path.join(HERE, "%s-opset%d.onnx" % (name, opset))
    os.replace(tmp, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {i.name: inputs[i.name].numpy() for i in sess.get_inputs()}
    outs = sess.run(None, feed)
    arrays = {"input:" + k: v for k, v in feed.items()}
    for o, v, r in zip(sess.get_outputs(), outs, ref):
        arrays["output:" + o.name] = v
        err = np.abs(v - r.numpy()).max()
        assert err < 1e-4, "%s: ONNX Runtime and PyTorch differ by %g" % (path, err)
    np.savez_compressed(path[:-5] + ".npz", **arrays)
    print("%-40s opset %d IR %d  %7.1f KiB  %d nodes" % (
        os.path.basename(path), opset, proto.ir_version,
        os.path.getsize(path) / 1024, len(proto.graph.node)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=list(MODELS))
    ap.add_argument("--exporter", choices=["both", "torchscript", "dynamo"],
                    default="both")
    a = ap.parse_args()
    for name in a.only:
        for dynamo in (False, True):
            if a.exporter != "both" and (a.exporter == "dynamo") != dynamo:
                continue
            try:
                export(name, MODELS[name], dynamo)
            except Exception as e:  # report and go on with the others
                print("%s (dynamo=%s): FAILED: %s" % (name, dynamo, e), file=sys.stderr)


if __name__ == "__main__":
    main()
