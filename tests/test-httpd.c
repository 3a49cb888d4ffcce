/* Check suite for src/httpd/httpd.c, the loopback responder behind `gputrace view`: each test runs
 * the server in a thread on a free port and talks raw HTTP to it over 127.0.0.1, asserting
 * exact status lines, headers and bodies. Runs as a unit test. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "httpd.h"

#define ORIGIN     "https://ui.perfetto.dev"
#define FILE_BYTES 100000u
#define LOG_MAX    32

/* The head every response starts with, after its status line. */
#define COMMON                                                                                     \
	"Access-Control-Allow-Origin: https://ui.perfetto.dev\r\n"                                 \
	"X-Content-Type-Options: nosniff\r\n"                                                      \
	"Cache-Control: no-cache\r\n"                                                              \
	"Connection: close\r\n"

struct logged {
	char method[16], target[256], origin[256];
	bool has_origin;
	int status;
	uint64_t body_bytes;
	bool complete, fetched;
};

/* A server running gt_httpd_run() in a thread. */
struct srv {
	char dir[64], file[96];
	struct gt_httpd *h;
	uint16_t port;
	int stop[2];   /* written to stop the server */
	int events[2]; /* one byte per response, so a test can wait for it */
	pthread_t thread;
	int ret;
	struct logged log[LOG_MAX];
	int nlog;
	int seen; /* event bytes read by wait_responses() */
};

static void on_response(void *ctx, const struct gt_httpd_response *r)
{
	struct srv *s = ctx;

	if (s->nlog < LOG_MAX) {
		struct logged *l = &s->log[s->nlog++];

		snprintf(l->method, sizeof(l->method), "%s", r->method);
		snprintf(l->target, sizeof(l->target), "%s", r->target);
		l->has_origin = r->origin != NULL;
		snprintf(l->origin, sizeof(l->origin), "%s", r->origin ? r->origin : "");
		l->status = r->status;
		l->body_bytes = r->body_bytes;
		l->complete = r->complete;
		l->fetched = r->fetched;
	}
	ck_assert_int_eq(write(s->events[1], "x", 1), 1);
}

static void *serve(void *arg)
{
	struct srv *s = arg;

	s->ret = gt_httpd_run(s->h, 0, s->stop[0]);
	return NULL;
}

static void write_file(const char *path, size_t bytes)
{
	unsigned char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	for (size_t off = 0; off < bytes;) {
		size_t n = bytes - off < sizeof(buf) ? bytes - off : sizeof(buf);

		for (size_t i = 0; i < n; i++)
			buf[i] = (unsigned char)((off + i) * 31u);
		ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
		off += n;
	}
	close(fd);
}

