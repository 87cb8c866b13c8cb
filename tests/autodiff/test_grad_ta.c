/* test_grad_ta.c - a dynamic_rnn-style graph differentiated end to end:
 * the input sequence is scattered into a TensorArray, a while loop reads
 * step t, computes h = tanh(x_t W + h U) and writes h into an output
 * TensorArray, which is gathered after the loop (TF1's lowering). The
 * gradient flows through TensorArray reads, writes, scatter and gather
 * (autodiff/grad_ta.c) inside the loop machinery (grad_while.c). */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gcheck.h"
#include "gtext_ad.h"

TestSuite(grad_ta, .init = eu_setup, .fini = eu_teardown, .timeout = 240);

static const dfx_dtype BOTH[] = {DFX_F64, DFX_F32};

#define ENTER(name, x, is_const, pi, t)                                                                    \
  "node { name: \"" name "\" op: \"Enter\"" IN(x) t AS("frame_name", "rnn/while") AB("is_constant", is_const) \
  AI("parallel_iterations", pi) " }\n"
#define TI " attr { key: \"T\" value { type: DT_INT32 } }"
#define TFL " attr { key: \"T\" value { type: DT_FLOAT } }"
#define TRES " attr { key: \"T\" value { type: DT_RESOURCE } }"
#define MERGE(name, a, b, t) "node { name: \"" name "\" op: \"Merge\"" IN(a) IN(b) t AI("N", 2) " }\n"
#define SWITCH(name, x, p, t) "node { name: \"" name "\" op: \"Switch\"" IN(x) IN(p) t " }\n"
#define ONE(op, name, x, t) "node { name: \"" name "\" op: \"" op "\"" IN(x) t " }\n"
#define CI(name, v, extra) \
  "node { name: \"" name "\" op: \"Const\"" extra " attr { key: \"dtype\" value { type: DT_INT32 } }" \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: " #v " } } } }\n"
#define TA(name) "node { name: \"" name "\" op: \"TensorArrayV3\"" IN("size") " attr { key: \"dtype\" value { type: $T } } }\n"

/* Y is the fetched result: the gathered outputs, or the last state. */
#define RNN(pi, Y)                                                                                         \
  CI("size", 4, "") CI("zero", 0, "") CI("step", 1, "")                                                    \
  "node { name: \"rng\" op: \"Range\"" IN("zero") IN("size") IN("step") " attr { key: \"Tidx\" value { type: DT_INT32 } } }\n" \
  TA("ta_x") TA("ta_y")                                                                                    \
  "node { name: \"scat\" op: \"TensorArrayScatterV3\"" IN("ta_x") IN("rng") IN("xs") IN("ta_x:1") AT("T") " }\n" \
  ENTER("rnn/Enter_i", "zero", false, pi, TI) ENTER("rnn/Enter_h", "h0", false, pi, AT("T"))               \
  ENTER("rnn/Enter_fl", "ta_y:1", false, pi, TFL) ENTER("rnn/Enter_n", "size", true, pi, TI)               \
  ENTER("rnn/Enter_tax", "ta_x", true, pi, TRES) ENTER("rnn/Enter_flx", "scat", true, pi, TFL)             \
  ENTER("rnn/Enter_tay", "ta_y", true, pi, TRES) ENTER("rnn/Enter_W", "W", true, pi, AT("T"))              \
  ENTER("rnn/Enter_U", "U", true, pi, AT("T"))                                                              \
  MERGE("rnn/Merge_i", "rnn/Enter_i", "rnn/Next_i", TI) MERGE("rnn/Merge_h", "rnn/Enter_h", "rnn/Next_h", AT("T")) \
  MERGE("rnn/Merge_fl", "rnn/Enter_fl", "rnn/Next_fl", TFL)                                                \
  "node { name: \"rnn/Less\" op: \"Less\"" IN("rnn/Merge_i") IN("rnn/Enter_n") TI " }\n"                 \
  "node { name: \"rnn/LoopCond\" op: \"LoopCond\"" IN("rnn/Less") " }\n"                                  \
  SWITCH("rnn/Switch_i", "rnn/Merge_i", "rnn/LoopCond", TI) SWITCH("rnn/Switch_h", "rnn/Merge_h", "rnn/LoopCond", AT("T")) \
  SWITCH("rnn/Switch_fl", "rnn/Merge_fl", "rnn/LoopCond", TFL)                                             \
  ONE("Identity", "rnn/i", "rnn/Switch_i:1", TI) ONE("Identity", "rnn/h", "rnn/Switch_h:1", AT("T"))       \
  ONE("Identity", "rnn/fl", "rnn/Switch_fl:1", TFL)                                                        \
  "node { name: \"rnn/x\" op: \"TensorArrayReadV3\"" IN("rnn/Enter_tax") IN("rnn/i") IN("rnn/Enter_flx")   \
  " attr { key: \"dtype\" value { type: $T } } }\n"                                                        \
  NX("rnn/xw", "MatMul", IN("rnn/x") IN("rnn/Enter_W"), "") NX("rnn/hu", "MatMul", IN("rnn/h") IN("rnn/Enter_U"), "") \
  N2("rnn/s", "AddV2", "rnn/xw", "rnn/hu") N1("rnn/hn", "Tanh", "rnn/s")                                   \
  "node { name: \"rnn/wr\" op: \"TensorArrayWriteV3\"" IN("rnn/Enter_tay") IN("rnn/i") IN("rnn/hn") IN("rnn/fl") AT("T") " }\n" \
  CI("rnn/one", 1, IN("^rnn/i")) "node { name: \"rnn/inc\" op: \"AddV2\"" IN("rnn/i") IN("rnn/one") TI " }\n" \
  ONE("NextIteration", "rnn/Next_i", "rnn/inc", TI) ONE("NextIteration", "rnn/Next_h", "rnn/hn", AT("T"))  \
  ONE("NextIteration", "rnn/Next_fl", "rnn/wr", TFL)                                                       \
  ONE("Exit", "rnn/Exit_i", "rnn/Switch_i", TI) ONE("Exit", "rnn/Exit_h", "rnn/Switch_h", AT("T"))         \
  ONE("Exit", "rnn/Exit_fl", "rnn/Switch_fl", TFL)                                                         \
  "node { name: \"out\" op: \"TensorArrayGatherV3\"" IN("ta_y") IN("rng") IN("rnn/Exit_fl")                \
  " attr { key: \"dtype\" value { type: $T } } }\n" N1("y", "Identity", Y)

#define INS {{"xs", S3(4, 2, 3)}, {"h0", S2(2, 3)}, {"W", S2(3, 3)}, {"U", S2(3, 3)}}

static const gc_case rnn[] = {
    {"RNN outputs, parallel 10", RNN(10, "out"), "y", 4, INS},
    {"RNN outputs, parallel 1", RNN(1, "out"), "y", 4, INS},
    {"RNN last state", RNN(10, "rnn/Exit_h"), "y", 4, INS},
};

Test(grad_ta, tensor_array_rnn) { gc_check_all(rnn, sizeof rnn / sizeof *rnn, BOTH, 2); }
