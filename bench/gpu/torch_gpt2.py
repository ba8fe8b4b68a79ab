"""PyTorch's form of examples/gpt2_block.dlg, the baseline of the GPU
benchmark (bench_gpu.py) and the reference of its checks (check_gpu.py):
the same ops in the same order, on the weights dlc drew (weights/*.npy)."""
import torch


def torch_block(w, x):
    B, T, C = x.shape

    def ln(v, g, b):
        return torch.nn.functional.layer_norm(v, (C,), g, b, 1e-5)

    def heads(v):
        return v.view(B, T, 12, 64).transpose(1, 2)

    h = ln(x, w["ln_1_g"], w["ln_1_b"])
    q, k, v = (heads(h @ w[f"w_{n}"] + w[f"b_{n}"]) for n in "qkv")
    s = (q @ k.transpose(-1, -2)) * 0.125
    mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    p_ = torch.softmax(torch.where(mask, s, torch.tensor(-1e9, device=x.device)), -1)
    merged = (p_ @ v).transpose(1, 2).reshape(B, T, C)
    r = x + (merged @ w["w_o"] + w["b_o"])
    h2 = ln(r, w["ln_2_g"], w["ln_2_b"])
    m = torch.nn.functional.gelu(h2 @ w["w_fc"] + w["b_fc"], approximate="tanh")
    return r + (m @ w["w_proj"] + w["b_proj"])
