"""setup.py cart|fcc PPW DURATION [ROOM] - PFFDTD's inputs for ROOM at 2 kHz (its sim_setup), into
../data/sim_data/ROOM_KIND/gpu. Run from PFFDTD's python/ folder after mkseminar.py (ROOM
seminar, the default: model in ../data/models/seminar/, material
../data/materials/seminar_plaster.h5) or mkhall.py (ROOM hall: model in ../data/models/hall/,
each material NAME in ../data/materials/hall/NAME.h5). The files are gzip-compressed (level 1),
so that they travel to the GPU machine within a device call's limit."""
import json
import sys
from multiprocessing import shared_memory

_close = shared_memory.SharedMemory.close


def _quiet_close(self):
    """Python 3.11 refuses to unmap while numpy views are alive; PFFDTD closes early."""
    try:
        _close(self)
    except BufferError:
        pass


shared_memory.SharedMemory.close = _quiet_close
from sim_setup import sim_setup  # noqa: E402 (after the patch)

room = sys.argv[4] if len(sys.argv) > 4 else 'seminar'
model = '../data/models/%s/model_export.json' % room
if room == 'seminar':
    mats, folder = {'Walls': 'seminar_plaster.h5'}, '../data/materials'
else:
    mats = {m: m + '.h5' for m in json.load(open(model))['mats_hash']}
    folder = '../data/materials/' + room
save = '../data/sim_data/%s_%s/gpu' % (room, sys.argv[1])
sim_setup(model_json_file=model, mat_folder=folder, source_num=1, insig_type='impulse',
          diff_source=True, mat_files_dict=mats, duration=float(sys.argv[3]), Tc=20, rh=50,
          fcc_flag=sys.argv[1] == 'fcc', PPW=float(sys.argv[2]), fmax=2000.0,
          save_folder=save, save_folder_gpu=save, compress=1, Nprocs=2)
