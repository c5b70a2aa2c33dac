/*
 * balloon.h - reading a source's balloon table, a CSV file of levels per direction and band
 * (docs/input.md, "Directional sources").
 */
#ifndef IO_BALLOON_H
#define IO_BALLOON_H

#include <stddef.h>

#include "../model/room.h"

/* Read path into b (b->db malloc'd, the caller's); -1 with msg "PATH:LINE: what is wrong
 * (what would be valid)" when it cannot. */
int cfg_balloon_read(const char *path, struct room_balloon *b, char *msg, size_t cap);

#endif
