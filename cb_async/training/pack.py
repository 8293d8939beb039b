"""Quantise a trained net (floats) into the integers the search packs, and certify it.

Pure Python, so that a test can build a net without the training extra. The float net is
W (768 x N), b (N) and v (N): unit k's pre-activation seen from a side is b_k plus the sum of
W[f][k] over that side's active inputs f, and the correction is sum_k v_k (crelu(a_k(white)) -
crelu(a_k(black))). Each unit becomes G_k = round(2^shift |v_k|) and the rows G_k W[f][k]
rounded; a unit whose gain rounds to zero adds nothing and is dropped. The shift is the
largest whose gains fit the modular sum and whose lanes stay inside their guard bits
(`network.certify`), so the net is as precise as the packing allows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cb_async.search.network import FEATURES, MAX_GAIN_SUM, PLAIN, Network, NetworkError, Weights, certify


@dataclass(frozen=True)
class FloatNet:
    """The trained net in floats: w[f][k], b[k], v[k] (v in centipawns)."""

    w: list[list[float]]
    b: list[float]
    v: list[float]

    def value(self, white: list[int], black: list[int]) -> float:
        """The correction from White's point of view, unclipped, for the active inputs of each
        side: the float reference that a packed net is compared with."""
        total = 0.0
        for k, weight in enumerate(self.v):
            a_white = self.b[k] + sum(self.w[f][k] for f in white)
            a_black = self.b[k] + sum(self.w[f][k] for f in black)
            total += weight * (min(max(a_white, 0.0), 1.0) - min(max(a_black, 0.0), 1.0))
        return total


def quantise(net: FloatNet, shift: int, clamp: int, inputs: str = PLAIN) -> Weights:
    """The integers of `net` at gain 2^shift (not yet certified); `inputs` as it was trained."""
    scale = float(1 << shift)
    kept = [k for k, weight in enumerate(net.v) if round(scale * abs(weight)) > 0]
    order = sorted(kept, key=lambda k: net.v[k] <= 0)  # positive output weights first
    positive = sum(1 for k in order if net.v[k] > 0)
    gains = tuple(round(scale * abs(net.v[k])) for k in order)
    biases = tuple(round(gain * net.b[k]) for gain, k in zip(gains, order))
    rows = tuple(tuple(round(gain * net.w[f][k]) for gain, k in zip(gains, order)) for f in range(FEATURES))
    return Weights(shift, clamp, positive, gains, biases, rows, inputs)


def dequantise(weights: Weights) -> FloatNet:
    """The float net whose quantisation at `weights.shift` gives back `weights` exactly: where a
    further round of training starts from the net the engine plays with (`eval-train --init`).
    Units whose gain rounded to zero were dropped when the net was packed and stay dropped."""
    scale = float(1 << weights.shift)
    v = [(gain if k < weights.positive else -gain) / scale for k, gain in enumerate(weights.gains)]
    b = [bias / gain for bias, gain in zip(weights.biases, weights.gains)]
    w = [[value / gain for value, gain in zip(row, weights.gains)] for row in weights.rows]
    return FloatNet(w, b, v)


def best_shift(net: FloatNet) -> int:
    """The largest shift whose gains fit the modular sum."""
    total = sum(abs(weight) for weight in net.v)
    if total <= 0:
        raise NetworkError("every output weight is zero")
    return int(math.floor(math.log2(MAX_GAIN_SUM / total)))


def build(net: FloatNet, clamp: int, inputs: str = PLAIN) -> Network:
    """The most precise certified packing of `net`: from the largest shift down, the first
    whose quantised net passes `certify`."""
    shift = best_shift(net)
    while shift > -8:
        weights = quantise(net, shift, clamp, inputs)
        if weights.units and sum(weights.gains) <= MAX_GAIN_SUM:
            try:
                certify(weights)
            except NetworkError:
                shift -= 1
                continue
            return Network(weights)
        shift -= 1
    raise NetworkError("no packing of this net keeps its lanes inside their guard bits")
