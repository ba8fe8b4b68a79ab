"""PyTorch's form of examples/gpt2_block.dlg, the baseline of the GPU
benchmark (bench_gpu.py) and the reference of its checks (check_gpu.py):
the same ops in the same order, on the weights dlc drew (weights/*.npy);
and of bench/models/gpt2_small.dlg (twelve such blocks, named h0_ ... h11_,
between the embeddings and the tied LM head)."""
import re

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


def torch_gpt2_small(w, ids, layers=12):
    """bench/models/gpt2_small.dlg: logits of token ids [B, T]."""
    T = ids.shape[1]
    x = w["wte"][ids] + w["wpe"][:T]
    for i in range(layers):
        p = f"h{i}_"
        x = torch_block({k[len(p):]: v for k, v in w.items() if k.startswith(p)}, x)
    x = torch.nn.functional.layer_norm(x, (x.shape[-1],), w["ln_f_g"], w["ln_f_b"], 1e-5)
    return x @ w["wte"].t()


def random_params(dlg_path, device="cuda"):
    """Every f32 parameter a .dlg declares, drawn by PyTorch from the
    distribution its initialiser names (normal(mean, std), ones, zeros):
    weights for timing, not dlc's values."""
    params = {}
    for name, dims, init in re.findall(r"^\s*param\s+(\w+)\s*:\s*f32\[([^\]]*)\]\s*=\s*(.+)$",
                                       open(dlg_path).read(), re.M):
        shape = [int(d) for d in dims.split(",")]
        if init.startswith("normal"):
            std = float(re.search(r"std\s*=\s*([-+.\deE]+)", init).group(1))
            params[name] = torch.randn(*shape, device=device) * std
        elif init.strip() == "ones":
            params[name] = torch.ones(*shape, device=device)
        elif init.strip() == "zeros":
            params[name] = torch.zeros(*shape, device=device)
        else:
            raise ValueError(f"{name}: initialiser {init!r} not drawn here")
    return params
