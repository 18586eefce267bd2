/* version.c - `topogate version`. */
#include <stdio.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <openssl/opensslv.h>
#include <yaml.h>

#include "cmd/cmd.h"

int
cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("topogate %s (libmicrohttpd %s, cJSON %s, libyaml %s, %s)\n",
           TOPOGATE_VERSION, MHD_get_version(), cJSON_Version(),
           yaml_get_version_string(), OPENSSL_VERSION_TEXT);
    return 0;
}
