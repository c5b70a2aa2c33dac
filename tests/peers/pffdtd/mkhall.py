"""mkhall.py OBJ YAML JSON MATDIR - the concert hall of rooms/concert-hall (OBJ, its hall.obj)
as PFFDTD's model_export.json (every group's triangles under its material, both sides; the
source and receivers of tests/gpu/peers/hall-branches.yaml, YAML) and its three materials as
PFFDTD's material files in MATDIR (wood.h5, audience.h5, plaster.h5): each the branches that
YAML gives roomsim, PFFDTD's DEF rows being (m, r, k), since both write a branch's
normal-incidence impedance normalised by rho c as i w m + r + k / (i w). Needs numpy, h5py
and PyYAML (Debian's python3-numpy, python3-h5py, python3-yaml); no PFFDTD import."""
import json
import sys

import h5py
import numpy as np
import yaml

obj, spec, out, matdir = sys.argv[1:5]
room = yaml.safe_load(open(spec))
surf = room['surfaces']
pts, groups, mat = [], {}, surf['default']
for line in open(obj):
    w = line.split()
    if not w:
        continue
    if w[0] == 'v':
        pts.append([float(x) for x in w[1:4]])
    elif w[0] == 'g':
        mat = surf.get(w[1], surf['default'])
    elif w[0] == 'f':
        groups.setdefault(mat, []).append([int(x.split('/')[0]) - 1 for x in w[1:4]])
hashes = {}
for name, tris in groups.items():
    used = sorted({i for t in tris for i in t})  # each material its own points, as PFFDTD's exporter
    at = {i: k for k, i in enumerate(used)}
    hashes[name] = {'tris': [[at[i] for i in t] for t in tris], 'pts': [pts[i] for i in used],
                    'color': [200, 200, 200], 'sides': [3] * len(tris)}
    DEF = np.array([[b.get('m', 0.0), b['r'], b.get('k', 0.0)]
                    for b in room['materials'][name]['branches']], dtype=np.float64)
    with h5py.File('%s/%s.h5' % (matdir, name), 'w') as f:
        f.create_dataset('DEF', data=DEF)
    print(name, len(tris), 'triangles,', len(DEF), 'branches')
data = {'mats_hash': hashes,
        'sources': [{'xyz': s['position'], 'name': s['name']} for s in room['sources']],
        'receivers': [{'xyz': r['position'], 'name': r['name']} for r in room['receivers']]}
with open(out, 'w') as f:
    json.dump(data, f)
