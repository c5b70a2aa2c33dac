/*
 * room.h - the domain model: one simulation as the engines see it, with no file format in it.
 *
 * A struct room holds the room's geometry (a box, a mesh, a voxel file or shapes), its
 * materials and surfaces, the sources and receivers, the scheme and the outputs. The YAML
 * reader (io/config.h) fills one; geometry/, solver/ and app/ read it and never include io/.
 * Each value keeps the position it was read from (struct room_mark), so that checks made later,
 * after voxelising say, report FILE:LINE:COL: key: what is wrong (what would be valid), as
 * the reader does (room_at()). The room owns its arrays; room_free() releases them.
 */
#ifndef MODEL_ROOM_H
#define MODEL_ROOM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/rs_error.h"
#include "mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ROOM_NAME_MAX 64		/* names become file names: [A-Za-z0-9_.-], at most 63 chars */
#define ROOM_PATH_MAX 1024
#define ROOM_MAX_MATERIALS 255	/* indices 0..254 fit a byte; 255 is geometry/voxel.h VOX_NO_WALL */
#define ROOM_MAX_POINTS 256	/* sources, receivers, snapshot planes: each at most this many */

/* A position in the file the room was read from, 1-based as editors show it; line 0: a value
 * an override gave (`roomsim run --set`). */
struct room_mark {
	int line;
	int col;
};

enum room_face { ROOM_X0, ROOM_X1, ROOM_Y0, ROOM_Y1, ROOM_FLOOR, ROOM_CEILING, ROOM_NFACES };

enum room_signal { ROOM_SIG_IMPULSE, ROOM_SIG_GAUSSIAN, ROOM_SIG_RICKER };

enum room_wavfmt { ROOM_WAV_FLOAT32, ROOM_WAV_PCM24, ROOM_WAV_PCM16 };

enum room_backend { ROOM_BACKEND_AUTO, ROOM_BACKEND_CPU, ROOM_BACKEND_CUDA };

enum room_stencil { ROOM_STENCIL_LEGGY, ROOM_STENCIL_COMPACT, ROOM_STENCIL_BOX,
		   ROOM_STENCIL_INTERPOLATED, ROOM_STENCIL_FCC, ROOM_NSTENCILS };

#define ROOM_MAX_WEIGHTS 64	/* shell weights of a compact or box stencil */
#define ROOM_MAX_DTS 4		/* diamond tile sizes the kernel is built for (docs/kernels.md) */
#define ROOM_MAX_NT 1024		/* diamond levels per tower: bounds its receiver buffer */
#define ROOM_MAX_SPLIT 8		/* diamond: blocks of a tower, a portable cluster at most */
/* grid.walls: fitted: the cut cells stay stable with fewer merges below the limit (docs/physics.md,
 * "Fitted walls") */
#define FITTED_COURANT 0.8
#define FITTED_FCC_COURANT 0.9	/* the fcc lattice's: its cut cells' layers along the walls
				 * stay within the bound there (docs/physics.md) */

#define ROOM_MAX_BANDS 32	/* third octaves from 20 Hz to 20 kHz are 31 */
#define ROOM_MAX_BRANCHES 32	/* branches of a material given directly */

struct room_material {
	char name[ROOM_NAME_MAX];
	double beta;		/* normalised admittance used by the boundary update */
	double absorption;	/* random-incidence absorption implied by beta (Paris) */
	/* absorption per band (nbands > 0): a frequency-dependent wall, fitted by solver/wall.h;
	 * the engines do not simulate these yet */
	int nbands;
	int third;				/* third-octave bands, else octave bands */
	double band_f[ROOM_MAX_BANDS];		/* nominal centres, Hz, a contiguous run */
	double band_alpha[ROOM_MAX_BANDS];
	char library[ROOM_NAME_MAX];		/* the library entry it names, or "" */
	/* or its admittance given directly (nbranches > 0): branches of resistance r (> 0,
	 * normalised by rho c), mass m (s) and stiffness k (1/s) in parallel (solver/wall.h) */
	int nbranches;
	double br_r[ROOM_MAX_BRANCHES], br_m[ROOM_MAX_BRANCHES], br_k[ROOM_MAX_BRANCHES];
	/* scattering coefficients (ISO 17497-1) for the geometric engine (solver/ga/ga.h):
	 * nscat values at the octave or third-octave centres scat_f, or one value for every
	 * band (nscat 1, scat_f[0] 0); nscat 0: none given */
	int nscat;
	double scat_f[ROOM_MAX_BANDS], scat[ROOM_MAX_BANDS];
	struct room_mark at;
};

