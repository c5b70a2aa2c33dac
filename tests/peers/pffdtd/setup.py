"""setup.py cart|fcc PPW DURATION - PFFDTD's inputs for the seminar room at 2 kHz (its
sim_setup), into ../data/sim_data/seminar_KIND/gpu. Run from PFFDTD's python/ folder after
mkseminar.py (model in ../data/models/seminar/, material ../data/materials/seminar_plaster.h5)."""
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

sim_setup(model_json_file='../data/models/seminar/model_export.json',
          mat_folder='../data/materials', source_num=1, insig_type='impulse', diff_source=True,
          mat_files_dict={'Walls': 'seminar_plaster.h5'}, duration=float(sys.argv[3]), Tc=20,
          rh=50, fcc_flag=sys.argv[1] == 'fcc', PPW=float(sys.argv[2]), fmax=2000.0,
          save_folder='../data/sim_data/seminar_' + sys.argv[1] + '/gpu',
          save_folder_gpu='../data/sim_data/seminar_' + sys.argv[1] + '/gpu', compress=0)
