/* Text for every output: numbers written by hand for the streaming exporters (gt_fmt_u64 ...,
 * no printf per event), the human units of tables, summaries and messages (gt_fmt_count,
 * gt_fmt_bytes, gt_fmt_ns: one convention for every output, docs/exporters.md "Units"), and
 * the clean-up of untrusted trace strings for JSON, CSV and plain UTF-8 (gt_text_*).
 * Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_TEXT_H
#define GPUTRACE_EXPORTERS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- numbers for the streaming exporters: write at p, return the end ---- */

/* Decimal digits of v at p; returns the end. At most 20 bytes. */
char *gt_fmt_u64(char *p, uint64_t v);
/* At most 20 bytes. */
char *gt_fmt_i64(char *p, int64_t v);
/* "0x" and lowercase hex digits of v, no leading zeros; at most 18 bytes. */
char *gt_fmt_hex(char *p, uint64_t v);
/* ns as microseconds with exactly three decimals ("-12.345"); at most 22 bytes. */
char *gt_fmt_us3(char *p, int64_t ns);
/* v / 1000 with exactly three decimals, for a value already scaled by 1000. */
char *gt_fmt_milli(char *p, uint64_t v_milli);

/* ---- human units: the one convention of every table, summary and message ---- */

/* "1,234,567": thousands separated by commas, into buf. Returns buf. */
const char *gt_fmt_count(uint64_t v, char *buf, size_t bytes);

/* Sizes in binary units with their IEC names: "512 B" (one decimal for a fraction, "0.5 B"),
 * then two decimals of KiB, MiB, GiB, TiB or PiB (1 KiB = 1024 B): "12.50 MiB". Takes a
 * double for averages; whole byte counts convert exactly up to 2^53. Returns buf. */
const char *gt_fmt_bytes(double b, char *buf, size_t bytes);

/* Durations: "850 ns" (one decimal for a fraction), then three decimals of us, ms or s:
 * "1.500 us", "12.000 ms", "3.250 s". Returns buf. */
const char *gt_fmt_ns(double ns, char *buf, size_t bytes);

/* A wall-clock time (ns since the Unix epoch) as UTC with nanoseconds,
 * "2026-12-01T14:30:09.701000799Z", the form `--from` takes; "unknown" for 0. Returns buf. */
const char *gt_fmt_date(uint64_t realtime_ns, char *buf, size_t bytes);

/* Rates are decimal, as copy bandwidths always are: bytes per nanosecond is GB/s (10^9 bytes
 * per second); below 1 GB/s "MB/s" (10^6). "(32.03 GB/s)" without the parentheses. Returns
 * buf. */
const char *gt_fmt_rate(double bytes_per_ns, char *buf, size_t bytes);

/* ---- untrusted strings ---- */

/* Copy s[0..len) as the body of a JSON string (no quotes): '"' and '\\' escaped, control
 * characters as \u00XX, invalid UTF-8 replaced by U+FFFD, byte by byte. dst needs 6 * len
 * bytes. Returns the end of what was written. The one JSON escaping of every output. */
char *gt_text_json_escape(char *dst, const char *s, size_t len);

/* The same, as a quoted JSON string written to a stdio stream (stats, sql). */
void gt_text_json_fputs(FILE *out, const char *s, size_t len);

/* Copy s[0..len) replacing invalid UTF-8 by U+FFFD (and NUL by U+FFFD, so the result is
 * a C string too). dst needs 3 * len bytes. Returns the end. */
char *gt_text_utf8_sanitize(char *dst, const char *s, size_t len);

/* CSV field per RFC 4180: quoted when it holds a comma, quote, CR or LF (quotes doubled);
 * invalid UTF-8 replaced. dst needs 6 * len + 2 bytes. Returns the end. */
char *gt_text_csv_field(char *dst, const char *s, size_t len);

/* How much of a text (len bytes, valid UTF-8, and with `json` JSON-escaped as
 * gt_text_json_escape writes it) fits in max bytes without cutting a character or, with
 * json, an escape: a text cut there stays valid UTF-8 and valid JSON. len when it fits. */
size_t gt_text_cut(const char *s, size_t len, size_t max, bool json);

/* Base name of a path ("/usr/bin/python3" -> "python3"); "" for NULL. */
const char *gt_text_basename(const char *path);

#endif /* GPUTRACE_EXPORTERS_TEXT_H */
