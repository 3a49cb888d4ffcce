/* The session's wire format, shared by its two ends: the server (src/session/session.c, the
 * gputrace CLI) and the client (src/session/session-client.c, inside each traced process). One
 * seqpacket message each, host byte order (both ends are on one host). */
#ifndef GPUTRACE_SRC_SESSION_WIRE_H
#define GPUTRACE_SRC_SESSION_WIRE_H

#include <stdint.h>

#include "gputrace/record.h"

#define MSG_MAGIC   0x48535447u /* "GTSH" */
/* Both ends share the record structs of one build: a change to a record's in-memory layout
 * bumps it (2: the device record carries the SM clock, LOSS its bytes and records). */
#define MSG_VERSION 3u

enum msg_type {
	MSG_HELLO = 1,   /* + exe, cmdline, host bytes; SCM_RIGHTS: ring memfd, eventfd */
	MSG_GOODBYE = 2, /* the process is exiting normally */
};

struct msg_hello {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t bytes; /* sizeof(struct msg_hello): the strings follow */
	uint32_t pid;
	uint32_t ppid;
	int32_t rank, local_rank, world_size;
	uint32_t exe_len, cmdline_len, host_len; /* each <= GT_STRING_MAX */
	uint32_t _pad;
	uint64_t start_ns; /* trace clock at registration */
};
_Static_assert(sizeof(struct msg_hello) == 56, "hello layout");

struct msg_goodbye {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	int32_t status;      /* exit code, when has_status */
	uint32_t has_status; /* 0 or 1 */
};

#define HELLO_MAX_BYTES (sizeof(struct msg_hello) + 3u * GT_STRING_MAX)

/* How long a client's connect and hello may block (a full backlog): never hang the
 * application. */
#define CONNECT_TIMEOUT_S 2

#endif /* GPUTRACE_SRC_SESSION_WIRE_H */
