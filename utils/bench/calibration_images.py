#!/usr/bin/python3
"""Natural-image samples for calibrating and checking INT8 CNNs offline:
random crops (scale, position, mirror) of the two photographs that
scikit-learn ships (sklearn.datasets.load_sample_images), resized to
224x224 and normalised with ImageNet's mean and standard deviation, as
float32 [1, 3, 224, 224] .npy files.

    python3 utils/bench/calibration_images.py OUT_DIR [--count 32] [--seed 0]

Different seeds give different crops: calibrate on one seed, measure on
another (held-out inputs). Two photographs are a narrow sample of what an
ImageNet model sees; the figures they give are a check that quantisation
keeps a CNN's outputs, not an accuracy figure.
"""
import argparse
import os

import numpy as np

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def resize(image, size):
    """Bilinear resize of an HxWx3 float image to size x size."""
    h, w, _ = image.shape
    ys = (np.arange(size) + 0.5) * h / size - 0.5
    xs = (np.arange(size) + 0.5) * w / size - 0.5
    y0 = np.clip(np.floor(ys).astype(int), 0, h - 1)
    x0 = np.clip(np.floor(xs).astype(int), 0, w - 1)
    y1, x1 = np.clip(y0 + 1, 0, h - 1), np.clip(x0 + 1, 0, w - 1)
    fy = np.clip(ys - y0, 0, 1)[:, None, None]
    fx = np.clip(xs - x0, 0, 1)[None, :, None]
    top = image[y0][:, x0] * (1 - fx) + image[y0][:, x1] * fx
    bottom = image[y1][:, x0] * (1 - fx) + image[y1][:, x1] * fx
    return top * (1 - fy) + bottom * fy


def samples(count, seed, size=224):
    from sklearn.datasets import load_sample_images
    photos = [p.astype(np.float32) / 255.0 for p in load_sample_images().images]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        photo = photos[rng.integers(len(photos))]
        h, w, _ = photo.shape
        side = int(min(h, w) * rng.uniform(0.35, 1.0))
        y, x = rng.integers(0, h - side + 1), rng.integers(0, w - side + 1)
        crop = photo[y:y + side, x:x + side]
        if rng.random() < 0.5:
            crop = crop[:, ::-1]
        image = (resize(crop, size) - MEAN) / STD
        out.append(np.ascontiguousarray(image.transpose(2, 0, 1)[None], dtype=np.float32))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for i, x in enumerate(samples(args.count, args.seed)):
        np.save(os.path.join(args.out, "%03d.npy" % i), x)


if __name__ == "__main__":
    main()
