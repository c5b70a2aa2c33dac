/* image.c - write PNG images with libpng's simplified API. */
#include "image.h"

#include <png.h>
#include <string.h>

int img_write_png(const char *path, const uint8_t *rgb, int w, int h, struct rs_error *err)
{
	png_image img;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	img.width = (png_uint_32)w;
	img.height = (png_uint_32)h;
	img.format = PNG_FORMAT_RGB;
	if (!png_image_write_to_file(&img, path, 0, rgb, 3 * w, NULL))
		return rs_fail(err, RS_EIO, "%s: cannot write the PNG image: %s", path,
			       img.message);
	return 0;
}
