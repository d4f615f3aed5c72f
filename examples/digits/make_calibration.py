"""Writes calibration/NNN.npy: 32 images of the digits training split (not
the held-out test set), one [1, 1, 8, 8] float32 sample per file, for

    kiln compile digits.onnx --quantize=int8 --calibration-data=calibration

Needs scikit-learn (Debian: python3-sklearn); the files are committed, so
running it again is only needed if train.py's split changes.
"""
import os

import numpy as np

from train import load_data

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    x_train, _, _, _ = load_data()
    out = os.path.join(HERE, "calibration")
    os.makedirs(out, exist_ok=True)
    for i in range(32):
        np.save(os.path.join(out, "%03d.npy" % i), x_train[i:i + 1])
    print("wrote %d samples to %s" % (32, out))


if __name__ == "__main__":
    main()
