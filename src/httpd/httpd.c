/* The one-file loopback HTTP responder behind `gputrace view`: one poll loop over the
 * listener and up to GT_HTTPD_CONN_MAX non-blocking connections, each read into a bounded
 * buffer, answered once and closed. Trusts nothing in a request. Runs in the CLI. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "httpd.h"

#define URL_PATH_MAX   255
#define ORIGIN_MAX     255
#define LISTEN_BACKLOG 16
#define SENDFILE_CHUNK (1u << 30) /* bytes per sendfile call: below its 0x7ffff000 cap */

enum conn_state {
	CONN_FREE,   /* slot unused; fd is -1 */
	CONN_READ,   /* reading the request line and headers */
	CONN_WRITE,  /* sending out[], then the file's bytes */
	CONN_LINGER, /* response sent and our side shut: discard input until the peer closes, so
	              * unread request bytes never turn our close into a reset that eats the
	              * response */
};

struct conn {
	int fd;
	enum conn_state state;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; what happens then depends on state */
	size_t in_len;        /* request bytes in in[] */
	char in[GT_HTTPD_HEADER_MAX];
	char out[1024];          /* status line, headers and an error's body */
	size_t out_len, out_off; /* bytes in out[], bytes of them sent */
	uint64_t body_off;       /* file offset of the next body byte */
	uint64_t body_end;       /* file bytes to send (0: no body from the file) */
	bool counts;             /* sending all of it is the one fetch */
	char method[16], target[URL_PATH_MAX + 1], origin[ORIGIN_MAX + 1];
	bool has_origin;
	struct gt_httpd_response resp; /* filled as the request is parsed and answered */
};

struct gt_httpd {
	int listen_fd;
	int file_fd;
	uint64_t file_bytes;
	uint16_t port;
	char url_path[URL_PATH_MAX + 1];
	char *allow_origin; /* owned */
	uint64_t io_timeout_ns;
	void (*on_response)(void *ctx, const struct gt_httpd_response *r);
	void *ctx;
	bool done; /* the connection that carried the whole file has closed */
	struct conn conns[GT_HTTPD_CONN_MAX];
};

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 204:
		return "No Content";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 431:
		return "Request Header Fields Too Large";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Error";
	}
}

/* A header value or token safe to send back: printable ASCII, no CR or LF. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

/* Copy at most dst_bytes - 1 bytes of s[0..len), non-printable ones as '?'. */
static void copy_printable(char *dst, size_t dst_bytes, const char *s, size_t len)
{
	size_t i;

	if (len > dst_bytes - 1)
		len = dst_bytes - 1;
	for (i = 0; i < len; i++)
		dst[i] = ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) ? '?' : s[i];
	dst[i] = '\0';
}

static bool valid_url_path(const char *p)
{
	size_t n = strlen(p);

	if (n < 2 || n > URL_PATH_MAX || p[0] != '/')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
		            p[i]))
			return false;
	return true;
}

/* RFC 9110 token characters (method and header names). */
static bool tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The Host header names this machine's loopback: 127.0.0.1, localhost or [::1], any port.
 * Anything else is a page that reached us through a name it controls (DNS rebinding). */
static bool loopback_host(const char *v, size_t len)
{
	static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (len < n || strncasecmp(v, names[i], n) != 0)
			continue;
		if (len == n)
			return true;
		if (v[n] != ':' || len == n + 1 || len > n + 6)
			continue;
		for (size_t j = n + 1; j < len; j++)
			if (v[j] < '0' || v[j] > '9')
				return false;
		return true;
	}
	return false;
}

/* Case-insensitive name comparison of a header line's name[0..len). */
static bool name_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && strncasecmp(name, want, len) == 0;
}

/* Parse c->in[0..end) (request line and headers, the blank line excluded) and choose the
 * response. Fills c->method/target/origin; returns the status. *pna: the preflight asked for
 * Private Network Access; *fetch_mode_no_cors: Sec-Fetch-Mode was "no-cors". */
