/* image.h - PNG images (the slices of roomsim voxelize), written through libpng. */
#ifndef IO_IMAGE_H
#define IO_IMAGE_H

#include <stdint.h>

#include "../common/rs_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write w x h pixels of 8-bit RGB, row 0 at the top, to path; 0 or RS_EIO. */
int img_write_png(const char *path, const uint8_t *rgb, int w, int h, struct rs_error *err);

#ifdef __cplusplus
}
#endif

#endif
