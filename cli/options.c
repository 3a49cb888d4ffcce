/* Parsing of option values shared by the subcommands (sizes, durations, numbers, choices)
 * and names derived from them. Runs in the CLI. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "exporter.h"
#include "options.h"

/* Leading decimal digits of s into *v; returns the number of digits, or -ERANGE. */
static int parse_digits(const char *s, uint64_t *v)
{
	int n = 0;

	*v = 0;
	for (; isdigit((unsigned char)s[n]); n++) {
		unsigned d = (unsigned)(s[n] - '0');

		if (*v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		*v = *v * 10 + d;
	}
	return n;
}

int gt_opt_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	int n = parse_digits(s, &v);

	if (n == -ERANGE)
		return -ERANGE;
	if (n == 0 || s[n] != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int gt_opt_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	static const char units[] = "KMGT";
	uint64_t v, mult = 1;
	const char *unit;
	int n = parse_digits(s, &v);

	if (n == -ERANGE)
		return -ERANGE;
	if (n == 0)
		return -EINVAL;
	s += n;
	if (*s && (unit = strchr(units, toupper((unsigned char)*s)))) {
		mult = 1ull << (10 * (unit - units + 1));
		s++;
		/* "M", "MB" and "MiB" all mean 2^20: nobody sizes a ring in powers of ten. */
		if (strcasecmp(s, "ib") == 0 || strcasecmp(s, "b") == 0)
			s += strlen(s);
	} else if (strcasecmp(s, "b") == 0) {
		s++;
	}
	if (*s)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	v *= mult;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int gt_opt_duration(const char *s, uint64_t max_ns, uint64_t *ret_ns)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
	        {"", 1000000000ull},   {"s", 1000000000ull},    {"ms", 1000000ull},
	        {"m", 60000000000ull}, {"h", 3600000000000ull},
	};
	uint64_t whole, frac = 0, frac_div = 1;
	int n = parse_digits(s, &whole);

	if (n < 0)
		return -ERANGE;
	s += n;
	if (*s == '.') {
		int f = 0;

		/* Up to 9 fractional digits count (nanoseconds); more are ignored. */
		for (s++; isdigit((unsigned char)*s); s++, f++) {
			if (f < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				frac_div *= 10;
			}
		}
		if (n == 0 && f == 0)
			return -EINVAL;
	} else if (n == 0) {
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s, units[i].name) != 0)
			continue;
		if (whole > max_ns / units[i].ns)
			return -ERANGE;
		/* frac * ns could overflow for minutes and hours, where frac_div divides ns. */
		*ret_ns = whole * units[i].ns + (units[i].ns % frac_div == 0
		                                         ? frac * (units[i].ns / frac_div)
		                                         : frac * units[i].ns / frac_div);
		if (*ret_ns > max_ns)
			return -ERANGE;
		return 0;
	}
	return -EINVAL;
}

int gt_opt_choice(const char *s, const char *const *choices)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(s, choices[i]) == 0)
			return i;
	return -EINVAL;
}

void gt_opt_derived_name(const char *trace, const char *ext, char *out, size_t bytes)
{
	static const char gtrace[] = ".gtrace";
	size_t len = strlen(trace), e = sizeof(gtrace) - 1;

	if (len >= e && strcmp(trace + len - e, gtrace) == 0)
		len -= e;
	snprintf(out, bytes, "%.*s%s", (int)len, trace, ext);
}

void gt_opt_exporter_names(char *buf, size_t bytes)
{
	size_t len = 0;

	buf[0] = '\0';
	for (const struct gt_exporter_ops *const *e = gt_exporter_list(); *e && len < bytes; e++)
		len += (size_t)snprintf(buf + len, bytes - len, "%s%s", len ? ", " : "",
		                        (*e)->name);
	if (!buf[0])
		snprintf(buf, bytes, "(no exporter in this build)");
}