static void srv_start_path(struct srv *s, size_t file_bytes, uint64_t io_timeout_ns,
                           const char *url_path)
{
	struct gt_httpd_options o = {
	        .url_path = url_path,
	        .allow_origin = ORIGIN,
	        .port = 0,
	        .io_timeout_ns = io_timeout_ns,
	        .on_response = on_response,
	        .ctx = s,
	};

	memset(s, 0, sizeof(*s));
	strcpy(s->dir, "/tmp/test-httpd-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(s->dir));
	snprintf(s->file, sizeof(s->file), "%s/t.pftrace", s->dir);
	write_file(s->file, file_bytes);
	o.file = s->file;
	ck_assert_int_eq(pipe(s->stop), 0);
	ck_assert_int_eq(pipe(s->events), 0);
	ck_assert_int_eq(gt_httpd_new(&o, &s->h), 0);
	s->port = gt_httpd_port(s->h);
	ck_assert_uint_ne(s->port, 0);
	ck_assert_uint_eq(gt_httpd_file_bytes(s->h), file_bytes);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void srv_start_opts(struct srv *s, size_t file_bytes, uint64_t io_timeout_ns)
{
	srv_start_path(s, file_bytes, io_timeout_ns, "/t.pftrace");
}

static void srv_start(struct srv *s)
{
	srv_start_opts(s, FILE_BYTES, 0);
}

/* Wait for the server to return by itself (the fetch) and give its result. */
static int srv_join(struct srv *s)
{
	pthread_join(s->thread, NULL);
	gt_httpd_free(s->h);
	unlink(s->file);
	rmdir(s->dir);
	return s->ret;
}

/* Stop it through stop_fd. */
static int srv_stop(struct srv *s)
{
	ck_assert_int_eq(write(s->stop[1], "x", 1), 1);
	return srv_join(s);
}

/* Block until the server has reported n responses in all. */
static void wait_responses(struct srv *s, int n)
{
	char c;

	while (s->seen < n) {
		ck_assert_int_eq(read(s->events[0], &c, 1), 1);
		s->seen++;
	}
}

static int connect_port(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		ck_assert_int_gt(w, 0);
		p += w;
		n -= (size_t)w;
	}
}

/* Read until the server closes; returns a malloc'd buffer (NUL-terminated) and its length. */
static char *recv_all(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;

	ck_assert_ptr_nonnull(buf);
	while ((r = recv(fd, buf + n, cap - n, 0)) > 0) {
		n += (size_t)r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
	}
	ck_assert_int_eq(r, 0);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Send one request on a new connection and return the whole response. */
static char *request(struct srv *s, const char *req, size_t *len)
{
	int fd = connect_port(s->port);
	char *resp;

	send_all(fd, req, strlen(req));
	resp = recv_all(fd, len);
	close(fd);
	return resp;
}

/* The response's head (up to and including the blank line) equals want, and its body is
 * body_want (NULL: the served file, whole). */
static void expect_response(const char *resp, size_t len, const char *want_head,
                            const char *body_want)
{
	const char *body = strstr(resp, "\r\n\r\n");
	size_t head_len;

	ck_assert_ptr_nonnull(body);
	body += 4;
	head_len = (size_t)(body - resp);
	ck_assert_msg(head_len == strlen(want_head) && memcmp(resp, want_head, head_len) == 0,
	              "head was [%.*s], expected [%s]", (int)head_len, resp, want_head);
	if (body_want) {
		ck_assert_uint_eq(len - head_len, strlen(body_want));
		ck_assert(memcmp(body, body_want, len - head_len) == 0);
	} else {
		ck_assert_uint_eq(len - head_len, FILE_BYTES);
		for (size_t i = 0; i < FILE_BYTES; i++)
			ck_assert_uint_eq((unsigned char)body[i], (unsigned char)(i * 31u));
	}
}

#define HEAD_200                                                                                   \
	"HTTP/1.1 200 OK\r\n" COMMON "Content-Type: application/octet-stream\r\n"                  \
	"Content-Length: 100000\r\n\r\n"

#define HEAD_ERR(status, text, extra)                                                              \
	"HTTP/1.1 " #status " " text "\r\n" COMMON extra                                           \
	"Content-Type: text/plain; charset=utf-8\r\n"                                              \
	"Content-Length: "

/* The browser's fetch from the allowed page: the whole file with the exact CORS header, then
 * gt_httpd_run() returns 0. */
START_TEST(test_fetch_from_allowed_origin)
{
	struct srv s;
	size_t len;
	char *resp;

	srv_start(&s);
	resp = request(&s,
	               "GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n"
	               "Origin: https://ui.perfetto.dev\r\nSec-Fetch-Mode: cors\r\n\r\n",
	               &len);
	expect_response(resp, len, HEAD_200, NULL);
	free(resp);
	ck_assert_int_eq(srv_join(&s), 0);
	ck_assert_int_eq(s.nlog, 1);
	ck_assert_str_eq(s.log[0].method, "GET");
	ck_assert_str_eq(s.log[0].target, "/t.pftrace");
	ck_assert_str_eq(s.log[0].origin, ORIGIN);
	ck_assert_int_eq(s.log[0].status, 200);
	ck_assert_uint_eq(s.log[0].body_bytes, FILE_BYTES);
	ck_assert(s.log[0].complete);
	ck_assert(s.log[0].fetched);
}
END_TEST

/* curl, or the URL typed in: no Origin, a query string, HTTP/1.0 without Host, bare LFs. */
START_TEST(test_fetch_without_origin)
{
	struct srv s;
	size_t len;
	char *resp;

	srv_start(&s);
	resp = request(&s, "GET /t.pftrace?v=1 HTTP/1.0\n\n", &len);
	expect_response(resp, len, HEAD_200, NULL);
	free(resp);
	ck_assert_int_eq(srv_join(&s), 0);
	ck_assert_int_eq(s.nlog, 1);
	ck_assert(!s.log[0].has_origin);
	ck_assert(s.log[0].fetched);
}
END_TEST

/* HEAD and the CORS preflight are answered and do not end the serving. */
START_TEST(test_head_and_preflight)
{
	struct srv s;
	size_t len;
	char *resp;

	srv_start(&s);
	resp = request(&s, "HEAD /t.pftrace HTTP/1.1\r\nHost: localhost:9001\r\n\r\n", &len);
	expect_response(resp, len, HEAD_200, "");
	free(resp);
	resp = request(&s,
	               "OPTIONS /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	               "Origin: https://ui.perfetto.dev\r\n"
	               "Access-Control-Request-Method: GET\r\n\r\n",
	               &len);
	expect_response(resp, len,
	                "HTTP/1.1 204 No Content\r\n" COMMON
	                "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
	                "Access-Control-Max-Age: 600\r\n\r\n",
	                "");
	free(resp);
	/* Chrome's Private Network Access preflight (a public page fetching loopback). */
	resp = request(&s,
	               "OPTIONS /t.pftrace HTTP/1.1\r\nHost: [::1]:9001\r\n"
	               "Origin: https://ui.perfetto.dev\r\n"
	               "Access-Control-Request-Method: GET\r\n"
	               "Access-Control-Request-Private-Network: true\r\n\r\n",
	               &len);
	expect_response(resp, len,
	                "HTTP/1.1 204 No Content\r\n" COMMON
	                "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
	                "Access-Control-Max-Age: 600\r\n"
	                "Access-Control-Allow-Private-Network: true\r\n\r\n",
	                "");
	free(resp);
	wait_responses(&s, 3);
	ck_assert_int_eq(srv_stop(&s), -ECANCELED);
	ck_assert_int_eq(s.nlog, 3);
	ck_assert_int_eq(s.log[0].status, 200);
	ck_assert_uint_eq(s.log[0].body_bytes, 0);
	ck_assert(s.log[0].complete && !s.log[0].fetched);
	ck_assert_int_eq(s.log[1].status, 204);
	ck_assert(!s.log[1].fetched);
	ck_assert_int_eq(s.log[2].status, 204);
}
END_TEST

/* Any other path is 404, whatever it looks like; nothing but the one file is reachable. */
START_TEST(test_wrong_path)
{
	static const char *const targets[] = {
	        "/",
	        "/T.PFTRACE",
	        "/t.pftrace/",
	        "/../t.pftrace",
	        "/t.pftrace/../t.pftrace",
	        "/etc/passwd",
	        "/status",
	        "//t.pftrace",
	        "/t.pftrace%00",
	        "http://127.0.0.1/t.pftrace",
	};
	struct srv s;
	char req[512];
	size_t len;
	char *resp;

	srv_start(&s);
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n\r\n",
		         targets[i]);
		resp = request(&s, req, &len);
		expect_response(resp, len, HEAD_ERR(404, "Not Found", "") "14\r\n\r\n",
		                "404 Not Found\n");
		free(resp);
	}
	/* The UI's probe for trace_processor --httpd: a POST elsewhere is 404 too. */
	resp = request(&s, "POST /status HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n\r\n", &len);
	expect_response(resp, len, HEAD_ERR(404, "Not Found", "") "14\r\n\r\n", "404 Not Found\n");
	free(resp);
	wait_responses(&s, 11);
	ck_assert_int_eq(srv_stop(&s), -ECANCELED);
	ck_assert_int_eq(s.nlog, 11);
	ck_assert_str_eq(s.log[3].target, "/../t.pftrace");
	ck_assert_int_eq(s.log[3].status, 404);
}
END_TEST

