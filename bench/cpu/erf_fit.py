#!/usr/bin/env python3
"""The coefficients of the CPU prelude's dlc_erff and dlc_geluf
(codegen/cpu/CpuTarget.cpp).

    bench/cpu/erf_fit.py

erf(x) = x * P(x^2) for |x| < 1, fitted for relative error; for 1 <= |x| < 4,
erf(x) = 1 - t * exp(-x^2 + Q(t)) with t = 1 / (1 + x/2) (Numerical
Recipes' substitution for erfc), Q fitted for absolute error in the
exponent. Least squares in double on dense grids (scipy's erf and erfc as
the truth), then the float evaluation the prelude does (Horner in float32)
checked against erf in double: prints the coefficients and the worst
absolute and relative errors (1.4e-7 and 1.8e-7 when this was written).

dlc_geluf's erfcx(z) = exp(z^2) erfc(z) on [0, 10] is P(z) / Q(z),
degrees 4 and 5 (Q(0) = 1), fitted for relative error: linearised least
squares (Sanathanan-Koerner: each pass divides by the last Q), then
Lawson's reweighting towards the minimax; prints the coefficients, the
fit's error in double (5.7e-9) and the worst relative error of the float
evaluation with FMAs (3.6e-7).
"""
import numpy as np
from scipy.special import erf, erfc, erfcx

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


def fit_erfcx(degree_p=4, degree_q=5, passes=40):
    z = np.concatenate([np.linspace(0, 3, 30001), np.linspace(3, 10, 30001)[1:]])
    y = erfcx(z)
    weight, last_q = np.ones_like(z), np.ones_like(z)
    for n in range(passes):
        a = np.hstack([np.vstack([z ** k for k in range(degree_p + 1)]).T,
                       np.vstack([-y * z ** k for k in range(1, degree_q + 1)]).T])
        w = weight / (y * last_q)
        c = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)[0]
        p, q = c[:degree_p + 1], np.concatenate([[1.0], c[degree_p + 1:]])
        last_q = np.polyval(q[::-1], z)
        err = (np.polyval(p[::-1], z) / last_q - y) / y
        if n > 8:
            weight = weight * np.sqrt(np.abs(err)) + 1e-300
            weight /= weight.mean()
    return ([float(f"{c:.9e}") for c in p], [float(f"{c:.9e}") for c in q],
            float(np.max(np.abs(err))))


def horner_fma(coefficients, v):
    """Horner in float with each step fused (one rounding), as the AVX2
    clone of a kernel computes it."""
    r = f32(coefficients[-1])
    for c in coefficients[-2::-1]:
        r = f32(np.float64(r) * np.float64(v) + np.float64(f32(c)))
    return r


def main():
    p, q, fit_error = fit_erfcx()
    print("erfcx P (z, from z^0):", ", ".join(f"{c:.9e}" for c in p))
    print("erfcx Q (z, from z^0):", ", ".join(f"{c:.9e}" for c in q))
    z = np.linspace(0, 10, 1000001).astype(f32)
    got = (horner_fma(p, z) / horner_fma(q, z)).astype(np.float64)
    truth = erfcx(z.astype(np.float64))
    print(f"erfcx: fit {fit_error:.2e} in double, worst relative error in float "
          f"{np.max(np.abs(got - truth) / truth):.2e}")
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
