/* table.c - names of interconnects, and what they mean for splitting. */
#include "table.h"

#include <string.h>

static const char *const link_names[] = {
    [LINK_SINGLE] = "single",
    [LINK_PCIE] = "pcie",
    [LINK_NVLINK] = "nvlink",
    [LINK_NVSWITCH] = "nvswitch",
    [LINK_NEURONLINK] = "neuronlink",
};

const char *
link_name(enum interconnect link)
{
    if ((size_t)link >= sizeof(link_names) / sizeof(link_names[0]))
        return NULL;
    return link_names[link];
}

int
link_parse(const char *word, enum interconnect *out)
{
    for (size_t i = 0; i < sizeof(link_names) / sizeof(link_names[0]); i++) {
        if (strcmp(word, link_names[i]) == 0) {
            *out = (enum interconnect)i;
            return 0;
        }
    }
    return -1;
}

bool
link_is_nvlink(enum interconnect link)
{
    return link == LINK_NVLINK || link == LINK_NVSWITCH;
}
