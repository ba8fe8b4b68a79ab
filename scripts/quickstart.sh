#!/usr/bin/env bash
# README command (a): install what is missing, build, and run the MNIST MLP
# example on the default device with a seeded random batch of 4.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh dlc
exec build/bin/dlc run examples/mnist_mlp.dlg --dim N=4 --seed 1
