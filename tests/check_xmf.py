#!/usr/bin/env python3
"""check_xmf.py FILE.xmf - the XDMF sidecar of a snapshot file against the HDF5 file it
describes (tests/test_cli.c): per plane a temporal collection with one grid per frame, times
rising, each grid a one-node-thick co-rectilinear mesh whose node count is the frame's, and
a hyperslab of frame t of a dataset whose shape (read with h5dump) is [frames, n1, n2].
With ParaView's pvpython present, its XDMF reader opens the file too. Exits non-zero and
says why when anything differs."""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET


def shape(h5, name):
    out = subprocess.run(["h5dump", "-H", "-d", "/" + name, h5], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"DATASPACE\s+SIMPLE \{ \( ([0-9, ]+) \)", out)
    return tuple(int(v) for v in m.group(1).split(","))


def main(path):
    root = ET.parse(path).getroot()
    planes = root.findall("./Domain/Grid")
    assert planes, "no plane"
    for plane in planes:
        assert plane.get("CollectionType") == "Temporal", plane.get("Name")
        frames = plane.findall("./Grid")
        times = [float(g.find("Time").get("Value")) for g in frames]
        assert all(b > a for a, b in zip(times, times[1:])), "times do not rise"
        for t, grid in enumerate(frames):
            dims = [int(v) for v in grid.find("Topology").get("Dimensions").split()]
            assert dims.count(1) >= 1, dims
            slab = grid.find("./Attribute/DataItem/DataItem")
            sel, data = slab.findall("DataItem")
            start = [int(v) for v in sel.text.split()[:3]]
            assert start == [t, 0, 0], (start, t)
            h5, name = data.text.strip().split(":/")
            h5 = os.path.join(os.path.dirname(path), h5)
            declared = tuple(int(v) for v in data.get("Dimensions").split())
            actual = shape(h5, name)
            assert declared == actual, (declared, actual)
            assert actual[0] == len(frames), (actual, len(frames))
            assert dims[0] * dims[1] * dims[2] == actual[1] * actual[2], (dims, actual)
    if shutil.which("pvpython"):
        script = ("from paraview.simple import XDMFReader; r = XDMFReader(FileNames=[%r]); "
                  "r.UpdatePipelineInformation(); assert len(r.TimestepValues) > 1" % path)
        subprocess.run(["pvpython", "-c", script], check=True)
    print("%s: %d planes, %d frames each, consistent with the HDF5 file" %
          (path, len(planes), len(planes[0].findall("./Grid"))))


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except (AssertionError, OSError, subprocess.CalledProcessError, ET.ParseError) as e:
        sys.exit("check_xmf: %s: %r" % (sys.argv[1], e))