/* 1 when material m is frequency-dependent (given by bands or by branches). */
static inline int room_material_banded(const struct room_material *m)
{
	return m->nbands > 0 || m->nbranches > 0;
}

#define ROOM_BALLOON_BANDS 40	/* bands of a balloon: third octaves 20 Hz to 160 kHz fit */

/*
 * A source's pattern per band, a balloon (docs/input.md, "Directional sources"): levels in
 * dB relative to the front's in each band, on a regular grid of directions in the source's
 * frame (azimuth from the front towards the left, elevation up): azimuths a daz for a in
 * [0, naz), elevations -90 + e del for e in [0, nel), del = 180 / (nel - 1).
 */
struct room_balloon {
	char name[ROOM_NAME_MAX];	/* a library entry's name, or the table file's */
	int nbands;
	double f[ROOM_BALLOON_BANDS];	/* band centres, Hz, rising */
	int naz, nel;
	double daz, del;	/* degrees */
	float *db;		/* [(e naz + a) nbands + b] */
};

struct room_source {
	char name[ROOM_NAME_MAX];
	double pos[3];		/* metres, room coordinates */
	enum room_signal signal;
	double fc;		/* Hz, centre frequency for gaussian and ricker */
	double amplitude;	/* Pa at 1 m in free field */
	double delay;		/* s, shifts the signal */
	double highpass;	/* Hz, DC-blocking high-pass on the injected signal; 0 = off */
	struct room_mark at;	/* of the position key, for "outside the air" errors */
	/* directivity (docs/input.md, "Directional sources"): the first-order pattern
	 * a + (1 - a) cos(angle from aim), a = 1 omni, or a balloon (a = 0 then, unused);
	 * its name, and where it was given */
	double pattern_a;
	struct room_balloon *balloon;	/* per-band pattern, owned; NULL: first order */
	double aim[3];		/* unit vector */
	double frame[3][3];	/* the source's front (aim), left and up, world unit vectors */
	char pattern[ROOM_PATH_MAX];
	struct room_mark pattern_at;
};

#define ROOM_MAX_AMBISONICS 4	/* the highest ambisonic order of a receiver */

/*
 * A point receiver: its mono WAV per source, and with ambisonics or binaural its spatial
 * responses (docs/input.md, "Spatial receivers"): NAME.ambix.wav of that order (ACN, SN3D)
 * and NAME.binaural.wav through the HRTFs of a SOFA file, the listener facing yaw degrees
 * anticlockwise from +x.
 */
struct room_receiver {
	char name[ROOM_NAME_MAX];
	double pos[3];
	struct room_mark at;
	int ambisonics;		/* 0: none, else 1..ROOM_MAX_AMBISONICS */
	int binaural;		/* 1: a binaural response */
	char sofa[ROOM_PATH_MAX];	/* the HRTF set: a SOFA file (default: libmysofa's) */
	double yaw;		/* degrees */
	int equalise;		/* 1: the HRTFs equalised for the diffuse field */
	struct room_mark spatial_at;	/* of its ambisonics or binaural key */
};

#define ROOM_MAX_GRID_POINTS 1000000	/* lattice points of one receiver grid, at most */

/*
 * A receiver grid (docs/input.md, "Receiver grids"): a lattice of points of the given
 * spacing in a plane, or over a surface of the room at a height above it, that keeps the
 * points whose eight interpolation nodes are in the air (geometry/receivers.c). Its signals
 * go to rirs.h5 (through <source>_grids.h5); WAVs only when wavs is set.
 */
struct room_grid {
	char name[ROOM_NAME_MAX];
	int axis;		/* the plane's normal, 0..2; -1: over a surface */
	double at;		/* plane: metres along the normal */
	char surface[ROOM_NAME_MAX];	/* over: a box face or a mesh name, as surfaces names */
	double height;		/* over: metres above the surface (along +z) */
	double spacing;		/* metres between points */
	int extent;		/* 1: lo and hi bound the lattice, else the room's bounds */
	double lo[2], hi[2];	/* in the plane's two other axes, in order (z: x then y) */
	int wavs;		/* 1: a WAV per point and source as well */
	int entry;		/* its index in the receivers list */
	struct room_mark mark;	/* of its grid key */
};

