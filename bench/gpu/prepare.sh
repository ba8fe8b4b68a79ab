#!/usr/bin/env bash
# Builds everything bench/gpu/run.sh needs on a GPU machine, here (no GPU
# needed): the CUDA modules (cubin + PTX for sm_80 and sm_90, compiled by
# NVRTC), the runtime library, the timing program, the GPT-2 weights as
# .npy files (from `dlc run --save-params`), and the scripts, in one folder
# (default build/bench-gpu, under 60 MB). Copy that folder to the GPU
# machine and run its run.sh.
#
#   bench/gpu/prepare.sh [OUT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/bench-gpu}
BUILD=$ROOT/build
DLC=$BUILD/bin/dlc
ARCHS=cuda:sm_80,sm_90

ninja -C "$BUILD" dlc dlc-bench-gpu dlc_runtime >/dev/null
rm -rf "$OUT"
mkdir -p "$OUT/modules" "$OUT/weights" "$OUT/lib" "$OUT/src"
cp "$BUILD/bin/dlc-bench-gpu" "$OUT/"
cp -P "$BUILD"/lib/libdlc_runtime.so* "$OUT/lib/"
cp "$ROOT/bench/gpu/run.sh" "$ROOT/bench/gpu/bench_gpu.py" "$ROOT/bench/gpu/check_gpu.py" \
  "$ROOT/test/e2e_lib/dlc_runtime_ctypes.py" \
  "$ROOT/bench/gpu/torch_gpt2.py" "$OUT/"

# 1. The GPT-2 block's weights, exactly as dlc draws them.
"$DLC" run "$ROOT/examples/gpt2_block.dlg" --dim B=1 --dim T=2 --device reference --random-inputs \
  --save-params "$OUT/params.npz" >/dev/null
python3 - "$OUT" <<'PY'
import sys, numpy as np
out = sys.argv[1]
for name, value in np.load(f"{out}/params.npz").items():
    np.save(f"{out}/weights/{name}.npy", np.ascontiguousarray(value, np.float32))
PY
rm "$OUT/params.npz"

# 2. Sources: the GPT-2 block with its parameters as graph inputs (so one
#    copy of the weights serves every shape), a large GEMM, and memory-bound
#    fused kernels.
python3 - "$ROOT/examples/gpt2_block.dlg" "$OUT/src/gpt2_block.dlg" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
params = re.findall(r"^\s*param\s+(\w+)\s*:\s*([^=]+?)\s*=.*$", text, re.M)
text = re.sub(r"^\s*param\s+.*\n", "", text, flags=re.M)
extra = "".join(f", {n}: {t}" for n, t in params)
text = text.replace("graph gpt2_block(x: f32[B, T, 768])", f"graph gpt2_block(x: f32[B, T, 768]{extra})")
open(sys.argv[2], "w").write(text)
PY
cat > "$OUT/src/gemm.dlg" <<'DLG'
# A large square GEMM: 4096 x 4096 x 4096 in float32.
graph gemm(a: f32[4096, 4096], b: f32[4096, 4096]) -> (c: f32[4096, 4096]) {
  c = a @ b
}
DLG
for t in bf16 f16; do
cat > "$OUT/src/gemm_$t.dlg" <<DLG
# The same GEMM with $t operands and result (f32 accumulation, tensor cores).
graph gemm(a: $t[4096, 4096], b: $t[4096, 4096]) -> (c: $t[4096, 4096]) {
  c = a @ b
}
DLG
done
cat > "$OUT/src/bias_gelu.dlg" <<'DLG'
# Memory-bound, element-wise: bias + tanh GELU over 8192 x 3072 (one kernel).
graph bias_gelu(x: f32[8192, 3072], b: f32[3072]) -> (y: f32[8192, 3072]) {
  y = gelu(x + b, approximate="tanh")
}
DLG
cat > "$OUT/src/layer_norm.dlg" <<'DLG'
# Memory-bound, a reduction per row: layer_norm over 16384 rows of 768.
graph layer_norm(x: f32[16384, 768], g: f32[768], b: f32[768]) -> (y: f32[16384, 768]) {
  y = layer_norm(x, g, b, axis=-1, epsilon=1e-5)
}
DLG
cat > "$OUT/src/softmax.dlg" <<'DLG'
# Memory-bound, a reduction per row: softmax over 49152 rows of 512.
graph softmax(x: f32[49152, 512]) -> (y: f32[49152, 512]) {
  y = softmax(x, axis=-1)
}
DLG
cat > "$OUT/src/column_sum.dlg" <<'DLG'
# Memory-bound, a reduction to a vector: a bias gradient's sum over 4096
# positions of 3072 features (one row: split over blocks).
graph column_sum(x: f32[4096, 3072]) -> (y: f32[3072]) {
  y = reduce_sum(x, axes=[0])
}
DLG
cat > "$OUT/src/conv.dlg" <<'DLG'
# A ResNet-50 stage-3 convolution (3x3, 256 -> 256 channels, 14x14, batch 32)
# with its bias and ReLU: an implicit GEMM of 256 x 196 x 2304 per image.
graph conv(x: f32[32, 256, 14, 14], w: f32[256, 256, 3, 3], b: f32[256]) -> (y: f32[32, 256, 14, 14]) {
  y = relu(conv2d(x, w, b, padding=1))
}
DLG

