/*
 * table.c - names of interconnects, what they mean for splitting, and
 * the NIC resource of a row.
 */
#include "policy/table/table.h"

#include <string.h>

static const char *const link_names[] = {
    [LINK_SINGLE] = "single",
    [LINK_PCIE] = "pcie",
    [LINK_NVLINK] = "nvlink",
    [LINK_NVSWITCH] = "nvswitch",
    [LINK_NEURONLINK] = "neuronlink",
    [LINK_UNKNOWN] = "unknown",
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

bool
type_multinode_nvlink(const struct instance_type *t)
{
    return t->accelerator && (strncmp(t->accelerator, "GB200", 5) == 0 ||
                              strncmp(t->accelerator, "GB300", 5) == 0);
}

const char *
type_nic_resource(const struct instance_type *t)
{
    if (t->efa <= 0 || t->nic_annotation)
        return NULL;
    return t->nic_resource ? t->nic_resource : TABLE_NIC_DEFAULT;
}
