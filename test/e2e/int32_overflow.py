# RUN: %python %s
# Regression: i32 mul and pow wrap exactly even when the 64-bit product
# exceeds 2^53 (the oracle wraps before the value becomes a double).
import sys

import numpy as np
from dlc_numpy import check_graph, wrap32


a = np.array([2**31 - 1, -2**31, 123456789, 98765432], np.int32)
bases, exps = np.array([7, 3, 2**31 - 1, 5], np.int32), np.array([20, 40, 2, 27], np.int32)
failed = check_graph("overflow", {"a": a, "bases": bases, "exps": exps}, """
    mul_ = a * a
    pow_ = pow(bases, exps)
""", mul_=wrap32(int(v) * int(v) for v in a),
     pow_=wrap32(int(b) ** int(k) for b, k in zip(bases, exps)))
sys.exit(1 if failed else 0)
