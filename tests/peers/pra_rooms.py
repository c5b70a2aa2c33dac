#!/usr/bin/env python3
"""pra_rooms.py OUTDIR - the rooms of tests/peers/pyroomacoustics.sh through pyroomacoustics:
a 6 x 5 x 3 m shoebox and an L-shaped room (8 x 9 x 3 m), absorption 0.2 and scattering 0.7 on
every wall, no air absorption, image sources to order 3 and 10^5 rays (receivers of radius
0.5 m), at 48 kHz. Each response goes to OUTDIR/pra_<room>_<receiver>.wav (float32) and the time
compute_rir() took to OUTDIR/pra_times.txt."""
import os
import sys
import time

import numpy as np
import pyroomacoustics as pra
from scipy.io import wavfile

FS = 48000
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
times = open(os.path.join(out, "pra_times.txt"), "w")


def run(name, room, source, receivers):
    room.add_source(source)
    room.add_microphone_array(np.array([r[1] for r in receivers]).T)
    room.set_ray_tracing(n_rays=100000, receiver_radius=0.5)
    t0 = time.perf_counter()
    room.compute_rir()
    dt = time.perf_counter() - t0
    times.write(f"{name} {dt:.2f}\n")
    print(f"pyroomacoustics {pra.__version__}: {name}: compute_rir {dt:.2f} s")
    for k, (rname, _) in enumerate(receivers):
        h = np.asarray(room.rir[k][0], dtype=np.float32)
        wavfile.write(os.path.join(out, f"pra_{name}_{rname}.wav"), FS, h)


mat = pra.Material(energy_absorption=0.2, scattering=0.7)
run("shoebox",
    pra.ShoeBox([6, 5, 3], fs=FS, materials=mat, max_order=3, ray_tracing=True,
                air_absorption=False),
    [1.5, 1.8, 1.4], [("R1", [4.3, 3.1, 1.6]), ("R2", [2.6, 4.1, 1.1])])
corners = np.array([[0, 0], [8, 0], [8, 4], [4, 4], [4, 9], [0, 9]]).T
room = pra.Room.from_corners(corners, fs=FS, materials=mat, max_order=3, ray_tracing=True,
                             air_absorption=False)
room.extrude(3.0, materials=mat)
run("l-shaped", room, [6.5, 2.0, 1.5], [("corner", [2.0, 2.0, 1.2]), ("leg", [2.0, 7.5, 1.6])])
