/*
 * jsonskim.h - inside json/ only (and its unit test): checks a
 * managedFields entry's fieldsV1 64 bytes a step, for the reader
 * (jsonread.c), which builds nothing of it.
 *
 * fieldsV1 is a trie of objects (sigs.k8s.io/structured-merge-diff,
 * FieldsV1): every member's value is an object, every leaf is {}, and the
 * apiserver writes it with no spaces. It is often a third of a pod's
 * text. Text of exactly that shape, ASCII with no escape but \", is
 * checked here with bit masks of whole blocks instead of a byte at a
 * time; whatever else the value holds is left to the parser's own checks.
 */
#ifndef TOPOGATE_JSONSKIM_H
#define TOPOGATE_JSONSKIM_H

/*
 * p is at a '{' in text that ends at end. Returns the byte after the
 * object's closing '}' when the object is such a trie (so surely JSON)
 * and opens at most depth_room objects at once, counting its own; NULL
 * when it is not, or not only: then the caller checks it byte by byte.
 * NULL says nothing about whether it is JSON. Reads nothing past end.
 */
const unsigned char *jsonskim_fieldsv1(const unsigned char *p,
                                       const unsigned char *end,
                                       unsigned depth_room);

#endif
