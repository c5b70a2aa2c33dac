#!/bin/sh
# device call 1: gpu-test (short tests) and the auditorium's auto run
tar -xJf .gpu.txz || exit 1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
OUT=$OUT/each DEADLINE=330 TESTS="rigid_f32 absorbing_f32 lshaped_f32 shapes_f32 band_materials fitted_walls_on_gpu auto_kernel energy_on_gpu fcc_lattice diamond_kernel diamond_run uniform_field_on_gpu receiver_grids_on_gpu ranks_on_gpus band_frames_on_gpu device_memory_on_gpu mesh_room_on_gpu" sh tests/gpu/each.sh
OUT=$OUT/aud PART=time STENCILS=auto timeout 200 sh tests/gpu/auditorium.sh
grep -h "scheme auto\|not timed\|candidate\|Gvox" $OUT/aud/time/auto.log | head -20
