#!/usr/bin/env bash
# README command (a): install what is missing, build, run the MNIST MLP
# example on the default device with a seeded random batch of 4, then train
# the Fashion-MNIST MLP for 5 epochs (about 10 s on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh dlc
build/bin/dlc run examples/mnist_mlp.dlg --dim N=4 --seed 1
exec build/bin/dlc train examples/fashion_mnist/mlp.dlg \
  --data /usr/share/datasets/fashion-mnist --epochs 5 --batch-size 64
