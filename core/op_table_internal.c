/* op_table_internal.c - signatures of the ops TensorFlow's OpList (and so
 * op_table_tf.c) lacks, in the same notation (op_def.h), sorted by name.
 * TF registers `_` ops internally: the fused ones are what Grappler's
 * remapper writes and what dfexec's remap pass writes, so a GraphDef that
 * `dfexec optimize` saves names them as TensorFlow does. CompareAndBitpack
 * is a public op the exported list happens to miss. Checked against TF's
 * REGISTER_OP calls (TF 2.x: _FusedConv2D's TArgs and host_args). */
#include "op_registry.h"

const dfx_op_src dfx__op_table_internal[] = {
    {"CompareAndBitpack", "input: T, threshold: T -> output: uint8",
     "T: {bool, half, float, double, int8, int16, int32, int64}", 0},
    /* A function argument: fed like a placeholder. */
    {"_Arg", "-> output: T", "T: type; index: int >= 0", DFX_OP_STATEFUL},
    /* Grappler's remapper: Conv2D + BiasAdd or FusedBatchNorm (+ an activation)
     * in one op (nn_ops.cc); args are the bias or scale, offset, mean and
     * variance; host_args are the GPU int8 kernel's scales. */
    {"_FusedConv2D", "input: T, filter: T, args: TArgs, host_args: num_host_args * float -> output: T",
     "T: {half, float, double, int8, qint8}; TArgs: list(type); num_args: int >= 0; num_host_args: int >= 0 = 0; "
     "strides: list(int); padding: {'SAME', 'VALID', 'EXPLICIT'}; explicit_paddings: list(int) = []; "
     "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'; filter_format: {'HWIO', 'OIHW', 'OIHW_VECT_I'} = 'HWIO'; "
     "dilations: list(int) = [1, 1, 1, 1]; use_cudnn_on_gpu: bool = true; fused_ops: list(string) = []; "
     "epsilon: float = 0.0001; leakyrelu_alpha: float = 0.2",
     0},
    /* DepthwiseConv2dNative + BiasAdd or FusedBatchNorm (+ an activation)
     * (nn_ops.cc; TF's kernel is oneDNN's, dfexec's remap pass writes it). */
    {"_FusedDepthwiseConv2dNative", "input: T, filter: T, args: num_args * T -> output: T",
     "T: {half, bfloat16, float, double}; num_args: int >= 0; strides: list(int); "
     "padding: {'SAME', 'VALID', 'EXPLICIT'}; explicit_paddings: list(int) = []; "
     "data_format: {'NHWC', 'NCHW'} = 'NHWC'; dilations: list(int) = [1, 1, 1, 1]; fused_ops: list(string) = []; "
     "epsilon: float = 0.0001; leakyrelu_alpha: float = 0.2",
     0},
    /* dfexec's ewfuse pass: a chain of elementwise ops over inputs of one
     * shape (or scalars) as one pass over memory. Step k applies ops[k]
     * (a TF op name) to operands[2k], operands[2k+1] (-1: none), where a
     * reference r < N is input r and r >= N is step r - N's result; the
     * output is the last step's, which every input reaches (a tree, as the
     * pass writes it) (kernels/fused/ew_fused.c). */
    {"_FusedElementwise", "inputs: N * T -> output: T",
     "T: {float, double}; N: int >= 1; ops: list(string); operands: list(int)", 0},
    /* The remapper's MatMul + BiasAdd (+ an activation) (math_ops.cc). */
    {"_FusedMatMul", "a: T, b: T, args: num_args * T -> product: T",
     "transpose_a: bool = false; transpose_b: bool = false; T: {bfloat16, half, float}; num_args: int >= 0; "
     "fused_ops: list(string) = []; epsilon: float = 0.0001; leakyrelu_alpha: float = 0.2",
     0},
    /* Cast placed on the host by TF's placer; the same kernel. */
    {"_HostCast", "x: SrcT -> y: DstT", "SrcT: type; DstT: type; Truncate: bool = false", 0},
    /* Partitioned graphs (dist/partition.c): the receiving half of an edge
     * between two tasks, and the sending half (TF's sendrecv_ops.cc). */
    {"_Recv", "-> tensor: tensor_type",
     "tensor_type: type; tensor_name: string; send_device: string; send_device_incarnation: int; "
     "recv_device: string; client_terminated: bool = false",
     DFX_OP_STATEFUL},
    /* A function result: fetching its input is how to read it. */
    {"_Retval", "input: T", "T: type; index: int >= 0", DFX_OP_STATEFUL},
    {"_Send", "tensor: T",
     "T: type; tensor_name: string; send_device: string; send_device_incarnation: int; recv_device: string; "
     "client_terminated: bool = false",
     DFX_OP_STATEFUL},
    /* Case's lowering (tf-semantics §2.1): forwards data to output_index. */
    {"_SwitchN", "data: T, output_index: int32 -> outputs: num_outs * T", "num_outs: int >= 1; T: type", 0},
    {NULL, NULL, NULL, 0}};

const int dfx__op_table_internal_count = (int)(sizeof dfx__op_table_internal / sizeof dfx__op_table_internal[0]) - 1;
