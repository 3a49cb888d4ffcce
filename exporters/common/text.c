/* Numbers, human units and the clean-up of untrusted strings, for every output (see
 * text.h). Runs in the CLI. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "text.h"

/* ------------------------------------------------------------------------------------ */
/* Numbers, by hand: printf per event would cost more than everything else together.     */

static const char digits2[201] = "00010203040506070809101112131415161718192021222324"
                                 "25262728293031323334353637383940414243444546474849"
                                 "50515253545556575859606162636465666768697071727374"
                                 "75767778798081828384858687888990919293949596979899";

char *gt_fmt_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	int shift = 60;

	*p++ = '0';
	*p++ = 'x';
	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = hex[(v >> shift) & 0xf];
	return p;
}

char *gt_fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	char *t = tmp + sizeof(tmp);
	size_t n;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		*--t = digits2[d + 1];
		*--t = digits2[d];
	}
	if (v >= 10) {
		*--t = digits2[v * 2 + 1];
		*--t = digits2[v * 2];
	} else {
		*--t = (char)('0' + v);
	}
	n = (size_t)(tmp + sizeof(tmp) - t);
	memcpy(p, t, n);
	return p + n;
}

char *gt_fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return gt_fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return gt_fmt_u64(p, (uint64_t)v);
}

char *gt_fmt_milli(char *p, uint64_t v)
{
	unsigned f = (unsigned)(v % 1000);

	p = gt_fmt_u64(p, v / 1000);
	p[0] = '.';
	p[1] = (char)('0' + f / 100);
	p[2] = digits2[(f % 100) * 2];
	p[3] = digits2[(f % 100) * 2 + 1];
	return p + 4;
}

char *gt_fmt_us3(char *p, int64_t ns)
{
	uint64_t u = (uint64_t)ns;

	if (ns < 0) {
		*p++ = '-';
		u = (uint64_t)0 - u;
	}
	return gt_fmt_milli(p, u);
}

const char *gt_fmt_date(uint64_t realtime_ns, char *buf, size_t bytes)
{
	time_t sec = (time_t)(realtime_ns / 1000000000u);
	struct tm tm;

	if (!realtime_ns || !gmtime_r(&sec, &tm))
		snprintf(buf, bytes, "unknown");
	else
		snprintf(buf, bytes, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ", tm.tm_year + 1900,
		         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		         (unsigned)(realtime_ns % 1000000000u));
	return buf;
}

/* ------------------------------------------------------------------------------------ */
/* Text                                                                                  */

/* Length of the valid UTF-8 sequence at s (at most avail bytes), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	unsigned lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (avail < n)
		return 0;
	/* the second byte's range excludes overlong forms, surrogates and > U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static char *put_fffd(char *d)
{
	d[0] = (char)0xef;
	d[1] = (char)0xbf;
	d[2] = (char)0xbd;
	return d + 3;
}

char *gt_text_json_escape(char *d, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*d++ = (char)c;
			i++;
		} else if (c == '"' || c == '\\') {
			*d++ = '\\';
			*d++ = (char)c;
			i++;
		} else if (c < 0x20) {
			memcpy(d, "\\u00", 4);
			d[4] = hex[c >> 4];
			d[5] = hex[c & 15];
			d += 6;
			i++;
		} else {
			size_t n = utf8_seq(s + i, len - i);

			if (n == 0) {
				d = put_fffd(d);
				i++;
			} else {
				memcpy(d, s + i, n);
				d += n;
				i += n;
			}
		}
	}
	return d;
}

char *gt_text_utf8_sanitize(char *d, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0;

	while (i < len) {
		if (s[i] >= 0x01 && s[i] < 0x80) {
			*d++ = (char)s[i++];
			continue;
		}
		size_t n = s[i] ? utf8_seq(s + i, len - i) : 0;

		if (n == 0) {
			d = put_fffd(d);
			i++;
		} else {
			memcpy(d, s + i, n);
			d += n;
			i += n;
		}
	}
	return d;
}

char *gt_text_csv_field(char *d, const char *s, size_t len)
{
	bool quote = false;
	char *start = d;
	char *end;

	for (size_t i = 0; i < len; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n') {
			quote = true;
			break;
		}
	if (!quote)
		return gt_text_utf8_sanitize(d, s, len);
	/* sanitize after the opening quote, then double the quotes in place from the back */
	*d++ = '"';
	end = gt_text_utf8_sanitize(d, s, len);
	{
		size_t quotes = 0;

		for (char *q = d; q < end; q++)
			quotes += *q == '"';
		char *w = end + quotes;
		char *r = end;

		end = w;
		while (r > d) {
			char c = *--r;

			*--w = c;
			if (c == '"')
				*--w = '"';
		}
	}
	*end++ = '"';
	(void)start;
	return end;
}