/* Shapes of geometry.shapes (docs/input.md, "Shapes"), combined in order. */
enum room_shape_kind { ROOM_SHAPE_BOX, ROOM_SHAPE_CYLINDER, ROOM_SHAPE_SPHERE, ROOM_SHAPE_EXTRUSION,
		      ROOM_NSHAPES };

#define ROOM_MAX_SHAPES 254	/* a cell's owner is a byte: shapes, the base and none */
#define ROOM_MAX_POLYGON 256	/* vertices of an extrusion's polygon */

struct room_shape {
	enum room_shape_kind kind;
	int remove;		/* 0: `add`, the shape becomes air; 1: `remove`, it becomes solid */
	int material;		/* index into materials: the walls the shape makes */
	double lo[3], hi[3];	/* box: its corners; every shape: its bounding box */
	double center[3];	/* sphere: its centre; cylinder: the centre of its base */
	double radius;		/* sphere, cylinder */
	int axis;		/* cylinder, extrusion: 0, 1, 2 for x, y, z (extrusions: z, but
				 * a turned room's, room_turned, run along any axis) */
	double (*polygon)[2];	/* extrusion: vertices in order in the axes after `axis`
				 * (x-y for z), from lo[axis] to hi[axis] */
	int npolygon;
	struct room_mark at;
};

/*
 * A voxel file of `roomsim voxelize` as a base (geometry.voxels). Its reader (io/voxfile.c)
 * provides these functions and the YAML reader sets them, so that voxelising reads the file
 * without geometry/ calling io/; the file is read only when the grid is built.
 */
struct room;

struct room_voxel_file {
	/* Open room->geo.voxels_path; NULL and err on failure. */
	void *(*open)(const struct room *room, struct rs_error *err);
	/* Slab k of the room's cells, x fastest: air[i + nx j] nonzero where the cell is air or
	 * boundary. Returns 0, or -1 when the read fails. */
	int (*slab)(void *file, int k, uint8_t *air);
	/* The wall across face f (0..5: -x, +x, -y, +y, -z, +z) of room cell c as the file has
	 * it, its material mapped to the room's (geo.voxel_material); the room's default material
	 * and area 1 where the file has no wall there. */
	void (*wall_of)(const void *file, const int c[3], int f, uint8_t *material, float *area);
	void (*close)(void *file);
};

/* What the room is made of (docs/input.md, "Geometry"); the plain box when only box given. */
struct room_geometry {
	int has_box;		/* geometry.box: the base is the box [0, L] */
	char mesh_path[ROOM_PATH_MAX];	/* geometry.mesh, resolved against the YAML's folder */
	struct mesh mesh;	/* the mesh, read when the file loads; empty without one */
	struct room_mark mesh_at;
	double box[3];		/* geometry.box: [0, box] is the base */
	char voxels_path[ROOM_PATH_MAX];	/* geometry.voxels, resolved likewise */
	const struct room_voxel_file *voxels;	/* how to read it (the reader sets it) */
	struct room_mark voxels_at;
	char voxel_names[ROOM_MAX_MATERIALS][ROOM_NAME_MAX];	/* the file's materials */
	int nvoxel_names;
	int voxel_material[ROOM_MAX_MATERIALS];	/* each of them as a room material */
	struct room_shape *shapes;
	int nshapes;
	int area_correction;	/* geometry.area_correction: 1 (default) corrects staircase walls */
	int default_material;	/* surfaces.default, or the implicit rigid material */
};

/*
 * hybrid: (docs/input.md, "Full-band responses"): the geometric engine (solver/ga/ga.h)
 * above the crossover, the wave engine below it. on 0: a wave-only run.
 */
struct room_hybrid {
	int on;
	double crossover;	/* Hz: centre of the crossover's half-octave transition */
	long rays;		/* rays per source */
	int image_order;	/* image sources up to this order */
	int order_given;	/* image_order was given (else it may be lowered: ga_order()) */
	unsigned long seed;	/* the rays' random numbers */
	double receiver_radius;	/* m: the rays' receivers are spheres this large */
	double scattering;	/* for materials that give none; < 0: none (they must) */
	struct room_mark at, crossover_at, rays_at, order_at, radius_at;
};

struct room_plane {
	int axis;		/* 0 = x, 1 = y, 2 = z */
	double at;		/* metres along that axis */
	struct room_mark mark;
};