static int parse_request(const struct gt_httpd *h, struct conn *c, size_t end, bool *pna,
                         bool *no_cors, bool *http10)
{
	char *line = c->in, *eol, *sp1, *sp2, *path_end;
	bool have_host = false, host_ok = false;
	size_t len;

	*pna = *no_cors = *http10 = false;
	/* Request line: METHOD SP target SP HTTP/1.x */
	eol = memchr(line, '\n', end);
	if (!eol)
		eol = c->in + end;
	len = (size_t)(eol - line);
	if (len && line[len - 1] == '\r')
		len--;
	sp1 = memchr(line, ' ', len);
	if (!sp1 || sp1 == line || (size_t)(sp1 - line) >= sizeof(c->method))
		return 400;
	for (char *p = line; p < sp1; p++)
		if (!tchar(*p))
			return 400;
	copy_printable(c->method, sizeof(c->method), line, (size_t)(sp1 - line));
	sp2 = memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line));
	if (!sp2 || sp2 == sp1 + 1)
		return 400;
	copy_printable(c->target, sizeof(c->target), sp1 + 1, (size_t)(sp2 - sp1 - 1));
	for (char *p = sp1 + 1; p < sp2; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p > 0x7e)
			return 400;
	{
		size_t vlen = len - (size_t)(sp2 + 1 - line);
		const char *v = sp2 + 1;

		if (vlen == 8 && memcmp(v, "HTTP/1.1", 8) == 0)
			;
		else if (vlen == 8 && memcmp(v, "HTTP/1.0", 8) == 0)
			*http10 = true;
		else if (vlen >= 5 && memcmp(v, "HTTP/", 5) == 0)
			return 505;
		else
			return 400;
	}

	/* Header lines: name ":" OWS value OWS; no folding, no control characters. */
	for (line = eol + 1; line < c->in + end; line = eol + 1) {
		char *colon, *v, *ve;

		eol = memchr(line, '\n', (size_t)(c->in + end - line));
		if (!eol)
			eol = c->in + end;
		len = (size_t)(eol - line);
		if (len && line[len - 1] == '\r')
			len--;
		if (len == 0)
			break;
		colon = memchr(line, ':', len);
		if (!colon || colon == line)
			return 400;
		for (char *p = line; p < colon; p++)
			if (!tchar(*p))
				return 400; /* also a space before the colon, or a folded line */
		for (char *p = colon + 1; p < line + len; p++)
			if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
				return 400;
		v = colon + 1;
		ve = line + len;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (name_is(line, (size_t)(colon - line), "Host")) {
			if (have_host)
				return 400;
			have_host = true;
			host_ok = loopback_host(v, (size_t)(ve - v));
		} else if (name_is(line, (size_t)(colon - line), "Origin")) {
			if (c->has_origin)
				return 400;
			c->has_origin = true;
			copy_printable(c->origin, sizeof(c->origin), v, (size_t)(ve - v));
			if ((size_t)(ve - v) > ORIGIN_MAX)
				c->origin[0] = '\0'; /* too long to be any origin we allow */
		} else if (name_is(line, (size_t)(colon - line),
		                   "Access-Control-Request-Private-Network")) {
			*pna = (ve - v == 4 && strncasecmp(v, "true", 4) == 0);
		} else if (name_is(line, (size_t)(colon - line), "Sec-Fetch-Mode")) {
			*no_cors = (ve - v == 7 && strncasecmp(v, "no-cors", 7) == 0);
		}
	}
	if (!have_host && !*http10)
		return 400; /* HTTP/1.1 requires Host */
	if (have_host && !host_ok)
		return 403;

	/* The path, without a query. Only the one path exists; c->target holds at most
	 * URL_PATH_MAX bytes of a longer target, which is never it. */
	if ((size_t)(sp2 - sp1 - 1) > URL_PATH_MAX)
		return 404;
	path_end = strchr(c->target, '?');
	len = path_end ? (size_t)(path_end - c->target) : strlen(c->target);
	if (len != strlen(h->url_path) || memcmp(c->target, h->url_path, len) != 0)
		return 404;
	if (strcmp(c->method, "GET") == 0 || strcmp(c->method, "HEAD") == 0)
		return 200;
	if (strcmp(c->method, "OPTIONS") == 0)
		return 204;
	return 405;
}

/* Close a connection; closing the one that carried the whole file ends the serving. */
static void conn_close(struct gt_httpd *h, struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd); /* pairs with accept4() in accept_all() */
	c->fd = -1;
	c->state = CONN_FREE;
	if (c->resp.fetched)
		h->done = true;
}

