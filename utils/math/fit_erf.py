"""Fits the rational erf approximation of kiln-expand-math (ExpandErfF32)
and measures it in f32 arithmetic.

    /usr/bin/python3 utils/math/fit_erf.py [NUM_DEGREE DEN_DEGREE]

erf(x) ~ x P(x^2) / Q(x^2) on [0, 3.92] (beyond, erf rounds to 1 in f32),
P and Q of the given degrees in t = x^2 (5 and 5 by default), Q(0) = 1.
The fit minimises the relative error by iteratively reweighted least
squares on the linearised problem P(t) - g(t) Q(t) = 0, g = erf(x) / x
(Lawson's weights push it towards the minimax fit). Prints the model's
largest relative error in float64, then the coefficients rounded to f32
(highest degree first, as ExpandMath.cpp lists them) and the largest
error in ulp of the f32 evaluation (Horner with and without fused
multiply-adds, the input clamped to [-4, 4], the result to [-1, 1])
against float64 over [-5, 5]. Needs numpy and scipy (Debian:
python3-numpy, python3-scipy); nothing in the build or tests runs it.
"""
import sys

import numpy as np
from scipy.special import erf


def fit(num_degree, den_degree, limit=3.92, iterations=60):
    x = np.unique(np.concatenate([np.linspace(1e-4, limit, 20000),
                                  limit * np.sin(np.linspace(0, np.pi / 2, 20000))]))
    x = x[x > 0]
    t, g = x * x, erf(x) / x
    weights, q_values = np.ones_like(t), np.ones_like(t)
    for _ in range(iterations):
        a = np.concatenate([t[:, None] ** np.arange(num_degree + 1),
                            -g[:, None] * t[:, None] ** np.arange(1, den_degree + 1)], axis=1)
        scale = np.sqrt(weights) / (np.abs(q_values) * g)
        solution, *_ = np.linalg.lstsq(a * scale[:, None], g * scale, rcond=None)
        p = solution[:num_degree + 1]
        q = np.concatenate([[1.0], solution[num_degree + 1:]])
        p_values, q_values = np.polyval(p[::-1], t), np.polyval(q[::-1], t)
        error = (p_values / q_values - g) / g
        weights = weights * (np.abs(error) + 1e-3 * np.abs(error).max())
        weights /= weights.mean()
    return p, q, np.abs(error).max()


def evaluate_f32(p, q, x, fused):
    p, q = p.astype(np.float32), q.astype(np.float32)
    xc = np.clip(x, -4, 4).astype(np.float32)
    t = (xc * xc).astype(np.float32)

    def horner(coefficients):
        r = np.full_like(t, coefficients[-1])
        for c in coefficients[-2::-1]:
            if fused:
                r = (r.astype(np.float64) * t + c).astype(np.float32)
            else:
                r = ((r * t).astype(np.float32) + c).astype(np.float32)
        return r

    y = ((xc * horner(p)).astype(np.float32) / horner(q)).astype(np.float32)
    return np.clip(y, -1, 1)


def main():
    num_degree, den_degree = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (5, 5)
    p, q, model_error = fit(num_degree, den_degree)
    print("largest relative error of the model (float64): %.3g" % model_error)
    print("P, highest degree first:", ", ".join(repr(float(c)) for c in p.astype(np.float32)[::-1]))
    print("Q, highest degree first:", ", ".join(repr(float(c)) for c in q.astype(np.float32)[::-1]))
    x = np.concatenate([np.linspace(-5, 5, 2000001), np.geomspace(1e-30, 1, 20000)]).astype(np.float32)
    x = np.concatenate([x, -x])
    reference = erf(x.astype(np.float64))
    ulp = np.spacing(np.abs(reference.astype(np.float32))).astype(np.float64)
    for fused in (True, False):
        y = evaluate_f32(p, q, x, fused)
        worst = np.abs(y.astype(np.float64) - reference) / ulp
        print("f32, %s: at most %.2f ulp (at x = %r)" % (
            "fused multiply-adds" if fused else "separate multiply and add", worst.max(),
            float(x[worst.argmax()])))


if __name__ == "__main__":
    main()
