"""mkseminar.py OBJ JSON MAT - the seminar room (tests/gpu/rooms/seminar.obj) as PFFDTD's
model_export.json (one material, both sides, roomsim's source and receivers) and its wall as
PFFDTD's frequency-independent material file: the admittance of a Sabine absorption of 0.08
by Paris' formula, the value tests/gpu/peers/seminar-admittance.yaml gives roomsim. Run from
PFFDTD's python/ folder (it imports PFFDTD's materials.adm_funcs)."""
import json
import sys

from materials.adm_funcs import convert_Sabs_to_Yn, write_freq_ind_mat_from_Yn

pts, tris = [], []
for line in open(sys.argv[1]):
    w = line.split()
    if w and w[0] == 'v':
        pts.append([float(x) for x in w[1:4]])
    if w and w[0] == 'f':
        tris.append([int(x.split('/')[0]) - 1 for x in w[1:4]])
data = {"mats_hash": {"Walls": {"tris": tris, "pts": pts, "color": [200, 200, 200],
                                "sides": [3] * len(tris)}},
        "sources": [{"xyz": [1.1, 0.9, 1.5], "name": "S"}],
        "receivers": [{"xyz": [2.9, 1.2, 1.2], "name": "front"},
                      {"xyz": [1.0, 2.6, 1.4], "name": "back"}]}
with open(sys.argv[2], "w") as f:
    json.dump(data, f)
Yn = convert_Sabs_to_Yn(0.08)
print("admittance", repr(float(Yn)))
write_freq_ind_mat_from_Yn(Yn, sys.argv[3])
