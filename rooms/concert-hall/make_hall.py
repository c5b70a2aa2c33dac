#!/usr/bin/env python3
"""Write hall.obj: a shoebox concert hall with stage, raked stalls and a balcony.

The air of the hall is a union of lattice cells; its boundary (every face between an air
cell and a solid one) is written as quads split into two triangles, facing out of the air,
on one lattice, so the mesh is closed with no T-junctions. Groups (OBJ g) and materials
(usemtl) name the surfaces: Floor, Stage, Seats, Balcony, Walls, Ceiling. Prints the exact
air volume and surface area, which test_geometry checks the voxel grid against.

    python3 rooms/concert-hall/make_hall.py > rooms/concert-hall/hall.obj
"""
import sys

LX, LY, LZ = 36.0, 22.0, 16.0            # the hall's inside, m
STAGE_X, STAGE_Z = 9.0, 1.2               # stage: x < 9 m, 1.2 m high
RAKE_X0, RAKE_STEP, RAKE_RISE = 24.0, 2.0, 0.3   # stalls rise in 6 steps from x = 24 m
BALC_Z0, BALC_Z1 = 7.0, 8.0               # balcony slab
BALC_X0, BALC_DEPTH = 12.0, 3.0           # side balconies from x = 12 m, 3 m deep; rear at x > 30
BALC_REAR = 30.0


def solid(x, y, z):
    """Is the point (a lattice cell centre) solid?"""
    if x < STAGE_X and z < STAGE_Z:
        return "Stage"
    if x > RAKE_X0:
        steps = min(6, int((x - RAKE_X0) // RAKE_STEP) + 1)
        if z < steps * RAKE_RISE:
            return "Seats"
    if BALC_Z0 < z < BALC_Z1 and x > BALC_X0 and (
            y < BALC_DEPTH or y > LY - BALC_DEPTH or x > BALC_REAR):
        return "Balcony"
    return None


def lattice(length, extra, step=2.0):
    v = {round(i * step, 6) for i in range(int(length / step) + 1)} | {round(e, 6) for e in extra}
    return sorted(x for x in v if 0 <= x <= length)


xs = lattice(LX, [STAGE_X, BALC_X0, BALC_REAR] + [RAKE_X0 + i * RAKE_STEP for i in range(7)])
ys = lattice(LY, [BALC_DEPTH, LY - BALC_DEPTH])
zs = lattice(LZ, [STAGE_Z, BALC_Z0, BALC_Z1] + [i * RAKE_RISE for i in range(7)])


def kind(i, j, k):
    """What lattice cell (i, j, k) is: None for air, a group name for solid or outside."""
    if not (0 <= i < len(xs) - 1 and 0 <= j < len(ys) - 1 and 0 <= k < len(zs) - 1):
        return "outside"
    return solid((xs[i] + xs[i + 1]) / 2, (ys[j] + ys[j + 1]) / 2, (zs[k] + zs[k + 1]) / 2)


verts, index, faces = [], {}, {}


def vid(p):
    if p not in index:
        index[p] = len(verts) + 1
        verts.append(p)
    return index[p]


volume = area = 0.0
axes = (xs, ys, zs)
for i in range(len(xs) - 1):
    for j in range(len(ys) - 1):
        for k in range(len(zs) - 1):
            if kind(i, j, k) is not None:
                continue
            cell = (i, j, k)
            volume += (xs[i + 1] - xs[i]) * (ys[j + 1] - ys[j]) * (zs[k + 1] - zs[k])
            for a in range(3):
                for side in (0, 1):
                    n = list(cell)
                    n[a] += 1 if side else -1
                    what = kind(*n)
                    if what is None:
                        continue
                    if what == "outside":
                        what = "Floor" if a == 2 and not side else \
                               "Ceiling" if a == 2 else "Walls"
                    u, v = (a + 1) % 3, (a + 2) % 3
                    at = axes[a][cell[a] + side]
                    lo_u, hi_u = axes[u][cell[u]], axes[u][cell[u] + 1]
                    lo_v, hi_v = axes[v][cell[v]], axes[v][cell[v] + 1]
                    quad = []
                    for cu, cv in ((lo_u, lo_v), (hi_u, lo_v), (hi_u, hi_v), (lo_u, hi_v)):
                        p = [0.0, 0.0, 0.0]
                        p[a], p[u], p[v] = at, cu, cv
                        quad.append(vid(tuple(p)))
                    if not side:       # (u, v, a) right-handed: the normal leaves the air
                        quad.reverse()
                    faces.setdefault(what, []).append(quad)
                    area += (hi_u - lo_u) * (hi_v - lo_v)

materials = {"Floor": "wood", "Stage": "wood", "Seats": "audience", "Balcony": "plaster",
             "Walls": "plaster", "Ceiling": "plaster"}
out = sys.stdout
out.write("# hall.obj: shoebox concert hall, %g x %g x %g m, written by make_hall.py\n"
          % (LX, LY, LZ))
out.write("# air volume %.6f m^3, surface area %.6f m^2\n" % (volume, area))
for p in verts:
    out.write("v %g %g %g\n" % p)
ntri = 0
for group in ("Floor", "Stage", "Seats", "Balcony", "Walls", "Ceiling"):
    out.write("g %s\nusemtl %s\n" % (group, materials[group]))
    for q in faces.get(group, []):
        out.write("f %d %d %d\nf %d %d %d\n" % (q[0], q[1], q[2], q[0], q[2], q[3]))
        ntri += 2
sys.stderr.write("hall.obj: %d vertices, %d triangles, air %.6f m^3, area %.6f m^2\n"
                 % (len(verts), ntri, volume, area))