# Library GEMMs (cuBLASLt) in the forms dlc records them: an epilogue of
# bias + tanh-GELU (f32; bf16; an MLP's first GEMM as --precision bf16
# makes it: a bf16 result, an f32 bias); transposed operands with bias +
# ReLU; a batched product with a residual, in bf16.
cat > "$OUT/src/lib_fc.dlg" <<'DLG'
graph lib_fc(x: f32[512, 768], w: f32[768, 3072], b: f32[3072]) -> (y: f32[512, 3072]) {
  y = gelu(x @ w + b, approximate="tanh")
}
DLG
cat > "$OUT/src/lib_transposed.dlg" <<'DLG'
graph lib_transposed(a: f32[768, 384], b: f32[640, 768], c: f32[640]) -> (y: f32[384, 640]) {
  y = relu(matmul(a, b, transpose_a=true, transpose_b=true) + c)
}
DLG
cat > "$OUT/src/lib_fc_bf16.dlg" <<'DLG'
graph lib_fc_bf16(x: bf16[512, 768], w: bf16[768, 3072], b: bf16[3072]) -> (y: bf16[512, 3072]) {
  y = gelu(x @ w + b, approximate="tanh")
}
DLG
cat > "$OUT/src/lib_mlp.dlg" <<'DLG'
graph lib_mlp(x: f32[512, 768], w: f32[768, 3072], b: f32[3072], w2: f32[3072, 768]) -> (y: f32[512, 768]) {
  y = gelu(x @ w + b, approximate="tanh") @ w2
}
DLG
cat > "$OUT/src/lib_batched.dlg" <<'DLG'
graph lib_batched(a: bf16[8, 256, 64], b: bf16[8, 64, 320], r: bf16[8, 256, 320]) -> (y: bf16[8, 256, 320]) {
  y = a @ b + r
}
DLG

# 3. Compile (NVRTC for both architectures; the cuda-emu object too).
compile() { "$DLC" compile "$1" --target=$ARCHS -o "$OUT/modules/$2.dlcm" "${@:3}"; }
compile "$OUT/src/gpt2_block.dlg" gpt2_b1_t128 --dim B=1 --dim T=128
compile "$OUT/src/gpt2_block.dlg" gpt2_b8_t512 --dim B=8 --dim T=512
compile "$OUT/src/gemm.dlg" gemm_4096
# Tensor cores (issue 17): TF32 products of f32 operands, bf16 and f16 GEMMs,
# and the GPT-2 block with --precision bf16 (its products in bf16, as
# PyTorch's autocast).
compile "$OUT/src/gemm.dlg" gemm_4096_tf32 --precision tf32
compile "$OUT/src/gemm_bf16.dlg" gemm_4096_bf16
compile "$OUT/src/gemm_f16.dlg" gemm_4096_f16
for precision in tf32 bf16 f16; do
  compile "$OUT/src/gpt2_block.dlg" gpt2_b8_t512_$precision --dim B=8 --dim T=512 --precision $precision
done
for precision in f32 tf32 bf16; do
  compile "$OUT/src/conv.dlg" conv_$precision --precision $precision
done
for m in lib_fc lib_transposed lib_batched lib_fc_bf16; do compile "$OUT/src/$m.dlg" $m; done
# An MLP as --precision bf16 makes it: bf16 products; the first GEMM's
# result bf16 (the second's operand), its bias f32.
compile "$OUT/src/lib_mlp.dlg" lib_mlp_bf16 --precision bf16
compile "$OUT/src/bias_gelu.dlg" bias_gelu
compile "$OUT/src/layer_norm.dlg" layer_norm
compile "$OUT/src/softmax.dlg" softmax
compile "$OUT/src/column_sum.dlg" column_sum
# GPT-2 small whole (124M parameters, T = 1024, batch 8), f32 and with
# bf16 products: its weights drawn by the runtime when it loads the module
# (--draw-params, module format 1.5), so the module holds code only.
cp "$ROOT/bench/models/gpt2_small.dlg" "$OUT/src/"
compile "$OUT/src/gpt2_small.dlg" gpt2_small_b8 --dim B=8 --draw-params
compile "$OUT/src/gpt2_small.dlg" gpt2_small_b8_bf16 --dim B=8 --draw-params --precision bf16
"$DLC" compile "$OUT/src/gpt2_block.dlg" --dim B=1 --dim T=128 --target=$ARCHS --emit=cuda \
  > "$OUT/src/gpt2_b1_t128.cu"

du -sh "$OUT"
echo "copy $OUT to the GPU machine and run: ./run.sh"
