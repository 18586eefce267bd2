/*
 * certgen_main.c - topogate-certgen, the executable `topogate certgen`
 * runs. It alone links OpenSSL: the serving process never maps or
 * relocates libcrypto (1.5 MiB of its resident memory, measured).
 */
#include "cmd/cmd.h"

int
main(int argc, char **argv)
{
    return cmd_certgen(argc, argv);
}
