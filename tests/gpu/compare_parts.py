#!/usr/bin/env python3
"""compare_parts.py WAVE.json GEOMETRIC.json BAND... - the wave and geometric parts of a hybrid
run side by side (roomsim analyze --part wave and --part geometric): per pair and band, the
strength G (its difference is the energy's), T30 (T20 where the response is too short for
T30) and EDT, then the mean over the pairs."""
import json
import math
import sys

wave, geo = (json.load(open(p)) for p in sys.argv[1:3])
bands = sys.argv[3:]
means = {b: [0.0, 0.0, 0.0, 0] for b in bands}
print(f"{'pair':24} {'band':>5} {'G wave':>8} {'G geo':>8} {'dG dB':>7} {'T wave':>7} {'T geo':>7}"
      f" {'dT %':>6} {'EDT w':>6} {'EDT g':>6}")
for pw, pg in zip(wave["pairs"], geo["pairs"]):
    for b in bands:
        bw = next((x for x in pw["bands"] if x["band"] == b), None)
        bg = next((x for x in pg["bands"] if x["band"] == b), None)
        if not bw or not bg:
            continue
        key = "T30" if bw.get("T30") is not None and bg.get("T30") is not None else "T20"
        tw, tg = bw.get(key), bg.get(key)
        dg = bg["G"] - bw["G"]
        dt = 100 * (tg / tw - 1) if tw and tg else float("nan")
        print(f"{pw['name']:24} {b:>5} {bw['G']:8.2f} {bg['G']:8.2f} {dg:+7.2f} "
              f"{tw or float('nan'):7.3f} {tg or float('nan'):7.3f} {dt:+6.1f} "
              f"{bw['EDT'] or float('nan'):6.3f} {bg['EDT'] or float('nan'):6.3f}  ({key})")
        m = means[b]
        m[0] += 10 ** (bw["G"] / 10)
        m[1] += 10 ** (bg["G"] / 10)
        if tw and tg:
            m[2] += tg / tw
            m[3] += 1
for b, m in means.items():
    if m[0] > 0 and m[3] > 0:
        print(f"mean {b:>5}: energy geometric against wave {10 * math.log10(m[1] / m[0]):+.2f} dB, "
              f"decay time {100 * (m[2] / m[3] - 1):+.1f} %")
