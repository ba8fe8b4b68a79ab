# -*- Python -*-
# lit configuration for dlc: IR, pass, frontend, tool and end-to-end tests,
# and the GoogleTest unit tests (run through lit's GoogleTest format so one
# runner counts everything).

import ctypes.util
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "dlc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".dlg", ".test", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "unit", "e2e_lib"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dlc_obj_root, "test")

llvm_config.use_default_substitutions()
# The build's tools first, then LLVM's (FileCheck, not), then the system's.
config.environment["PATH"] = os.pathsep.join(
    [config.dlc_tools_dir, config.llvm_tools_dir, os.environ.get("PATH", "")])
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%dlc_src", config.dlc_src_root))
config.substitutions.append(("%dlc_obj", config.dlc_obj_root))
config.substitutions.append(
    ("%expect_exit", config.python_executable + " " +
     os.path.join(config.dlc_src_root, "test", "e2e_lib", "expect_exit.py")))
config.environment["PYTHONPATH"] = os.path.join(config.dlc_src_root, "test", "e2e_lib")

# Features: `cuda` only where a driver and a device are present.
if os.path.exists("/dev/nvidia0") and shutil.which("nvidia-smi"):
    config.available_features.add("cuda")
# Open MPI's launcher (scripts/setup.sh installs openmpi-bin): the
# distributed tests run dlc-comm-check under it. %mpirun also works as root
# and with more ranks than cores (NOTES.md).
if shutil.which("mpirun"):
    config.available_features.add("mpi")
config.substitutions.append(("%mpirun", "mpirun --allow-run-as-root --oversubscribe"))
# NCCL where the loader finds it (the CUDA toolkit's libnccl.so.2).
if ctypes.util.find_library("nccl"):
    config.available_features.add("nccl")
# Debian's dataset-fashion-mnist (scripts/setup.sh installs it).
if os.path.isdir("/usr/share/datasets/fashion-mnist"):
    config.available_features.add("fashion-mnist")
# oneDNN's AVX-512 kernels (its avx512_core: F, BW, DQ and VL), which have
# Winograd convolutions; elsewhere dlc's 3x3 convolutions run its direct
# kernels (same results within the tests' tolerances).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((line.split(":", 1)[1].split() for line in cpuinfo
                      if line.startswith("flags")), [])
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= set(flags):
        config.available_features.add("avx512")
except OSError:
    pass
# A private mount namespace with a small tmpfs (a real full disk for the
# checkpoint tests): as root, or through an unprivileged user namespace.
import subprocess
try:
    if subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                       "mount -t tmpfs -o size=64k tmpfs /tmp"],
                      capture_output=True, timeout=10).returncode == 0:
        config.available_features.add("tmpfs-mount")
except (OSError, subprocess.TimeoutExpired):
    pass
