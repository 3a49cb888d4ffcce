/* Protobuf wire format: the slow path of the encoder and a bounds-checked field reader.
 * Runs in the CLI (and in the perfetto tests). */
#include <errno.h>

#include "protobuf.h"

char *gt_pb_close_long(char *p, char *mark)
{
	size_t len = (size_t)(p - mark - 1);
	unsigned n = gt_pb_varint_size(len);

	memmove(mark + n, mark + 1, len);
	gt_pb_varint(mark, len);
	return mark + n + len;
}

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (*p >= end)
			return -EBADMSG;
		uint8_t b = *(*p)++;

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EBADMSG;
}

int gt_pb_next(const uint8_t **p, const uint8_t *end, struct gt_pb_field *f)
{
	uint64_t key;

	if (*p >= end)
		return 0;
	if (read_varint(p, end, &key) < 0 || (key >> 3) == 0 || (key >> 3) > UINT32_MAX)
		return -EBADMSG;
	f->field = (uint32_t)(key >> 3);
	f->wire = (enum gt_pb_wire)(key & 7);
	f->data = NULL;
	f->len = 0;
	f->value = 0;
	switch (f->wire) {
	case GT_PB_VARINT:
		return read_varint(p, end, &f->value) < 0 ? -EBADMSG : 1;
	case GT_PB_I64:
	case GT_PB_I32: {
		unsigned n = f->wire == GT_PB_I64 ? 8 : 4;

		if ((size_t)(end - *p) < n)
			return -EBADMSG;
		for (unsigned i = 0; i < n; i++)
			f->value |= (uint64_t)(*p)[i] << (8 * i);
		*p += n;
		return 1;
	}
	case GT_PB_LEN: {
		uint64_t len;

		if (read_varint(p, end, &len) < 0 || len > (uint64_t)(end - *p))
			return -EBADMSG;
		f->data = *p;
		f->len = (size_t)len;
		*p += len;
		return 1;
	}
	default:
		return -EBADMSG;
	}
}
