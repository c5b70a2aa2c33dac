/*
 * config.h - the room description read from YAML (docs/input.md documents every key).
 *
 * cfg_load() parses and validates a file into a struct cfg_room that the caller owns and
 * releases with cfg_free(). Every error message has the form
 *     FILE:LINE:COL: key.path: what is wrong (what would be valid)
 * cfg_at() formats further errors (found after voxelising, say) at a key's recorded position.
 */
#ifndef CFG_CONFIG_H
#define CFG_CONFIG_H

#include <stddef.h>

#include "../common/rs_error.h"
#include "mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CFG_NAME_MAX 64		/* names become file names: [A-Za-z0-9_.-], at most 63 chars */
#define CFG_PATH_MAX 1024
#define CFG_MAX_MATERIALS 31	/* material slots fit the 5 bits the voxel class byte has */
#define CFG_MAX_POINTS 256	/* sources, receivers, snapshot planes: each at most this many */

/* A position in the YAML file, 1-based as editors show it. */
struct cfg_mark {
	int line;
	int col;
};

enum cfg_face { CFG_X0, CFG_X1, CFG_Y0, CFG_Y1, CFG_FLOOR, CFG_CEILING, CFG_NFACES };

enum cfg_signal { CFG_SIG_IMPULSE, CFG_SIG_GAUSSIAN, CFG_SIG_RICKER };

enum cfg_wavfmt { CFG_WAV_FLOAT32, CFG_WAV_PCM24, CFG_WAV_PCM16 };

enum cfg_backend { CFG_BACKEND_AUTO, CFG_BACKEND_CPU, CFG_BACKEND_CUDA };

enum cfg_stencil { CFG_STENCIL_LEGGY, CFG_STENCIL_COMPACT, CFG_STENCIL_BOX,
		   CFG_STENCIL_INTERPOLATED, CFG_STENCIL_FCC };

#define CFG_MAX_WEIGHTS 64	/* shell weights of a compact or box stencil */
#define CFG_MAX_DTS 4		/* diamond tile sizes the kernel is built for (docs/kernels.md) */
#define CFG_MAX_NT 1024		/* diamond levels per tower: bounds its receiver buffer */

/* The CUDA kernels (docs/kernels.md); CFG_KERNEL_AUTO times them all and keeps the fastest. */
enum cfg_kernel {
	CFG_KERNEL_AUTO,
	CFG_KERNEL_NAIVE3D,
	CFG_KERNEL_TILED_GLOBAL,
	CFG_KERNEL_TILED_SHARED,
	CFG_KERNEL_SLICE_NAIVE,
	CFG_KERNEL_SLICE_TEXTURE,
	CFG_KERNEL_SLICE_LDG,
	CFG_KERNEL_SLICE_SHARED,
	CFG_KERNEL_SLICE_SHARED_TEX,
	CFG_KERNEL_SLICE_VEC,
	CFG_KERNEL_GENERAL,
	CFG_KERNEL_LEGGY,
	CFG_KERNEL_LEGGY_SHARED,
	CFG_KERNEL_LEGGY_SHARED2,
	CFG_KERNEL_SHELL_SHARED,
	CFG_KERNEL_SHELL_VEC,
	CFG_KERNEL_FCC,
	CFG_KERNEL_FCC_VEC,
	CFG_KERNEL_DIAMOND,
	CFG_NKERNELS
};

/* Names of enum cfg_kernel as the YAML and --kernel spell them; NULL-terminated. */
extern const char *const cfg_kernel_names[CFG_NKERNELS + 1];

/* The kernel named s, or -1. */
int cfg_kernel_of(const char *s);

struct cfg_material {
	char name[CFG_NAME_MAX];
	double beta;		/* normalised admittance used by the boundary update */
	double absorption;	/* random-incidence absorption implied by beta (Paris) */
	struct cfg_mark at;
};

struct cfg_source {
	char name[CFG_NAME_MAX];
	double pos[3];		/* metres, room coordinates */
	enum cfg_signal signal;
	double fc;		/* Hz, centre frequency for gaussian and ricker */
	double amplitude;	/* Pa at 1 m in free field */
	double delay;		/* s, shifts the signal */
	double highpass;	/* Hz, DC-blocking high-pass on the injected signal; 0 = off */
	struct cfg_mark at;	/* of the position key, for "outside the air" errors */
};

struct cfg_receiver {
	char name[CFG_NAME_MAX];
	double pos[3];
	struct cfg_mark at;
};

/* Shapes of geometry.shapes (docs/input.md, "Shapes"), combined in order. */
enum cfg_shape_kind { CFG_SHAPE_BOX, CFG_SHAPE_CYLINDER, CFG_SHAPE_SPHERE, CFG_SHAPE_EXTRUSION,
		      CFG_NSHAPES };

#define CFG_MAX_SHAPES 254	/* a cell's owner is a byte: shapes, the base and none */
#define CFG_MAX_POLYGON 256	/* vertices of an extrusion's polygon */

struct cfg_shape {
	enum cfg_shape_kind kind;
	int remove;		/* 0: `add`, the shape becomes air; 1: `remove`, it becomes solid */
	int material;		/* index into materials: the walls the shape makes */
	double lo[3], hi[3];	/* box: its corners; every shape: its bounding box */
	double center[3];	/* sphere: its centre; cylinder: the centre of its base */
	double radius;		/* sphere, cylinder */
	int axis;		/* cylinder: 0, 1, 2 for x, y, z */
	double (*polygon)[2];	/* extrusion: x-y vertices in order, from lo[2] to hi[2] in z */
	int npolygon;
	struct cfg_mark at;
};