struct room {
	char file[ROOM_PATH_MAX];	/* the YAML path as given, for messages */
	char name[ROOM_NAME_MAX];

	double c;		/* speed of sound, m/s: medium.c, else from the temperature */
	double rho;		/* density of air, kg/m^3 */
	double temperature;	/* degrees Celsius */
	double humidity;	/* relative humidity, % */
	double pressure;	/* kPa */
	int air_absorption;	/* 1: the receiver signals get the air's absorption */

	double fmax;		/* Hz: band of interest; 0 when spacing was given without fmax */
	double ppw;		/* points per wavelength at fmax */
	double spacing;		/* h in metres, always set after cfg_load */
	double courant;		/* fraction of the scheme's stability limit, (0, 1] */
	struct room_mark grid_at;	/* of the key that set the spacing */

	enum room_stencil stencil;	/* docs/stencils.md */
	int stencil_auto;	/* scheme.stencil: auto: app_scheme_choose() picks the stencil,
				 * its spacing and Courant number for `dispersion` (until then
				 * the 7-point scheme's are set) */
	double dispersion;	/* grid.dispersion, the tolerance met; 0 when not given */
	int fit;		/* grid.fit: the spacing shrunk so that the box's sides are whole
				 * cells (vox_fit_spacing); spacing and ppw are the fitted ones */
	double unfitted;	/* with fit: the spacing fmax and ppw or dispersion gave */
	int fitted;		/* grid.walls: fitted: cut cells at carved walls (voxel.h,
				 * struct vox_cut); 0: the staircase of whole cells */
	int courant_given;	/* grid.courant was given */
	int walls_given;	/* grid.walls was given (else scheme.stencil: auto may fit them) */
	int order;		/* leggy: 2M, 2..16 (2 = the 7-point scheme) */
	int radius2;		/* compact: R, |q|^2 <= R */
	int boxq[3];		/* box: shells up to (q1, q2, q3) */
	double weights[ROOM_MAX_WEIGHTS];	/* compact and box: per-shell weights */
	int nweights;		/* 0: the default weights */
	int variant;		/* interpolated: index into stn_variant_names */
	struct room_mark scheme_at;	/* of the scheme key, for stability errors */
	struct room_mark courant_at;	/* of grid.courant, or of the grid key */
	int precision;		/* bytes per value: 4 (float32) or 8 (float64) */
	int kernel;		/* CUDA kernel, an enum kernel_id of solver/kernels.h (0: auto;
			 * ignored by the CPU engine) */
	int block[2];		/* CUDA thread block, x by y (seed 003: 32 x 8) */
	int dts;		/* diamond kernel: tile size in stencil reaches; 0 = default */
	int nt;			/* diamond kernel: levels per tower; 0 = default */
	int split;		/* diamond kernel: blocks a tower is split over in z; 0 = default */
	int slab_axis;		/* grid.slab_axis: 1 + the axis stored slowest, across which a
				 * decomposed run is cut; 0 for auto (room_slab_axis) */
	int turned;		/* a turned room (room_turned): 1 + its slab axis; 0: not */
	struct room_mark slab_at;	/* of grid.slab_axis */

	double duration;	/* seconds of impulse response */
	double box[3];		/* room extent in metres: the box, or the bounds of the shape */
	double origin[3];	/* room coordinates of the bounds' low corner: 0 for a box */
	int shaped;		/* 1: a mesh, shapes or a voxel file, not the plain box */
	struct room_geometry geo;

	struct room_material materials[ROOM_MAX_MATERIALS];
	int nmaterials;
	int face_material[ROOM_NFACES];	/* index into materials */

	struct room_source *sources;
	int nsources;
	struct room_receiver *receivers;	/* the points named one by one */
	int nreceivers;
	struct room_grid *grids;	/* receivers: entries with `grid` */
	int ngrids;

	char out_dir[ROOM_PATH_MAX];
	int wav_rate;		/* output sample rate, Hz */
	enum room_wavfmt wav_format;
	double wav_highpass;	/* Hz, DC removal on the WAVs; 0 = off */
	int wav_normalize;	/* 1: one common gain puts the loudest WAV peak at -1 dBFS */

	int snap_every;		/* steps between snapshot frames; 0 = no snapshots */
	int snap_full;		/* output.snapshots.band: 1 the grid's whole band, 0 (the
				 * default) the field low-passed in time at fmax */
	struct room_plane *planes;
	int nplanes;

