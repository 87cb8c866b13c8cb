/* op_table_internal.c - signatures of the ops TensorFlow's OpList (and so
 * op_table_tf.c) lacks, in the same notation (op_def.h), sorted by name.
 * TF registers `_` ops internally; CompareAndBitpack is a public op the
 * exported list happens to miss. Checked against TF's REGISTER_OP calls. */
#include "op_registry.h"

const dfx_op_src dfx__op_table_internal[] = {
    {"CompareAndBitpack", "input: T, threshold: T -> output: uint8",
     "T: {bool, half, float, double, int8, int16, int32, int64}", 0},
    /* A function argument: fed like a placeholder. */
    {"_Arg", "-> output: T", "T: type; index: int >= 0", DFX_OP_STATEFUL},
    /* Cast placed on the host by TF's placer; the same kernel. */
    {"_HostCast", "x: SrcT -> y: DstT", "SrcT: type; DstT: type; Truncate: bool = false", 0},
    /* A function result: fetching its input is how to read it. */
    {"_Retval", "input: T", "T: type; index: int >= 0", DFX_OP_STATEFUL},
    /* Case's lowering (tf-semantics §2.1): forwards data to output_index. */
    {"_SwitchN", "data: T, output_index: int32 -> outputs: num_outs * T", "num_outs: int >= 1; T: type", 0},
    {NULL, NULL, NULL, 0}};

const int dfx__op_table_internal_count = (int)(sizeof dfx__op_table_internal / sizeof dfx__op_table_internal[0]) - 1;