/* The longest path allowed (255 bytes), and a target one byte longer that starts with it. */
START_TEST(test_longest_path)
{
	char path[256], req[1024];
	struct srv s;
	size_t len;
	char *resp;

	path[0] = '/';
	memset(path + 1, 'a', 254);
	path[255] = '\0';
	srv_start_path(&s, FILE_BYTES, 0, path);
	snprintf(req, sizeof(req), "GET %sb HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
	resp = request(&s, req, &len);
	expect_response(resp, len, HEAD_ERR(404, "Not Found", "") "14\r\n\r\n", "404 Not Found\n");
	free(resp);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
	resp = request(&s, req, &len);
	expect_response(resp, len, HEAD_200, NULL);
	free(resp);
	ck_assert_int_eq(srv_join(&s), 0);
	ck_assert_int_eq(s.nlog, 2);
	ck_assert_int_eq(s.log[0].status, 404);
	ck_assert(s.log[1].fetched);
}
END_TEST

/* Only GET, HEAD and OPTIONS exist. */
START_TEST(test_method_not_allowed)
{
	static const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH", "get", "CONNECT"};
	struct srv s;
	char req[512];
	size_t len;
	char *resp;

	srv_start(&s);
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		snprintf(req, sizeof(req),
		         "%s /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n"
		         "Content-Length: 4\r\n\r\nbody",
		         methods[i]);
		resp = request(&s, req, &len);
		expect_response(resp, len,
		                HEAD_ERR(405, "Method Not Allowed",
		                         "Allow: GET, HEAD, OPTIONS\r\n") "23\r\n\r\n",
		                "405 Method Not Allowed\n");
		free(resp);
	}
	wait_responses(&s, 6);
	ck_assert_int_eq(srv_stop(&s), -ECANCELED);
	ck_assert_str_eq(s.log[0].method, "POST");
	ck_assert_int_eq(s.log[0].status, 405);
}
END_TEST