/* The response's end, sent whole or not: report it, then shut our side and linger, or close. */
static void conn_finish(struct gt_httpd *h, struct conn *c, bool complete, uint64_t now)
{
	c->resp.complete = complete;
	c->resp.fetched = complete && c->counts;
	c->resp.method = c->method;
	c->resp.target = c->target;
	c->resp.origin = c->has_origin ? c->origin : NULL;
	if (h->on_response)
		h->on_response(h->ctx, &c->resp);
	if (!complete) {
		conn_close(h, c);
		return;
	}
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_LINGER;
	c->deadline_ns = now + h->io_timeout_ns; /* not extended by what the peer sends */
}

/* Build the response to a request whose head ends at c->in[end] (status 431 and 408 come
 * without a parsed request) and start sending it. */
static void respond(struct gt_httpd *h, struct conn *c, int status, bool pna, bool head_only,
                    uint64_t now)
{
	char body[64];
	int n, blen = 0;

	c->resp.status = status;
	c->resp.body_bytes = 0;
	c->body_off = 0;
	c->body_end = 0;
	n = snprintf(c->out, sizeof(c->out),
	             "HTTP/1.1 %d %s\r\n"
	             "Access-Control-Allow-Origin: %s\r\n"
	             "X-Content-Type-Options: nosniff\r\n"
	             "Cache-Control: no-cache\r\n"
	             "Connection: close\r\n",
	             status, reason(status), h->allow_origin);
	if (status == 200) {
		n += snprintf(c->out + n, sizeof(c->out) - (size_t)n,
		              "Content-Type: application/octet-stream\r\n"
		              "Content-Length: %llu\r\n\r\n",
		              (unsigned long long)h->file_bytes);
		if (!head_only)
			c->body_end = h->file_bytes;
	} else if (status == 204) {
		n += snprintf(c->out + n, sizeof(c->out) - (size_t)n,
		              "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
		              "Access-Control-Max-Age: 600\r\n"
		              "%s\r\n",
		              pna ? "Access-Control-Allow-Private-Network: true\r\n" : "");
	} else {
		blen = snprintf(body, sizeof(body), "%d %s\n", status, reason(status));
		n += snprintf(c->out + n, sizeof(c->out) - (size_t)n,
		              "%sContent-Type: text/plain; charset=utf-8\r\n"
		              "Content-Length: %d\r\n\r\n%s",
		              status == 405 ? "Allow: GET, HEAD, OPTIONS\r\n" : "", blen,
		              head_only ? "" : body);
	}
	c->out_len = (size_t)n < sizeof(c->out) ? (size_t)n : sizeof(c->out) - 1;
	c->out_off = 0;
	c->state = CONN_WRITE;
	c->deadline_ns = now + h->io_timeout_ns;
}

/* The request head is complete (or can never be): parse it and answer. */
static void answer(struct gt_httpd *h, struct conn *c, size_t head_end, uint64_t now)
{
	bool pna, no_cors, http10;
	int status = parse_request(h, c, head_end, &pna, &no_cors, &http10);
	bool head_only = strcmp(c->method, "HEAD") == 0;

	/* Only a GET from the allowed page (or from no page: curl, a typed URL) is the fetch
	 * the user is waiting for; another page's request is answered and the browser keeps it
	 * from that page, but it must not end the serving. */
	c->counts = status == 200 && strcmp(c->method, "GET") == 0 && !no_cors &&
	            (!c->has_origin || strcmp(c->origin, h->allow_origin) == 0);
	respond(h, c, status, pna, head_only, now);
}

/* End of the request head in in[0..len): the index of the blank line's first byte, or -1. */
static long head_end(const char *in, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (in[i] != '\n')
			continue;
		if (in[i + 1] == '\n')
			return (long)i + 1;
		if (in[i + 1] == '\r' && i + 2 < len && in[i + 2] == '\n')
			return (long)i + 1;
	}
	return -1;
}

static void conn_read(struct gt_httpd *h, struct conn *c, uint64_t now)
{
	ssize_t n;
	long end;

	if (c->state == CONN_LINGER) {
		char scratch[4096];

		n = recv(c->fd, scratch, sizeof(scratch), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_close(h, c);
		return;
	}
	n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(h, c);
		return;
	}
	if (n == 0) {
		conn_close(h, c); /* the peer gave up before its request was complete */
		return;
	}
	c->in_len += (size_t)n;
	c->deadline_ns = now + h->io_timeout_ns;
	end = head_end(c->in, c->in_len);
	if (end >= 0)
		answer(h, c, (size_t)end, now);
	else if (c->in_len == sizeof(c->in))
		respond(h, c, 431, false, false, now);
}

