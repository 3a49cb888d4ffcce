/* A one-file HTTP/1.1 responder on loopback, for `gputrace view`: it serves one file at one
 * path to a browser page of one allowed origin (CORS) until that file has been fetched
 * completely once, and answers everything else with an error. Runs in the CLI. */
#ifndef GPUTRACE_HTTPD_H
#define GPUTRACE_HTTPD_H

#include <stdbool.h>
#include <stdint.h>

#define GT_HTTPD_HEADER_MAX    8192 /* request line and headers, bytes; more is a 431 */
#define GT_HTTPD_CONN_MAX      8    /* connections served at once; more wait in the backlog */
#define GT_HTTPD_IO_TIMEOUT_NS (10ull * 1000000000ull) /* default idle limit per connection */

struct gt_httpd;

/* One answered request, for a log line. Strings are valid during the callback only. */
struct gt_httpd_response {
	const char *method;  /* as sent (printable, at most 15 bytes); "" if unparsable */
	const char *target;  /* request target as sent (printable, at most 255 bytes) or "" */
	const char *origin;  /* the Origin header (printable, at most 255 bytes), or NULL */
	int status;          /* 200, 204, 400, 403, 404, 405, 408, 431 or 505 */
	uint64_t body_bytes; /* body bytes handed to the kernel */
	bool complete;       /* the whole body (or the whole error response) was sent */
	bool fetched;        /* this was the one fetch: gt_httpd_run() returns 0 after it */
};

struct gt_httpd_options {
	const char *file;         /* the file to serve; opened by gt_httpd_new() */
	const char *url_path;     /* the only path answered, "/run.pftrace": '/' followed by
	                           * [A-Za-z0-9._-], at most 255 bytes */
	const char *allow_origin; /* the Access-Control-Allow-Origin value on every response,
	                           * e.g. "https://ui.perfetto.dev" */
	uint16_t port;            /* on 127.0.0.1; 0: any free port (see gt_httpd_port()) */
	uint64_t io_timeout_ns;   /* a connection that makes no progress this long is closed
	                           * (with a 408 while its request is incomplete); 0: default */
	/* Called after each response; may be NULL. */
	void (*on_response)(void *ctx, const struct gt_httpd_response *r);
	void *ctx;
};

/* Open `file` and listen on 127.0.0.1:port. Nothing is served until gt_httpd_run().
 * Returns 0 and *ret, -EINVAL (a bad url_path or allow_origin), -ENOENT/-EACCES/... (the file
 * cannot be opened), -EISDIR (not a regular file), -EADDRINUSE (the port is taken), -EACCES
 * (a privileged port), -ENOMEM, or another -errno from socket/bind/listen. */
int gt_httpd_new(const struct gt_httpd_options *opts, struct gt_httpd **ret);

/* The port listened on (the one chosen when opts->port was 0). */
uint16_t gt_httpd_port(const struct gt_httpd *h);

/* The size of the served file, bytes (as it was when gt_httpd_new() opened it). */
uint64_t gt_httpd_file_bytes(const struct gt_httpd *h);

/* Serve until the file has been fetched once: a GET of url_path whose Origin is absent or
 * allow_origin got the whole body and its client closed the connection (or the idle limit
 * passed after the last byte). A GET from another origin is answered (the browser, not the
 * server, keeps the page from reading it: that is what CORS is) but does not count.
 * `timeout_ns` (0: none) bounds the whole call; `stop_fd` (-1: none) stops it as soon as it is
 * readable (it is not read). Returns 0 (fetched), -ETIMEDOUT, -ECANCELED (stop_fd), or -errno
 * of a failed poll. Connections still open when it returns are closed. SIGPIPE is blocked in
 * the calling thread while it runs, and one raised by a vanished peer is discarded. */
int gt_httpd_run(struct gt_httpd *h, uint64_t timeout_ns, int stop_fd);

/* Close the listener, the connections and the file. NULL is accepted. */
void gt_httpd_free(struct gt_httpd *h);

#endif /* GPUTRACE_HTTPD_H */
