#!/usr/bin/env python3
"""compare.py ROOMSIM.json PRA.json EYRING - roomsim analyze's tables of one room from roomsim's
hybrid run and from pyroomacoustics' WAVs, pair by pair in order: T30 and C80 per octave from
125 Hz to 4 kHz beside Eyring's time, then the mean over the pairs."""
import json
import sys

rs, pra = (json.load(open(p)) for p in sys.argv[1:3])
eyring = float(sys.argv[3])
bands = ["125", "250", "500", "1k", "2k", "4k"]
mean = {b: [0, 0, 0, 0, 0] for b in bands}
print(f"{'pair':10} {'band':>5} {'T30 roomsim':>11} {'T30 pra':>8} {'C80 roomsim':>11} "
      f"{'C80 pra':>8}")
for a, b in zip(rs["pairs"], pra["pairs"]):
    for band in bands:
        x = next((v for v in a["bands"] if v["band"] == band), None)
        y = next((v for v in b["bands"] if v["band"] == band), None)
        if not x or not y or x["T30"] is None or y["T30"] is None:
            continue
        print(f"{a['name']:10} {band:>5} {x['T30']:11.3f} {y['T30']:8.3f} {x['C80']:11.2f} "
              f"{y['C80']:8.2f}")
        m = mean[band]
        m[0] += x["T30"]
        m[1] += y["T30"]
        m[2] += x["C80"]
        m[3] += y["C80"]
        m[4] += 1
print(f"mean over pairs (Eyring {eyring:.3f} s):")
for band, m in mean.items():
    if m[4]:
        n = m[4]
        ta, tb = m[0] / n, m[1] / n
        print(f"  {band:>5}: T30 roomsim {ta:.3f} s ({100 * (ta / eyring - 1):+.1f} % of Eyring), "
              f"pyroomacoustics {tb:.3f} s ({100 * (tb / eyring - 1):+.1f} %); "
              f"C80 {m[2] / n:+.2f} dB and {m[3] / n:+.2f} dB")