static void conn_write(struct gt_httpd *h, struct conn *c, uint64_t now)
{
	ssize_t n;

	if (c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				conn_finish(h, c, false, now);
			return;
		}
		c->out_off += (size_t)n;
		c->deadline_ns = now + h->io_timeout_ns;
		if (c->out_off < c->out_len)
			return;
	}
	if (c->body_off < c->body_end) {
		off_t off = (off_t)c->body_off;
		uint64_t left = c->body_end - c->body_off;

		n = sendfile(c->fd, h->file_fd, &off,
		             left < SENDFILE_CHUNK ? left : SENDFILE_CHUNK);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				conn_finish(h, c, false, now);
			return;
		}
		if (n == 0) { /* the file shrank under us: the body cannot be completed */
			conn_finish(h, c, false, now);
			return;
		}
		c->body_off += (uint64_t)n;
		c->resp.body_bytes = c->body_off;
		c->deadline_ns = now + h->io_timeout_ns;
		if (c->body_off < c->body_end)
			return;
	}
	conn_finish(h, c, true, now);
}

/* A connection's deadline passed: a request still being read gets a 408 if any of it came
 * (an idle one is just closed), a response the peer stopped reading is abandoned, a linger
 * ends. */
static void conn_expire(struct gt_httpd *h, struct conn *c, uint64_t now)
{
	switch (c->state) {
	case CONN_READ:
		if (c->in_len)
			respond(h, c, 408, false, false, now);
		else
			conn_close(h, c);
		break;
	case CONN_WRITE:
		conn_finish(h, c, false, now);
		break;
	default:
		conn_close(h, c);
		break;
	}
}

static struct conn *free_slot(struct gt_httpd *h)
{
	for (int i = 0; i < GT_HTTPD_CONN_MAX; i++)
		if (h->conns[i].state == CONN_FREE)
			return &h->conns[i];
	return NULL;
}

static void accept_all(struct gt_httpd *h, uint64_t now)
{
	struct conn *c;
	int fd;

	while ((c = free_slot(h))) {
		fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or a transient failure (EMFILE, ECONNABORTED) */
		memset(c, 0, sizeof(*c));
		c->fd = fd; /* closed by conn_close() */
		c->state = CONN_READ;
		c->deadline_ns = now + h->io_timeout_ns;
	}
}

int gt_httpd_new(const struct gt_httpd_options *opts, struct gt_httpd **ret)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t salen = sizeof(sa);
	struct gt_httpd *h = NULL;
	struct stat st;
	int one = 1, r;

	if (!opts->file || !opts->url_path || !valid_url_path(opts->url_path) ||
	    !opts->allow_origin || !*opts->allow_origin || !printable(opts->allow_origin) ||
	    strlen(opts->allow_origin) > ORIGIN_MAX)
		return -EINVAL;
	h = calloc(1, sizeof(*h)); /* freed by gt_httpd_free() */
	if (!h)
		return -ENOMEM;
	h->listen_fd = -1;
	h->file_fd = -1;
	for (int i = 0; i < GT_HTTPD_CONN_MAX; i++)
		h->conns[i].fd = -1;
	strcpy(h->url_path, opts->url_path);
	h->io_timeout_ns = opts->io_timeout_ns ? opts->io_timeout_ns : GT_HTTPD_IO_TIMEOUT_NS;
	h->on_response = opts->on_response;
	h->ctx = opts->ctx;
	h->allow_origin = strdup(opts->allow_origin); /* freed by gt_httpd_free() */
	if (!h->allow_origin) {
		r = -ENOMEM;
		goto out;
	}
	h->file_fd = open(opts->file, O_RDONLY | O_CLOEXEC); /* closed by gt_httpd_free() */
	if (h->file_fd < 0) {
		r = -errno;
		goto out;
	}
	if (fstat(h->file_fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EISDIR;
		goto out;
	}
	h->file_bytes = (uint64_t)st.st_size;

	/* closed by gt_httpd_free() */
	h->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->listen_fd < 0) {
		r = -errno;
		goto out;
	}
	/* A previous run's connections in TIME_WAIT must not hold the port; a live listener
	 * still does (Linux refuses the bind then). */
	setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(opts->port);
	if (bind(h->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(h->listen_fd, LISTEN_BACKLOG) < 0 ||
	    getsockname(h->listen_fd, (struct sockaddr *)&sa, &salen) < 0) {
		r = -errno;
		goto out;
	}
	h->port = ntohs(sa.sin_port);
	*ret = h;
	h = NULL;
	r = 0;
out:
	gt_httpd_free(h);
	return r;
}

