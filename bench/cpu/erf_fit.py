#!/usr/bin/env python3
"""The coefficients of the CPU prelude's dlc_erff (codegen/cpu/CpuTarget.cpp).

    bench/cpu/erf_fit.py

erf(x) = x * P(x^2) for |x| < 1, fitted for relative error; for 1 <= |x| < 4,
erf(x) = 1 - t * exp(-x^2 + Q(t)) with t = 1 / (1 + x/2) (Numerical
Recipes' substitution for erfc), Q fitted for absolute error in the
exponent. Least squares in double on dense grids (scipy's erf and erfc as
the truth), then the float evaluation the prelude does (Horner in float32)
checked against erf in double: prints the coefficients and the worst
absolute and relative errors (1.4e-7 and 1.8e-7 when this was written).
"""
import numpy as np
from scipy.special import erf, erfc

f32 = np.float32


def fit():
    x = np.linspace(0, 1, 20001)[1:]
    y = erf(x) / x
    a = np.vstack([(x * x) ** k for k in range(7)]).T
    p = np.linalg.lstsq(a / y[:, None], np.ones_like(y), rcond=None)[0]
    x = np.linspace(1, 4, 30001)
    t = 1 / (1 + 0.5 * x)
    q_true = np.log(erfc(x) / t) + x * x
    a = np.vstack([t ** k for k in range(8)]).T
    q = np.linalg.lstsq(a, q_true, rcond=None)[0]
    return [float(f"{c:.9e}") for c in p], [float(f"{c:.9e}") for c in q]


def horner(coefficients, v):
    r = f32(coefficients[-1])
    for c in coefficients[-2::-1]:
        r = f32(r * v + f32(c))
    return r


def erf32(x, p, q):
    x = f32(x)
    a = abs(x)
    if a < 1:
        return f32(x * horner(p, f32(a * a)))
    if a >= 4:
        return f32(np.sign(x))
    t = f32(f32(1) / f32(f32(1) + f32(0.5) * a))
    e = f32(t * np.exp(f32(horner(q, t) - f32(a * a)), dtype=f32))
    return f32(np.sign(x) * f32(1 - e))


def main():
    p, q = fit()
    print("P (x^2, from x^0):", ", ".join(f"{c:.9e}" for c in p))
    print("Q (t, from t^0):  ", ", ".join(f"{c:.9e}" for c in q))
    xs = np.concatenate([np.linspace(-5, 5, 200001), np.geomspace(1e-8, 1, 2000)]).astype(f32)
    truth = erf(xs.astype(np.float64))
    got = np.array([erf32(v, p, q) for v in xs], dtype=np.float64)
    err = np.abs(got - truth)
    rel = err / np.maximum(np.abs(truth), 1e-30)
    print(f"worst absolute error {err.max():.2e}, relative {rel.max():.2e}")


if __name__ == "__main__":
    main()
