/* flood.h - stressc flood: see the comment at the top of flood.c. */
#ifndef STRESS_FLOOD_H
#define STRESS_FLOOD_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "cases.h"

struct flood_opts {
    int port;
    const char *kind; /* idle, half, head, stall */
    const char *mode; /* review, probe */
    int hold;
    int rate;
    int sources;
    int seconds;
    int limit_ms;
    size_t bytes;
};

/* Runs the flood and the timed requests; 0 when all were in time. */
int run_flood(const struct flood_opts *o, SSL_CTX *ctx,
              const struct fixture *fx);

#endif