uint16_t gt_httpd_port(const struct gt_httpd *h)
{
	return h->port;
}

uint64_t gt_httpd_file_bytes(const struct gt_httpd *h)
{
	return h->file_bytes;
}

int gt_httpd_run(struct gt_httpd *h, uint64_t timeout_ns, int stop_fd)
{
	struct pollfd pfd[2 + GT_HTTPD_CONN_MAX];
	struct conn *slot[2 + GT_HTTPD_CONN_MAX];
	uint64_t start = gt_clock_ns(CLOCK_MONOTONIC);
	uint64_t end = timeout_ns ? start + timeout_ns : UINT64_MAX;
	sigset_t pipe_set, old_mask;
	int ret;

	/* sendfile() has no MSG_NOSIGNAL: a peer that went away raises SIGPIPE in this thread.
	 * Hold it while serving and discard it afterwards, so the process's disposition stays
	 * whatever its owner chose. Restored at out. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	for (;;) {
		uint64_t now = gt_clock_ns(CLOCK_MONOTONIC), next = end;
		int nfds = 0, stop_i = -1, listen_i = -1, wait_ms;

		if (h->done) {
			ret = 0;
			goto out;
		}
		if (now >= end) {
			ret = -ETIMEDOUT;
			goto out;
		}
		for (int i = 0; i < GT_HTTPD_CONN_MAX; i++) {
			struct conn *c = &h->conns[i];

			if (c->state == CONN_FREE)
				continue;
			if (c->deadline_ns <= now)
				conn_expire(h, c, now);
			if (c->state == CONN_FREE)
				continue;
			if (c->deadline_ns < next)
				next = c->deadline_ns;
			pfd[nfds] = (struct pollfd){
			        .fd = c->fd,
			        .events = c->state == CONN_WRITE ? POLLOUT : POLLIN,
			};
			slot[nfds++] = c;
		}
		if (h->done)
			continue;
		if (stop_fd >= 0) {
			stop_i = nfds;
			pfd[nfds] = (struct pollfd){.fd = stop_fd, .events = POLLIN};
			slot[nfds++] = NULL;
		}
		if (free_slot(h)) {
			listen_i = nfds;
			pfd[nfds] = (struct pollfd){.fd = h->listen_fd, .events = POLLIN};
			slot[nfds++] = NULL;
		}
		if (next == UINT64_MAX)
			wait_ms = -1;
		else if (next - now > 3600000000000ull)
			wait_ms = 3600000;
		else
			wait_ms = (int)((next - now + 999999) / 1000000);
		if (poll(pfd, (nfds_t)nfds, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (stop_i >= 0 && pfd[stop_i].revents) {
			ret = -ECANCELED;
			goto out;
		}
		now = gt_clock_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < nfds; i++) {
			struct conn *c = slot[i];

			if (!c || !pfd[i].revents)
				continue;
			if (c->state == CONN_WRITE)
				conn_write(h, c, now);
			else
				conn_read(h, c, now);
		}
		if (listen_i >= 0 && pfd[listen_i].revents)
			accept_all(h, now);
	}
out:
	for (int i = 0; i < GT_HTTPD_CONN_MAX; i++)
		if (h->conns[i].state != CONN_FREE)
			conn_close(h, &h->conns[i]);
	if (!sigismember(&old_mask, SIGPIPE)) {
		sigset_t pending;

		sigpending(&pending);
		if (sigismember(&pending, SIGPIPE))
			sigtimedwait(&pipe_set, NULL, &(struct timespec){0, 0});
		pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	}
	return ret;
}

void gt_httpd_free(struct gt_httpd *h)
{
	if (!h)
		return;
	for (int i = 0; i < GT_HTTPD_CONN_MAX; i++)
		if (h->conns[i].state != CONN_FREE)
			conn_close(h, &h->conns[i]);
	if (h->listen_fd >= 0)
		close(h->listen_fd); /* pairs with socket() in gt_httpd_new() */
	if (h->file_fd >= 0)
		close(h->file_fd); /* pairs with open() in gt_httpd_new() */
	free(h->allow_origin);
	free(h);
}
