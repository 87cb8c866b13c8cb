/* cmd_convert.c - `dfexec convert IN OUT`: GraphDef between binary (.pb)
 * and text (.pbtxt) by file extension. The message goes through protobuf-c
 * unchanged, so pbtxt -> pb -> pbtxt -> pb gives identical bytes, and a
 * same-format copy normalises (text is re-printed, binary re-packed). */
#include <protobuf-c/protobuf-c.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "graph.pb-c.h"
#include "graph_import.h"
#include "pbtext.h"
#include "savedmodel.h"

static const char convert_help[] =
    "usage: dfexec convert IN OUT\n"
    "\n"
    "Converts a GraphDef between binary protobuf and text format. The format of\n"
    "each file comes from its extension: .pbtxt or .txt is text, .pb is binary\n"
    "(IN may also be detected from its content). Converting to the same format\n"
    "normalises the file. The graph is not validated, only parsed.\n"
    "\n"
    "IN may also be a SavedModel (saved_model.pb) or a MetaGraphDef: OUT is then\n"
    "the GraphDef of its only meta graph (or the one tagged 'serve'), function\n"
    "library included. Its variables stay in the variables/ directory: the graph\n"
    "reads them through resource variables, which this does not restore.\n";

int dfx__cmd_convert(int argc, char **argv) {
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(convert_help, stdout);
    return DFX_EXIT_OK;
  }
  if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-')
    return dfx__cli_usage("convert", "expected IN and OUT file names");
  const char *in = argv[1], *out = argv[2];
  int out_fmt = dfx__format_from_path(out);
  if (out_fmt == DFX_FORMAT_AUTO)
    return dfx__cli_usage("convert", "cannot tell the format of '%s': use a .pb, .pbtxt or .txt name", out);
  int rc = DFX_EXIT_ERROR;
  dfx_status *st = dfx_status_new();
  char *data = NULL, *text = NULL;
  uint8_t *packed = NULL;
  size_t len = 0, out_len = 0;
  ProtobufCMessage *msg = NULL;
  FILE *f = NULL;
  if (!st) goto oom;
  if (dfx__read_file(in, &data, &len, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto fail;
  }
  int in_fmt = dfx__format_from_path(in);
  if (in_fmt == DFX_FORMAT_AUTO) in_fmt = dfx__format_detect(data, len);
  if (in_fmt == DFX_FORMAT_TEXT) {
    if (dfx__pbtext_parse(&tensorflow__graph_def__descriptor, data, len, NULL, &msg, st) != DFX_OK) {
      dfx__cli_error("%s: %s", in, dfx_status_message(st));
      goto fail;
    }
  } else if (!(msg = (ProtobufCMessage *)tensorflow__graph_def__unpack(NULL, len, (const uint8_t *)data))) {
    void *gd = NULL;
    size_t gd_len = 0;
    char what[512];
    if (!dfx__savedmodel_describe(data, len, what, sizeof what)) {
      dfx__cli_error("%s: not a valid binary GraphDef", in);
      goto fail;
    }
    if (dfx__savedmodel_graphdef(data, len, NULL, &gd, &gd_len, st) != DFX_OK) {
      dfx__cli_error("%s: %s", in, dfx_status_message(st));
      goto fail;
    }
    msg = (ProtobufCMessage *)tensorflow__graph_def__unpack(NULL, gd_len, gd);
    dfx__free(gd);
    if (!msg) goto oom;
    fprintf(stderr, "dfexec: %s: a SavedModel/MetaGraphDef; wrote the GraphDef of its meta graph (variables not included)\n", in);
  }
  const void *bytes;
  if (out_fmt == DFX_FORMAT_TEXT) {
    if (dfx__pbtext_print(msg, &text, &out_len, st) != DFX_OK) {
      dfx__cli_error("%s", dfx_status_message(st));
      goto fail;
    }
    bytes = text;
  } else {
    out_len = protobuf_c_message_get_packed_size(msg);
    if (!(packed = malloc(out_len + 1))) goto oom;
    protobuf_c_message_pack(msg, packed);
    bytes = packed;
  }
  if (!(f = fopen(out, "wb"))) {
    dfx__cli_error("cannot create '%s'", out);
    goto fail;
  }
  bool ok = fwrite(bytes, 1, out_len, f) == out_len;
  if (fclose(f) != 0) ok = false;
  if (!ok) {
    dfx__cli_error("error writing '%s'", out);
    goto fail;
  }
  rc = DFX_EXIT_OK;
  goto fail;
oom:
  dfx__cli_error("out of memory");
fail:
  if (msg) protobuf_c_message_free_unpacked(msg, NULL);
  dfx__free(data);
  dfx__free(text);
  free(packed);
  dfx_status_free(st);
  return rc;
}
