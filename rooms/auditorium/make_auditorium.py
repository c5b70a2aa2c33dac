#!/usr/bin/env python3
"""Write auditorium.obj: a fan-shaped lecture auditorium with a raised stage, a raked floor
and a sloping ceiling, none of whose walls but the two end walls lies along a grid axis.

The plan widens from the stage house to the audience and narrows again at the rear corners;
the floor and the ceiling are piecewise linear along x. The hall is cut into slabs at every
break of the plan, floor and ceiling, so each face of a slab is a planar quad and neighbouring
slabs share their edges: the mesh is closed with no T-junctions. Each quad is written as two
triangles facing out of the air. Groups (OBJ g) name the surfaces: Stage, Floor, Seats, Walls,
Rear, Ceiling. Prints the exact air volume and surface area (the divergence theorem over the
triangles), which test_geometry checks the voxel grid against.

    python3 rooms/auditorium/make_auditorium.py > rooms/auditorium/auditorium.obj
"""
import sys

MID = 11.0                                 # the plan is symmetric about y = 11 m
WIDTH = [(0.0, 12.0), (6.0, 12.0), (20.0, 22.0), (24.0, 16.0)]     # (x, full width), m
FLOOR = [(0.0, 1.0), (5.6, 1.0), (6.0, 0.0), (8.0, 0.0), (24.0, 3.2)]   # stage, front, rake
CEILING = [(0.0, 7.5), (6.0, 9.5), (14.0, 10.5), (24.0, 9.0)]


def at(table, x):
    """The piecewise linear function through table's points, at x."""
    for (x0, v0), (x1, v1) in zip(table, table[1:]):
        if x0 <= x <= x1:
            return v0 + (v1 - v0) * (x - x0) / (x1 - x0)
    raise ValueError(x)


def floor_group(x0, x1):
    return "Stage" if x1 <= 6.0 else "Floor" if x1 <= 8.0 else "Seats"


xs = sorted({x for t in (WIDTH, FLOOR, CEILING) for x, _ in t})
verts, index, faces = [], {}, {}


def vid(p):
    p = tuple(round(c, 9) for c in p)
    if p not in index:
        index[p] = len(verts) + 1
        verts.append(p)
    return index[p]


def sub(a, b):
    return [a[i] - b[i] for i in range(3)]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def quad(group, pts, outward):
    """A planar quad, its corners in order round it, turned to face along outward."""
    n = cross(sub(pts[1], pts[0]), sub(pts[2], pts[0]))
    if sum(n[i] * outward[i] for i in range(3)) < 0:
        pts = pts[::-1]
    faces.setdefault(group, []).append([vid(p) for p in pts])


for x0, x1 in zip(xs, xs[1:]):
    w0, w1 = at(WIDTH, x0) / 2, at(WIDTH, x1) / 2
    f0, f1 = at(FLOOR, x0), at(FLOOR, x1)
    c0, c1 = at(CEILING, x0), at(CEILING, x1)
    quad(floor_group(x0, x1), [(x0, MID - w0, f0), (x1, MID - w1, f1), (x1, MID + w1, f1),
                               (x0, MID + w0, f0)], (0, 0, -1))
    quad("Ceiling", [(x0, MID - w0, c0), (x1, MID - w1, c1), (x1, MID + w1, c1),
                     (x0, MID + w0, c0)], (0, 0, 1))
    for side in (-1, 1):
        quad("Walls", [(x0, MID + side * w0, f0), (x1, MID + side * w1, f1),
                       (x1, MID + side * w1, c1), (x0, MID + side * w0, c0)], (0, side, 0))
for x, group, out in ((xs[0], "Walls", -1), (xs[-1], "Rear", 1)):
    w, f, c = at(WIDTH, x) / 2, at(FLOOR, x), at(CEILING, x)
    quad(group, [(x, MID - w, f), (x, MID + w, f), (x, MID + w, c), (x, MID - w, c)],
         (out, 0, 0))

groups = ("Stage", "Floor", "Seats", "Walls", "Rear", "Ceiling")
materials = {"Stage": "wood", "Floor": "wood", "Seats": "audience", "Walls": "plaster",
             "Rear": "panel", "Ceiling": "plaster"}
tris = []
for g in groups:
    for q in faces[g]:
        tris += [(g, (q[0], q[1], q[2])), (g, (q[0], q[2], q[3]))]
volume = area = 0.0
for _, t in tris:
    a, b, c = (verts[i - 1] for i in t)
    n = cross(sub(b, a), sub(c, a))
    area += 0.5 * sum(v * v for v in n) ** 0.5
    volume += sum(a[i] * cross(b, c)[i] for i in range(3)) / 6
out = sys.stdout
out.write("# auditorium.obj: fan-shaped lecture auditorium, written by make_auditorium.py\n")
out.write("# air volume %.6f m^3, surface area %.6f m^2\n" % (volume, area))
for p in verts:
    out.write("v %.9g %.9g %.9g\n" % p)
for g in groups:
    out.write("g %s\nusemtl %s\n" % (g, materials[g]))
    for tg, t in tris:
        if tg == g:
            out.write("f %d %d %d\n" % t)
sys.stderr.write("auditorium.obj: %d vertices, %d triangles, air %.6f m^3, area %.6f m^2\n"
                 % (len(verts), len(tris), volume, area))