	/* checkpoints (output.checkpoint.every): one every ckpt_seconds of running or every
	 * ckpt_steps steps; both 0 = none (SIGTERM still writes one) */
	double ckpt_seconds;
	long ckpt_steps;

	struct room_hybrid hybrid;
};

/* Release room and everything it owns (NULL is allowed). */
void room_free(struct room *room);

/* The linear pressure gain of balloon b towards the unit vector d of the source's frame
 * (x front, y left, z up) at frequency f: bilinear in direction and linear in log frequency
 * between band centres, of the levels in dB; the end bands' beyond them. */
double room_balloon_gain(const struct room_balloon *b, const double d[3], double f);

/* The gain of source s towards the world unit vector d at f: its balloon's, or its
 * first-order pattern's. */
double room_source_gain(const struct room_source *s, const double d[3], double f);

/* The source's frame from its aim: front = aim, left = up x front (y when aiming up or
 * down), up = front x left. */
void room_source_frame(struct room_source *s);

/*
 * The library's balloons (model/balloon.c, docs/input.md "Directional sources"): "talker",
 * a point source on a rigid sphere of a head's radius, and "loudspeaker", a rigid piston
 * in a rigid sphere of a small loudspeaker's volume, each from its closed form. Fills b
 * (b->db malloc'd); -1 when name is none of them, RS_ENOMEM-like -2 when out of memory.
 */
int room_balloon_library(const char *name, struct room_balloon *b);
extern const char *const room_balloon_names[];	/* NULL-terminated */

/* Mark in used[] (ROOM_MAX_MATERIALS, zeroed) the materials on the room's surfaces: a box's
 * faces, a mesh's parts, the shapes. A voxel file's materials are not marked. */
void room_used_materials(const struct room *r, int *used);

/* The first material the file defines that no surface uses, or -1 (none, or a voxel file's
 * room, whose walls' materials are the file's). */
int room_unused_material(const struct room *r);

/* RS_EINPUT error "FILE:LINE:COL: key: what" at a recorded mark; returns RS_EINPUT. */
int room_at(struct rs_error *err, const struct room *room, struct room_mark at,
	    const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The same with the file named and the arguments as a va_list, for readers. */
int room_vat(struct rs_error *err, const char *file, struct room_mark at, const char *key,
	     const char *fmt, va_list ap);

/*
 * The grid's layers (docs/parallel.md, "How the room is split"): the voxel grid stores the
 * room with the axis room_slab_axis() gives slowest, and a decomposed run cuts it into slabs
 * across that axis. `auto` takes the axis whose cut, the room's extent across it, is
 * smallest (z on a tie; always z for a voxel file's room, which is read in z slabs).
 *
 * The grid's frame turns the room's cyclically, so that it stays right-handed: grid axis g
 * is the room's axis room_axis_of(a, g) for slab axis a (for a = 0, the grid's x, y, z are
 * the room's y, z, x).
 */
int room_slab_axis(const struct room *room);

static inline int room_axis_of(int slab, int g)
{
	return (slab + 1 + g) % 3;
}

/* The grid axis of the room's axis d (the inverse of room_axis_of). */
static inline int room_grid_axis(int slab, int d)
{
	return (d - slab + 5) % 3;
}

/*
 * A copy of room's geometry in the grid's frame for slab axis a (box, origin, faces, mesh
 * vertices, shapes), with turned = 1 + a, for the voxelisers; its points (sources, receivers,
 * grids, planes) are left out, since they stay in the room's frame and the grid maps them
 * (geometry/voxel.h). NULL when out of memory. Free with room_turned_free.
 */
struct room *room_turned(const struct room *room, int a);
void room_turned_free(struct room *turned);

/* How many cells the configured stencil reaches along an axis (its halo). */
int room_stencil_reach(const struct room *room);

/* The largest random-incidence absorption a locally reacting real admittance reaches. */
double room_absorption_max(void);

/* Paris' diffuse-field absorption of a locally reacting surface with real admittance beta. */
double room_absorption_of_beta(double beta);

/* The admittance whose diffuse absorption is alpha, on the rising branch of Paris' formula
 * (alpha at most room_absorption_max()). */
double room_beta_of_absorption(double alpha);

/* The face names used in YAML, indexed by enum room_face. */
extern const char *const room_face_names[ROOM_NFACES];

#ifdef __cplusplus
}
#endif

#endif
