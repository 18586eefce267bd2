// simdjson_peer.cpp - the parse peer for `make bench-parse`.
//
//   simdjson_peer FIXTURE...
//
// simdjson (Debian's libsimdjson-dev) parses each fixture into its DOM,
// checking the whole text (UTF-8, escapes, grammar) as topogate's parse
// does. It is the fastest JSON parser we know of: its time for a review
// is about the best a parse that reads the whole body can hope for.
// Timed as decide_bench times topogate's own parse (-m read): the median
// over 15 batches of about 20 ms each, on this thread's CPU clock. One
// JSON line per fixture.
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

static double cpu_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// Keeps the compiler from dropping a loop whose result is unused.
static volatile size_t sink;

static bool parse_n(simdjson::dom::parser &parser,
                    const simdjson::padded_string &text, long n) {
    for (long i = 0; i < n; i++) {
        simdjson::dom::element doc;
        if (parser.parse(text).get(doc) != simdjson::SUCCESS)
            return false;
        sink += size_t(doc.type());
    }
    return true;
}

static int bench(const char *path) {
    simdjson::padded_string text;
    simdjson::dom::parser parser;
    std::vector<double> per_call;

    if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS ||
        !parse_n(parser, text, 3)) {
        std::fprintf(stderr, "simdjson_peer: %s: cannot read or parse\n", path);
        return 1;
    }
    double t0 = cpu_ns();
    parse_n(parser, text, 3);
    double one = (cpu_ns() - t0) / 3;
    long n = one > 0 ? long(20e6 / one) + 1 : 1000;
    for (int b = 0; b < 15; b++) {
        t0 = cpu_ns();
        parse_n(parser, text, n);
        per_call.push_back((cpu_ns() - t0) / double(n));
    }
    std::sort(per_call.begin(), per_call.end());
    std::printf("{\"fixture\":\"%s\",\"bytes\":%zu,\"calls_per_batch\":%ld,"
                "\"simdjson_ns\":%.0f,\"implementation\":\"%s\"}\n",
                path, text.size(), n, per_call[per_call.size() / 2],
                simdjson::get_active_implementation()->name().c_str());
    return 0;
}

int main(int argc, char **argv) {
    int status = 0;

    if (argc < 2) {
        std::fprintf(stderr, "usage: simdjson_peer FIXTURE...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        status |= bench(argv[i]);
    return status;
}