size_t gt_text_cut(const char *s, size_t len, size_t max, bool json)
{
	size_t i = 0;

	if (len <= max)
		return len;
	while (i < len) {
		unsigned char b = (unsigned char)s[i];
		size_t step = 1;

		if (json && b == '\\')
			step = i + 1 < len && s[i + 1] == 'u' ? 6 : 2;
		else if (b >= 0xf0)
			step = 4;
		else if (b >= 0xe0)
			step = 3;
		else if (b >= 0xc0)
			step = 2;
		if (i + step > max)
			break;
		i += step;
	}
	return i;
}

const char *gt_text_basename(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (!path)
		return "";
	return slash && slash[1] ? slash + 1 : path;
}

void gt_text_json_fputs(FILE *out, const char *s, size_t len)
{
	/* escaped a piece at a time; a piece never ends inside a valid UTF-8 sequence, so the
	 * result is what escaping the whole string at once gives */
	enum {
		PIECE = 1024
	};
	char buf[6 * PIECE];
	size_t i = 0;

	fputc('"', out);
	while (i < len) {
		size_t end = len - i > PIECE ? i + PIECE : len;

		for (size_t q = end; end < len && q > i && end - q < 3;) {
			unsigned char c = (unsigned char)s[--q];

			if (c < 0x80)
				break;
			if (c >= 0xc0) {
				if (q + (c >= 0xf0 ? 4u : c >= 0xe0 ? 3u : 2u) > end)
					end = q;
				break;
			}
		}
		fwrite(buf, 1, (size_t)(gt_text_json_escape(buf, s + i, end - i) - buf), out);
		i = end;
	}
	fputc('"', out);
}

/* ------------------------------------------------------------------------------------ */
/* Human units                                                                           */

const char *gt_fmt_count(uint64_t v, char *buf, size_t bytes)
{
	char digits[24];
	char *end = gt_fmt_u64(digits, v);
	size_t n = (size_t)(end - digits), o = 0;

	if (!bytes)
		return buf;
	for (size_t i = 0; i < n && o + 2 < bytes; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *gt_fmt_bytes(double b, char *buf, size_t bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	unsigned u = 0;

	if (b < 1024) {
		snprintf(buf, bytes, b == floor(b) ? "%.0f B" : "%.1f B", b);
		return buf;
	}
	b /= 1024;
	while (b >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		b /= 1024;
		u++;
	}
	snprintf(buf, bytes, "%.2f %s", b, units[u]);
	return buf;
}

const char *gt_fmt_ns(double ns, char *buf, size_t bytes)
{
	if (ns < 1e3)
		snprintf(buf, bytes, ns == floor(ns) ? "%.0f ns" : "%.1f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, bytes, "%.3f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, bytes, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, bytes, "%.3f s", ns / 1e9);
	return buf;
}

const char *gt_fmt_rate(double bytes_per_ns, char *buf, size_t bytes)
{
	/* tiny copies (a 4-byte result) would all read "0.00 GB/s" */
	if (bytes_per_ns < 1.0)
		snprintf(buf, bytes, "%.2f MB/s", bytes_per_ns * 1e3);
	else
		snprintf(buf, bytes, "%.2f GB/s", bytes_per_ns);
	return buf;
}