/* What the room is made of (docs/input.md, "Geometry"); the plain box when only box given. */
struct cfg_geometry {
	int has_box;		/* geometry.box: the base is the box [0, L] */
	char mesh_path[CFG_PATH_MAX];	/* geometry.mesh, resolved against the YAML's folder */
	struct mesh mesh;	/* the mesh, read when the file loads; empty without one */
	struct cfg_mark mesh_at;
	double box[3];		/* geometry.box: [0, box] is the base */
	char voxels_path[CFG_PATH_MAX];	/* geometry.voxels, resolved likewise */
	struct cfg_mark voxels_at;
	char voxel_names[CFG_MAX_MATERIALS][CFG_NAME_MAX];	/* the file's materials */
	int nvoxel_names;
	int voxel_material[CFG_MAX_MATERIALS];	/* each of them as a room material */
	struct cfg_shape *shapes;
	int nshapes;
	int area_correction;	/* geometry.area_correction: 1 (default) corrects staircase walls */
	int default_material;	/* surfaces.default, or the implicit rigid material */
};

struct cfg_plane {
	int axis;		/* 0 = x, 1 = y, 2 = z */
	double at;		/* metres along that axis */
	struct cfg_mark mark;
};

struct cfg_room {
	char file[CFG_PATH_MAX];	/* the YAML path as given, for messages */
	char name[CFG_NAME_MAX];

	double c;		/* speed of sound, m/s */
	double rho;		/* density of air, kg/m^3 */

	double fmax;		/* Hz: band of interest; 0 when spacing was given without fmax */
	double ppw;		/* points per wavelength at fmax */
	double spacing;		/* h in metres, always set after cfg_load */
	double courant;		/* fraction of the scheme's stability limit, (0, 1] */
	struct cfg_mark grid_at;	/* of the key that set the spacing */

	enum cfg_stencil stencil;	/* docs/stencils.md */
	int order;		/* leggy: 2M, 2..16 (2 = the 7-point scheme) */
	int radius2;		/* compact: R, |q|^2 <= R */
	int boxq[3];		/* box: shells up to (q1, q2, q3) */
	double weights[CFG_MAX_WEIGHTS];	/* compact and box: per-shell weights */
	int nweights;		/* 0: the default weights */
	int variant;		/* interpolated: index into stn_variant_names */
	struct cfg_mark scheme_at;	/* of the scheme key, for stability errors */
	struct cfg_mark courant_at;	/* of grid.courant, or of the grid key */
	int precision;		/* bytes per value: 4 (float32) or 8 (float64) */
	enum cfg_kernel kernel;	/* CUDA kernel (ignored by the CPU engine) */
	int block[2];		/* CUDA thread block, x by y (seed 003: 32 x 8) */
	int dts;		/* diamond kernel: tile size in stencil reaches; 0 = default */
	int nt;			/* diamond kernel: levels per tower; 0 = default */

	double duration;	/* seconds of impulse response */
	double box[3];		/* room extent in metres: the box, or the bounds of the shape */
	double origin[3];	/* room coordinates of the bounds' low corner: 0 for a box */
	int shaped;		/* 1: a mesh, shapes or a voxel file, not the plain box */
	struct cfg_geometry geo;

	struct cfg_material materials[CFG_MAX_MATERIALS];
	int nmaterials;
	int face_material[CFG_NFACES];	/* index into materials */

	struct cfg_source *sources;
	int nsources;
	struct cfg_receiver *receivers;
	int nreceivers;

	char out_dir[CFG_PATH_MAX];
	int wav_rate;		/* output sample rate, Hz */
	enum cfg_wavfmt wav_format;
	double wav_highpass;	/* Hz, DC removal on the WAVs; 0 = off */
	int wav_normalize;	/* 1: one common gain puts the loudest WAV peak at -1 dBFS */

	int snap_every;		/* steps between snapshot frames; 0 = no snapshots */
	struct cfg_plane *planes;
	int nplanes;
};

/* Parse and validate path. Returns NULL and fills err (RS_EINPUT or RS_EIO) on failure. */
struct cfg_room *cfg_load(const char *path, struct rs_error *err);

/* Same, from a string in memory; name stands for the file in messages. */
struct cfg_room *cfg_load_string(const char *text, const char *name, struct rs_error *err);

void cfg_free(struct cfg_room *room);

/* RS_EINPUT error "FILE:LINE:COL: key: what" at a recorded mark; returns RS_EINPUT. */
int cfg_at(struct rs_error *err, const struct cfg_room *room, struct cfg_mark at,
	   const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* How many cells the configured stencil reaches along an axis (its halo). */
int cfg_stencil_reach(const struct cfg_room *room);

/* The largest random-incidence absorption a locally reacting real admittance reaches. */
double cfg_absorption_max(void);

/* Paris' diffuse-field absorption of a locally reacting surface with real admittance beta. */
double cfg_absorption_of_beta(double beta);

/* The face names used in YAML, indexed by enum cfg_face. */
extern const char *const cfg_face_names[CFG_NFACES];

#ifdef __cplusplus
}
#endif

#endif