/* A request head above 8 KiB is refused with 431 and the server carries on. */
START_TEST(test_oversized_header)
{
	struct srv s;
	char req[GT_HTTPD_HEADER_MAX + 512];
	size_t len, n;
	char *resp;

	srv_start(&s);
	n = (size_t)snprintf(req, sizeof(req), "GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\n");
	while (n < GT_HTTPD_HEADER_MAX + 100)
		n += (size_t)snprintf(req + n, sizeof(req) - n, "X-Filler: %064d\r\n", 0);
	snprintf(req + n, sizeof(req) - n, "\r\n");
	resp = request(&s, req, &len);
	expect_response(resp, len,
	                HEAD_ERR(431, "Request Header Fields Too Large", "") "36\r\n\r\n",
	                "431 Request Header Fields Too Large\n");
	free(resp);
	/* Exactly at the limit, with no end of head yet: the same. */
	memset(req, 'a', GT_HTTPD_HEADER_MAX);
	memcpy(req, "GET /", 5);
	req[GT_HTTPD_HEADER_MAX] = '\0';
	resp = request(&s, req, &len);
	ck_assert_str_eq(strtok(resp, "\r"), "HTTP/1.1 431 Request Header Fields Too Large");
	free(resp);
	/* Still serving. */
	resp = request(&s, "GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &len);
	expect_response(resp, len, HEAD_200, NULL);
	free(resp);
	ck_assert_int_eq(srv_join(&s), 0);
	ck_assert_int_eq(s.nlog, 3);
	ck_assert_int_eq(s.log[0].status, 431);
	ck_assert_str_eq(s.log[0].method, "");
}
END_TEST

/* Malformed requests are 400 (505 for another HTTP version); a Host that is not this
 * machine's loopback (DNS rebinding) is 403. */
START_TEST(test_bad_requests)
{
	static const struct {
		const char *req;
		const char *status_line;
	} cases[] = {
	        {"GET /t.pftrace HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"}, /* no Host */
	        {"GET /t.pftrace\r\nHost: 127.0.0.1\r\n\r\n", "HTTP/1.1 400 Bad Request"},
	        {"GET  /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "HTTP/1.1 400 Bad Request"},
	        {"GET /t.pftrace HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n", "HTTP/1.1 400 Bad Request"},
	        {"GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\n folded\r\n\r\n",
	         "HTTP/1.1 400 Bad Request"},
	        {"GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n\r\n",
	         "HTTP/1.1 400 Bad Request"},
	        {"GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\nX: a\x01b\r\n\r\n",
	         "HTTP/1.1 400 Bad Request"},
	        {"GET /t.pf\x7ftrace HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
	         "HTTP/1.1 400 Bad Request"},
	        {"\x16\x03\x01\x02\x05\x01\r\n\r\n", "HTTP/1.1 400 Bad Request"}, /* TLS hello */
	        {"GET /t.pftrace HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n",
	         "HTTP/1.1 505 HTTP Version Not Supported"},
	        {"GET /t.pftrace HTTP/1.1\r\nHost: evil.example:9001\r\n\r\n",
	         "HTTP/1.1 403 Forbidden"},
	        {"GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1.evil.example\r\n\r\n",
	         "HTTP/1.1 403 Forbidden"},
	        {"GET /t.pftrace HTTP/1.1\r\nHost: localhost:\r\n\r\n", "HTTP/1.1 403 Forbidden"},
	};
	struct srv s;
	size_t len;
	char *resp;

	srv_start(&s);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		resp = request(&s, cases[i].req, &len);
		ck_assert_msg(
		        strncmp(resp, cases[i].status_line, strlen(cases[i].status_line)) == 0 &&
		                resp[strlen(cases[i].status_line)] == '\r',
		        "case %zu: got [%.60s], expected [%s]", i, resp, cases[i].status_line);
		ck_assert_ptr_nonnull(strstr(resp, "\r\nAccess-Control-Allow-Origin: "
		                                   "https://ui.perfetto.dev\r\n"));
		free(resp);
	}
	wait_responses(&s, (int)(sizeof(cases) / sizeof(cases[0])));
	ck_assert_int_eq(srv_stop(&s), -ECANCELED);
	ck_assert_int_eq(s.nlog, (int)(sizeof(cases) / sizeof(cases[0])));
	for (int i = 0; i < s.nlog; i++)
		ck_assert(!s.log[i].fetched);
}
END_TEST

/* Another page's fetch is answered with the one allowed origin, which its browser refuses; it
 * does not use up the serving, nor does an opaque (no-cors) request. */
START_TEST(test_other_origin_does_not_count)
{
	struct srv s;
	size_t len;
	char *resp;

	srv_start(&s);
	resp = request(&s,
	               "GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n"
	               "Origin: http://127.0.0.1:8000\r\n\r\n",
	               &len);
	expect_response(resp, len, HEAD_200, NULL);
	free(resp);
	resp = request(&s,
	               "GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n"
	               "Origin: https://ui.perfetto.dev.evil.example\r\n\r\n",
	               &len);
	expect_response(resp, len, HEAD_200, NULL);
	free(resp);
	resp = request(&s,
	               "GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n"
	               "Sec-Fetch-Mode: no-cors\r\n\r\n",
	               &len);
	expect_response(resp, len, HEAD_200, NULL);
	free(resp);
	wait_responses(&s, 3);
	ck_assert_int_eq(srv_stop(&s), -ECANCELED);
	ck_assert_int_eq(s.nlog, 3);
	ck_assert_str_eq(s.log[0].origin, "http://127.0.0.1:8000");
	for (int i = 0; i < 3; i++) {
		ck_assert(s.log[i].complete);
		ck_assert(!s.log[i].fetched);
		ck_assert_uint_eq(s.log[i].body_bytes, FILE_BYTES);
	}
}
END_TEST

/* A connection that says nothing is closed without a response; one that stops halfway
 * through its request gets a 408; neither holds up a request on another connection. */
START_TEST(test_idle_connections)
{
	struct srv s;
	int idle, half;
	size_t len;
	char *resp;

	srv_start_opts(&s, FILE_BYTES, 200 * 1000000ull);
	idle = connect_port(s.port);
	half = connect_port(s.port);
	send_all(half, "GET /t.pftrace HTTP/1.1\r\nHost: 12", 34);
	resp = recv_all(idle, &len);
	ck_assert_uint_eq(len, 0);
	free(resp);
	resp = recv_all(half, &len);
	expect_response(resp, len, HEAD_ERR(408, "Request Timeout", "") "20\r\n\r\n",
	                "408 Request Timeout\n");
	free(resp);
	close(idle);
	close(half);
	wait_responses(&s, 1);
	ck_assert_int_eq(srv_stop(&s), -ECANCELED);
	ck_assert_int_eq(s.nlog, 1);
	ck_assert_int_eq(s.log[0].status, 408);
	ck_assert(!s.log[0].fetched);
}
END_TEST

/* Stalled connections (the default idle limit, 10 s) do not hold up a request on another. */
START_TEST(test_stalled_does_not_block)
{
	int stalled[GT_HTTPD_CONN_MAX - 1];
	struct srv s;
	size_t len;
	char *resp;

	srv_start(&s);
	for (int i = 0; i < GT_HTTPD_CONN_MAX - 1; i++) {
		stalled[i] = connect_port(s.port);
		send_all(stalled[i], "GET /", 5);
	}
	resp = request(&s, "GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &len);
	expect_response(resp, len, HEAD_200, NULL);
	free(resp);
	ck_assert_int_eq(srv_join(&s), 0);
	for (int i = 0; i < GT_HTTPD_CONN_MAX - 1; i++) {
		/* closed by the server on its way out, without a response */
		resp = recv_all(stalled[i], &len);
		ck_assert_uint_eq(len, 0);
		free(resp);
		close(stalled[i]);
	}
	ck_assert_int_eq(s.nlog, 1);
	ck_assert(s.log[0].fetched);
}
END_TEST

/* A client that leaves in the middle of the body has not fetched the file. */
START_TEST(test_client_leaves_midway)
{
	const size_t big = 64u << 20;
	struct srv s;
	char buf[100];
	int fd;

	srv_start_opts(&s, big, 0);
	fd = connect_port(s.port);
	send_all(fd, "GET /t.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 44);
	ck_assert_int_gt(recv(fd, buf, sizeof(buf), 0), 0);
	/* An abortive close: the server's next send fails. */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &(struct linger){.l_onoff = 1, .l_linger = 0},
	           sizeof(struct linger));
	close(fd);
	wait_responses(&s, 1);
	ck_assert_int_eq(srv_stop(&s), -ECANCELED);
	ck_assert_int_eq(s.nlog, 1);
	ck_assert_int_eq(s.log[0].status, 200);
	ck_assert(!s.log[0].complete);
	ck_assert(!s.log[0].fetched);
	ck_assert_uint_lt(s.log[0].body_bytes, big);
}
END_TEST

START_TEST(test_timeout)
{
	struct srv s;

	srv_start_opts(&s, 10, 0);
	/* Stop the serving thread first, then time out a direct call with no client. */
	ck_assert_int_eq(write(s.stop[1], "x", 1), 1);
	pthread_join(s.thread, NULL);
	ck_assert_int_eq(s.ret, -ECANCELED);
	ck_assert_int_eq(gt_httpd_run(s.h, 1000000, -1), -ETIMEDOUT);
	gt_httpd_free(s.h);
	unlink(s.file);
	rmdir(s.dir);
}
END_TEST

/* A port in use, and what gt_httpd_new() refuses. */
START_TEST(test_new_errors)
{
	struct gt_httpd_options o = {.url_path = "/t.pftrace", .allow_origin = ORIGIN};
	static const char *const bad_paths[] = {"",     "/",      "t.pftrace", "/a/b",
	                                        "/a b", "/a%20b", "/a?b",      "/../x/"};
	struct gt_httpd *h = NULL, *h2 = NULL;
	char dir[] = "/tmp/test-httpd-XXXXXX", file[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/t.pftrace", dir);
	write_file(file, 10);
	o.file = file;
	ck_assert_int_eq(gt_httpd_new(&o, &h), 0);
	o.port = gt_httpd_port(h);
	ck_assert_int_eq(gt_httpd_new(&o, &h2), -EADDRINUSE);
	ck_assert_ptr_null(h2);
	gt_httpd_free(h);
	o.port = 0;
	for (size_t i = 0; i < sizeof(bad_paths) / sizeof(bad_paths[0]); i++) {
		o.url_path = bad_paths[i];
		ck_assert_int_eq(gt_httpd_new(&o, &h2), -EINVAL);
	}
	o.url_path = "/t.pftrace";
	o.allow_origin = "https://x\r\nSet-Cookie: a=b";
	ck_assert_int_eq(gt_httpd_new(&o, &h2), -EINVAL);
	o.allow_origin = "";
	ck_assert_int_eq(gt_httpd_new(&o, &h2), -EINVAL);
	o.allow_origin = ORIGIN;
	o.file = dir;
	ck_assert_int_eq(gt_httpd_new(&o, &h2), -EISDIR);
	o.file = "/nonexistent/t.pftrace";
	ck_assert_int_eq(gt_httpd_new(&o, &h2), -ENOENT);
	ck_assert_ptr_null(h2);
	gt_httpd_free(NULL);
	unlink(file);
	rmdir(dir);
}
END_TEST

static Suite *httpd_suite(void)
{
	Suite *s = suite_create("httpd");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_fetch_from_allowed_origin);
	tcase_add_test(tc, test_fetch_without_origin);
	tcase_add_test(tc, test_head_and_preflight);
	tcase_add_test(tc, test_wrong_path);
	tcase_add_test(tc, test_longest_path);
	tcase_add_test(tc, test_method_not_allowed);
	tcase_add_test(tc, test_oversized_header);
	tcase_add_test(tc, test_bad_requests);
	tcase_add_test(tc, test_other_origin_does_not_count);
	tcase_add_test(tc, test_idle_connections);
	tcase_add_test(tc, test_stalled_does_not_block);
	tcase_add_test(tc, test_client_leaves_midway);
	tcase_add_test(tc, test_timeout);
	tcase_add_test(tc, test_new_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(httpd_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
