/*
 * config.h - the YAML reader: a room file (docs/input.md documents every key) into the domain
 * model, a struct room (model/room.h).
 *
 * cfg_load() parses and validates a file into a struct room that the caller owns and releases
 * with room_free(). Every error message has the form
 *     FILE:LINE:COL: key.path: what is wrong (what would be valid)
 * A mesh named by geometry.mesh is read here; a voxel file's header is checked here and its
 * cells are read when the grid is built (struct room_voxel_file).
 */
#ifndef IO_CONFIG_H
#define IO_CONFIG_H

#include "../common/rs_error.h"
#include "../model/room.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse and validate path. Returns NULL and fills err (RS_EINPUT or RS_EIO) on failure. */
struct room *cfg_load(const char *path, struct rs_error *err);

/*
 * The same with overrides, as `roomsim run --set` takes them: each "a.b.c=VALUE" sets that key
 * to the scalar VALUE as if the file said so (maps made where missing), "a.b.c=" removes it.
 * Messages about a value set so name the override instead of a line.
 */
struct room *cfg_load_set(const char *path, char *const *sets, int nsets, struct rs_error *err);

/* Same, from a string in memory; name stands for the file in messages. */
struct room *cfg_load_string(const char *text, const char *name, struct rs_error *err);

/*
 * An interval as output.checkpoint.every and `run --checkpoint` take it: a number and a unit,
 * "90 s", "10 min", "2 h" (a plain number is seconds) into *seconds, or "5000 steps" into
 * *steps (the other set to 0). -1 when text is none of these.
 */
int cfg_interval(const char *text, double *seconds, long *steps);

#ifdef __cplusplus
}
#endif

#endif
