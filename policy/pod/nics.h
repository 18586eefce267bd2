/*
 * nics.h - which RDMA NICs a governed pod may be given: none beside an
 * RDMA resource it asks for under another name, none on a hostNetwork pod
 * that reaches the host's RDMA NICs already, and where the cluster's nodes
 * are known, only what all of them advertise.
 *
 * Borrows: t->nic_why points into the pod.
 */
#ifndef TOPOGATE_NICS_H
#define TOPOGATE_NICS_H

#include <cjson/cJSON.h>

#include "policy/pod/mutate.h"

/*
 * Narrows t (target_agree()'s, for this pod) to the NICs the pod can be
 * given, setting t->nic_hold where none are: NIC_OTHER beside an RDMA
 * resource it asks for under another name; NIC_HOST on a hostNetwork pod
 * with a privileged container or /dev/infiniband from the host; and where
 * fewest >= 0 (placement_nic_fewest(): the nodes it can land on are
 * known), NIC_NODES (t->efa 0) unless all of them advertise t->nic, else
 * their fewest in place of the table's count (not for a shared plugin's
 * slots). fewest < 0 keeps the table's, but for a row with
 * nicsNeedEvidence that the pod does not ask for itself: NIC_UNSEEN.
 */
void nics_narrow(struct target *t, const cJSON *pod, long fewest);

#endif
