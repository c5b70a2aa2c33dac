build-chk/app/run.o: app/run.c app/run.h app/app.h \
 app/../common/rs_error.h app/../geometry/voxel.h \
 app/../geometry/../common/rs_error.h app/../geometry/../model/room.h \
 app/../geometry/../model/../common/rs_error.h \
 app/../geometry/../model/mesh.h app/../io/config.h \
 app/../io/../common/rs_error.h app/../io/../model/room.h \
 app/../model/room.h app/../solver/stencil.h \
 app/../solver/../model/room.h app/../solver/wall.h app/grids.h \
 app/../io/gridfile.h app/../io/../geometry/receivers.h \
 app/../io/../geometry/../common/rs_error.h app/../io/../geometry/voxel.h \
 app/../solver/fdtd.h app/../solver/../common/rs_error.h \
 app/../solver/../geometry/voxel.h app/../solver/kernels.h \
 app/../solver/stencil.h app/../solver/part.h app/../io/checkpoint.h \
 app/../io/snapshot.h app/../solver/signal.h
app/run.h:
app/app.h:
app/../common/rs_error.h:
app/../geometry/voxel.h:
app/../geometry/../common/rs_error.h:
app/../geometry/../model/room.h:
app/../geometry/../model/../common/rs_error.h:
app/../geometry/../model/mesh.h:
app/../io/config.h:
app/../io/../common/rs_error.h:
app/../io/../model/room.h:
app/../model/room.h:
app/../solver/stencil.h:
app/../solver/../model/room.h:
app/../solver/wall.h:
app/grids.h:
app/../io/gridfile.h:
app/../io/../geometry/receivers.h:
app/../io/../geometry/../common/rs_error.h:
app/../io/../geometry/voxel.h:
app/../solver/fdtd.h:
app/../solver/../common/rs_error.h:
app/../solver/../geometry/voxel.h:
app/../solver/kernels.h:
app/../solver/stencil.h:
app/../solver/part.h:
app/../io/checkpoint.h:
app/../io/snapshot.h:
app/../solver/signal.h:
