/* pbtext.h - protobuf text format for any protobuf-c message.
 * Both directions are driven only by protobuf-c descriptors, so every message
 * in proto/ (GraphDef, NodeDef, AttrValue, TensorProto, ...) is covered without
 * per-message code. The syntax is the one TensorFlow's printer writes and its
 * parser reads (field: value, field { ... }, [a, b] lists, enums by name,
 * C-escaped strings, # comments). Printing then parsing gives back a message
 * that packs to the same bytes, and printing is deterministic. */
#ifndef DFX_PBTEXT_H
#define DFX_PBTEXT_H

#include <stddef.h>

#include "dfexec.h"

/* Only these protobuf-c types appear here; C11 allows repeating the typedefs
 * that protobuf-c.h also makes, so callers need not include it first. */
typedef struct ProtobufCMessage ProtobufCMessage;
typedef struct ProtobufCMessageDescriptor ProtobufCMessageDescriptor;
typedef struct ProtobufCAllocator ProtobufCAllocator;

/* Messages nested deeper than this many levels are refused by both the parser
 * and the printer, so hostile input cannot exhaust the stack. */
#define DFX_PBTEXT_MAX_DEPTH 100

/* Parses `len` bytes of text (borrowed, need not be NUL-terminated) as a
 * message of type `desc`. On DFX_OK *out is a new message laid out exactly as
 * protobuf_c_message_unpack(desc, alloc, ...) lays it out, because it is made
 * by that call: the text is first encoded to wire format. The caller frees it
 * with protobuf_c_message_free_unpacked(*out, alloc). `alloc` may be NULL for
 * protobuf-c's default allocator; scratch memory comes from dfx__malloc.
 *
 * Returns DFX_EINVAL for malformed text (unterminated string, unknown field
 * or enum value, bad number, missing brace, a non-repeated field given twice,
 * a string field holding a NUL byte, a missing proto2 required field),
 * DFX_ERANGE for a number that does not fit its field, DFX_ELIMIT past
 * DFX_PBTEXT_MAX_DEPTH levels and DFX_ENOMEM. Not supported: extensions and
 * Any expansions ("[type/url] { ... }"), which no message in proto/ uses.
 * Every error message starts with "line:column: ", names the field and the
 * message type where one is involved, and leaves *out NULL. Thread-safe. */
dfx_code dfx__pbtext_parse(const ProtobufCMessageDescriptor *desc, const char *text, size_t len,
                           ProtobufCAllocator *alloc, ProtobufCMessage **out, dfx_status *st);

/* Prints `msg` (borrowed) in TensorFlow's style: fields in descriptor order
 * (protobuf-c sorts them by number), two-space indentation, `name {` blocks
 * for submessages, enums by name, strings C-escaped with octal for other
 * bytes, floats in the shortest %g form that reads back to the same value.
 * A field is printed exactly when protobuf_c_message_pack would write it, so
 * proto3 scalars at their default are left out unless set in a oneof. Unknown
 * fields kept by protobuf-c are not printed.
 *
 * On DFX_OK *out is a new NUL-terminated string from dfx__malloc (free it with
 * dfx__free) and *len, when `len` is not NULL, its length without the NUL.
 * Returns DFX_ELIMIT past DFX_PBTEXT_MAX_DEPTH levels or DFX_ENOMEM, leaving
 * *out NULL. Thread-safe. */
dfx_code dfx__pbtext_print(const ProtobufCMessage *msg, char **out, size_t *len, dfx_status *st);

#endif
