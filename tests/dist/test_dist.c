/* test_dist.c - placement, partitioning and partitioned runs in one
 * process: loop and cond graphs split over 2 and 3 tasks (by device fields,
 * at random, and with all control flow on one task and all compute on
 * another) must give exactly the single-process outputs; placement errors
 * name the node and the device. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "dist.h"
#include "dist_run.h"
#include "eutil.h"
#include "gtext.h"

TestSuite(dist, .init = eu_setup, .fini = eu_teardown);

/* ---- device names ---- */

Test(dist, device_forms) {
  int t;
  cr_assert_eq(dfx__dist_device_task("/job:worker/replica:0/task:3/device:CPU:0", &t, NULL), DFX_OK);
  cr_assert_eq(t, 3);
  cr_assert_eq(dfx__dist_device_task("/task:1", &t, NULL), DFX_OK);
  cr_assert_eq(t, 1);
  cr_assert_eq(dfx__dist_device_task("/job:worker/task:12", &t, NULL), DFX_OK);
  cr_assert_eq(t, 12);
  cr_assert_eq(dfx__dist_device_task("/device:CPU:0", &t, NULL), DFX_OK);
  cr_assert_eq(t, -1);
  cr_assert_eq(dfx__dist_device_task("/cpu:0", &t, NULL), DFX_OK);
  cr_assert_eq(t, -1);
  cr_assert_eq(dfx__dist_device_task("", &t, NULL), DFX_OK);
  cr_assert_eq(t, -1);
  dfx_status st;
  cr_assert_eq(dfx__dist_device_task("/task:x", &t, &st), DFX_EINVAL);
  cr_assert_eq(dfx__dist_device_task("/banana:1", &t, &st), DFX_EINVAL);
  cr_assert(strstr(st.msg, "banana"), "%s", st.msg);
}

/* ---- placement rules ---- */

#define DEV(d) " device: \"" d "\""
static const char two_adds[] =
    GT_CONST_F32("a", 1, "") GT_CONST_F32("b", 2, DEV("/task:1"))
    "node { name: \"s\" op: \"Add\" input: \"a\" input: \"b\"" GT_TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"t\" op: \"Mul\" input: \"s\" input: \"b\"" DEV("/job:worker/replica:0/task:2/device:CPU:0")
    GT_TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"u\" op: \"Neg\" input: \"t\"" GT_TYPE("T", "DT_FLOAT")
    " attr { key: \"_class\" value { list { s: \"loc:@b\" } } } }\n";

Test(dist, default_rule_and_colocation) {
  dfx_graph *g = eu_graph(two_adds);
  int task[8];
  cr_assert_eq(dfx__dist_place(g, 3, 0, task, NULL), DFX_OK);
  /* a: no device, no inputs -> 0; b: asked 1; s: follows its first input a -> 0;
   * t: asked 2; u: colocated with b -> 1. */
  int want[] = {0, 1, 0, 2, 1};
  for (int i = 0; i < 5; i++) cr_assert_eq(task[i], want[i], "node %s on %d", g->nodes[i].name, task[i]);
  dfx_graph_free(g);
}

Test(dist, unknown_task_names_node_and_device) {
  dfx_graph *g = eu_graph(two_adds);
  int task[8];
  dfx_status st;
  cr_assert_eq(dfx__dist_place(g, 2, 0, task, &st), DFX_EINVAL);
  cr_assert(strstr(st.msg, "'t' (Mul)") && strstr(st.msg, "task:2") && strstr(st.msg, "2 tasks"), "%s", st.msg);
  dfx_graph_free(g);
}

Test(dist, colocation_conflict) {
  dfx_graph *g = eu_graph(GT_CONST_F32("a", 1, DEV("/task:0"))
                          "node { name: \"n\" op: \"Neg\" input: \"a\"" DEV("/task:1") GT_TYPE("T", "DT_FLOAT")
                          " attr { key: \"_class\" value { list { s: \"loc:@a\" } } } }\n");
  int task[4];
  dfx_status st;
  cr_assert_eq(dfx__dist_place(g, 2, 0, task, &st), DFX_EINVAL);
  cr_assert(strstr(st.msg, "'a'") && strstr(st.msg, "'n'") && strstr(st.msg, "share a task"), "%s", st.msg);
  dfx_graph_free(g);
}

/* ---- partition structure ---- */

static int count_op(const dfx_graph *g, const char *op) {
  int k = 0;
  for (int i = 0; i < g->n_nodes; i++) k += strcmp(g->nodes[i].op, op) == 0;
  return k;
}

Test(dist, partition_attrs_and_control_loop) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 10, 1, 10));
  int task[32];
  for (int i = 0; i < g->n_nodes; i++) task[i] = strcmp(g->nodes[i].name, "w/add") == 0 ? 1 : 0;
  dfx_graph *parts[2];
  dfx_status st;
  cr_assert_eq(dfx__dist_partition(g, task, 2, 7, parts, &st), DFX_OK, "%s", st.msg);
  /* Task 1 holds the Add, two _Recv (its inputs), a _Send (its output) and
   * a control loop (Enter, Merge, Switch, NextIteration, a dummy Const) whose
   * Switch reads the LoopCond through one more _Recv. */
  cr_assert_eq(count_op(parts[1], "_Recv"), 3);
  cr_assert_eq(count_op(parts[1], "_Send"), 1);
  cr_assert_eq(count_op(parts[1], "Enter"), 1);
  cr_assert_eq(count_op(parts[1], "NextIteration"), 1);
  cr_assert_eq(count_op(parts[0], "_Send"), 3);
  cr_assert_eq(count_op(parts[0], "_Recv"), 1);
  for (int i = 0; i < parts[1]->n_nodes; i++) {
    const dfx_node *n = &parts[1]->nodes[i];
    if (strcmp(n->op, "_Recv") != 0) continue;
    cr_assert_str_eq(dfx__attr_str(n, "recv_device", ""), "/job:worker/replica:0/task:1/device:CPU:0");
    cr_assert_str_eq(dfx__attr_str(n, "send_device", ""), "/job:worker/replica:0/task:0/device:CPU:0");
    cr_assert_eq(dfx__attr_int(n, "send_device_incarnation", 0), 7);
    cr_assert(strncmp(dfx__attr_str(n, "tensor_name", ""), "edge_", 5) == 0);
    cr_assert_eq(dfx__attr_bool(n, "client_terminated", true), false);
    /* Inside the loop: driven by the control loop's Merge. */
    cr_assert_eq(n->n_ctrl, 1);
    cr_assert_str_eq(parts[1]->nodes[n->in[n->n_in].node].op, "Merge");
  }
  for (int k = 0; k < 2; k++) dfx_graph_free(parts[k]);
  dfx_graph_free(g);
}

/* ---- partitioned runs give the single-process outputs ---- */

/* Nested loops: the outer loop counts i to 3, the inner one adds i+1 to an
 * accumulator 4 times per outer iteration; result outer/Exit_1. */
#define NESTED                                                                                   \
  GT_CONST_I32("zero", 0, "")                                                                    \
  GT_ENTER("o/Enter", "zero", "DT_INT32", "o/while", false, 10)                                  \
  GT_ENTER("o/Enter_1", "zero", "DT_INT32", "o/while", false, 10)                                \
  GT_MERGE2("o/Merge", "o/Enter", "o/NextIteration", "DT_INT32", "")                             \
  GT_MERGE2("o/Merge_1", "o/Enter_1", "o/NextIteration_1", "DT_INT32", "")                       \
  GT_CONST_I32("o/three", 3, GT_INPUT("^o/Merge"))                                               \
  GT_OP2("o/Less", "Less", "o/Merge", "o/three", "DT_INT32", "")                                 \
  GT_LOOPCOND("o/LoopCond", "o/Less")                                                            \
  GT_SWITCH("o/Switch", "o/Merge", "o/LoopCond", "DT_INT32")                                     \
  GT_SWITCH("o/Switch_1", "o/Merge_1", "o/LoopCond", "DT_INT32")                                 \
  GT_OP1("o/i", "Identity", "o/Switch:1", "DT_INT32", "")                                        \
  GT_OP1("o/acc", "Identity", "o/Switch_1:1", "DT_INT32", "")                                    \
  GT_CONST_I32("o/one", 1, GT_INPUT("^o/i"))                                                     \
  GT_OP2("o/inc", "Add", "o/i", "o/one", "DT_INT32", "")                                         \
  GT_CONST_I32("o/z", 0, GT_INPUT("^o/i"))                                                       \
  GT_ENTER("i/Enter", "o/z", "DT_INT32", "i/while", false, 10)                                   \
  GT_ENTER("i/Enter_1", "o/acc", "DT_INT32", "i/while", false, 10)                               \
  GT_ENTER("i/step", "o/inc", "DT_INT32", "i/while", true, 10)                                   \
  GT_MERGE2("i/Merge", "i/Enter", "i/NextIteration", "DT_INT32", "")                             \
  GT_MERGE2("i/Merge_1", "i/Enter_1", "i/NextIteration_1", "DT_INT32", "")                       \
  GT_CONST_I32("i/four", 4, GT_INPUT("^i/Merge"))                                                \
  GT_OP2("i/Less", "Less", "i/Merge", "i/four", "DT_INT32", "")                                  \
  GT_LOOPCOND("i/LoopCond", "i/Less")                                                            \
  GT_SWITCH("i/Switch", "i/Merge", "i/LoopCond", "DT_INT32")                                     \
  GT_SWITCH("i/Switch_1", "i/Merge_1", "i/LoopCond", "DT_INT32")                                 \
  GT_OP1("i/j", "Identity", "i/Switch:1", "DT_INT32", "")                                        \
  GT_OP1("i/a", "Identity", "i/Switch_1:1", "DT_INT32", "")                                      \
  GT_CONST_I32("i/one", 1, GT_INPUT("^i/j"))                                                     \
  GT_OP2("i/jn", "Add", "i/j", "i/one", "DT_INT32", "")                                          \
  GT_OP2("i/an", "Add", "i/a", "i/step", "DT_INT32", "")                                         \
  GT_OP1("i/NextIteration", "NextIteration", "i/jn", "DT_INT32", "")                             \
  GT_OP1("i/NextIteration_1", "NextIteration", "i/an", "DT_INT32", "")                           \
  GT_OP1("i/Exit", "Exit", "i/Switch", "DT_INT32", "")                                           \
  GT_OP1("i/Exit_1", "Exit", "i/Switch_1", "DT_INT32", "")                                       \
  GT_OP1("o/NextIteration", "NextIteration", "o/inc", "DT_INT32", "")                            \
  GT_OP1("o/NextIteration_1", "NextIteration", "i/Exit_1", "DT_INT32", "")                       \
  GT_OP1("o/Exit", "Exit", "o/Switch", "DT_INT32", "")                                           \
  GT_OP1("o/Exit_1", "Exit", "o/Switch_1", "DT_INT32", "")

/* A cond on a fed predicate: x*2 when p, x+10 otherwise. */
#define COND                                                                                     \
  GT_PLACEHOLDER("p", "DT_BOOL") GT_CONST_I32("x", 5, "")                                        \
  GT_SWITCH("c/Switch", "x", "p", "DT_INT32")                                                    \
  GT_OP1("c/t", "Identity", "c/Switch:1", "DT_INT32", "")                                        \
  GT_OP1("c/f", "Identity", "c/Switch:0", "DT_INT32", "")                                        \
  GT_CONST_I32("c/two", 2, GT_INPUT("^c/t"))                                                     \
  GT_CONST_I32("c/ten", 10, GT_INPUT("^c/f"))                                                    \
  GT_OP2("c/mul", "Mul", "c/t", "c/two", "DT_INT32", "")                                         \
  GT_OP2("c/add", "Add", "c/f", "c/ten", "DT_INT32", "")                                         \
  GT_MERGE2("c/Merge", "c/add", "c/mul", "DT_INT32", "")

typedef struct run_case {
  const char *text, *fetch;
  bool feed_p;
} run_case;

static const run_case cases[] = {
    {GT_COUNTER_LOOP("w/", 0, 10, 1, 10), "w/Exit", false},
    {GT_COUNTER_LOOP("w/", 0, 50, 1, 1), "w/Exit", false},
    {GT_COUNTER_LOOP("w/", 7, 3, 1, 10), "w/Exit", false}, /* zero trips */
    {GT_COND_IN_LOOP(20, 32), "w/Exit", false},
    {GT_COND_IN_LOOP(9, 1), "w/Exit", false},
    {NESTED, "o/Exit_1", false},
    {COND, "c/Merge", true},
};

static dfx_tensor *bool_scalar(bool v) {
  dfx_tensor *t = dfx_tensor_new(DFX_BOOL, NULL, 0);
  *(uint8_t *)dfx_tensor_data(t) = v;
  return t;
}

/* The single-process value of a case's fetch. */
static int32_t reference(const run_case *c, bool p) {
  dfx_graph *g = eu_graph(c->text);
  dfx_tensor *out = NULL, *feed = c->feed_p ? bool_scalar(p) : NULL;
  char msg[512];
  cr_assert_eq(eu_run(g, 1, c->fetch, &out, c->feed_p ? "p" : NULL, feed, msg, sizeof msg), DFX_OK, "%s", msg);
  int32_t v = eu_i32(out);
  dfx_tensor_free(out);
  dfx_tensor_free(feed);
  dfx_graph_free(g);
  return v;
}

static int32_t partitioned(const run_case *c, bool p, int tasks, unsigned seed, int threads) {
  dfx_graph *g = eu_graph(c->text);
  dfx_dist_options o = {.n_tasks = tasks, .random_seed = seed, .n_threads = threads, .only_task = -1};
  dfx_port fetch = {c->fetch, 0}, feed = {"p", 0};
  dfx_tensor *fv = c->feed_p ? bool_scalar(p) : NULL, *out = NULL;
  dfx_status st;
  dfx__status_clear(&st);
  dfx_code rc = dfx__dist_run_local(g, &o, NULL, &feed, &fv, c->feed_p, &fetch, &out, 1, NULL, 0, &st);
  cr_assert_eq(rc, DFX_OK, "tasks %d seed %u: %s", tasks, seed, st.msg);
  int32_t v = eu_i32(out);
  dfx_tensor_free(out);
  dfx_tensor_free(fv);
  dfx_graph_free(g);
  return v;
}

Test(dist, random_placements_match_single_process, .timeout = 120) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int pv = 0; pv <= (int)cases[i].feed_p; pv++) {
      int32_t want = reference(&cases[i], pv);
      for (int tasks = 2; tasks <= 3; tasks++)
        for (unsigned seed = 1; seed <= 12; seed++) {
          int32_t got = partitioned(&cases[i], pv, tasks, seed, seed % 2 ? 1 : 2);
          cr_assert_eq(got, want, "case %zu p=%d tasks %d seed %u: got %d, want %d", i, pv, tasks, seed, got, want);
        }
    }
}

/* All control-flow nodes on task 0, everything else on task 1. */
static char *split_control_compute(const char *text) {
  size_t n = strlen(text);
  char *out = malloc(n * 2 + 1), *o = out;
  const char *p = text;
  while (*p) {
    const char *line_end = strchr(p, '\n');
    size_t len = line_end ? (size_t)(line_end - p + 1) : strlen(p);
    bool ctrl = false;
    static const char *ops[] = {"\"Enter\"", "\"Merge\"", "\"Switch\"", "\"Exit\"", "\"NextIteration\"", "\"LoopCond\""};
    for (size_t k = 0; k < 6; k++) {
      const char *f = strstr(p, ops[k]);
      if (f && f < p + len) ctrl = true;
    }
    const char *op = strstr(p, " op: ");
    if (op && op < p + len) {
      size_t head = (size_t)(op - p);
      memcpy(o, p, head);
      o += head;
      o += sprintf(o, " device: \"/task:%d\"", ctrl ? 0 : 1);
      memcpy(o, op, len - head);
      o += len - head;
    } else {
      memcpy(o, p, len);
      o += len;
    }
    p += len;
  }
  *o = 0;
  return out;
}

Test(dist, control_flow_on_one_task_compute_on_another, .timeout = 60) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int pv = 0; pv <= (int)cases[i].feed_p; pv++) {
      int32_t want = reference(&cases[i], pv);
      char *text = split_control_compute(cases[i].text);
      run_case c = cases[i];
      c.text = text;
      for (int threads = 1; threads <= 2; threads++)
        cr_assert_eq(partitioned(&c, pv, 2, 0, threads), want, "case %zu threads %d", i, threads);
      free(text);
    }
}

/* A cond whose taken branch lives on another task than its Merge: the
 * untaken branch's deadness crosses tasks as an is_dead message. */
Test(dist, cond_branch_on_other_task) {
  const char *text = GT_PLACEHOLDER("p", "DT_BOOL") GT_CONST_I32("x", 5, "")
      GT_SWITCH("c/Switch", "x", "p", "DT_INT32")
      "node { name: \"c/t\" op: \"Identity\" input: \"c/Switch:1\" device: \"/task:1\"" GT_TYPE("T", "DT_INT32") " }\n"
      "node { name: \"c/f\" op: \"Identity\" input: \"c/Switch:0\" device: \"/task:2\"" GT_TYPE("T", "DT_INT32") " }\n"
      GT_MERGE2("c/Merge", "c/f", "c/t", "DT_INT32", "");
  run_case c = {text, "c/Merge", true};
  for (int pv = 0; pv <= 1; pv++) cr_assert_eq(partitioned(&c, pv, 3, 0, 1), 5);
}

/* A fetch on the untaken branch is dead in a partitioned run too. */
Test(dist, dead_fetch_is_an_error) {
  const char *text = GT_PLACEHOLDER("p", "DT_BOOL") GT_CONST_I32("x", 5, "")
      GT_SWITCH("c/Switch", "x", "p", "DT_INT32")
      "node { name: \"c/t\" op: \"Identity\" input: \"c/Switch:1\" device: \"/task:1\"" GT_TYPE("T", "DT_INT32") " }\n";
  dfx_graph *g = eu_graph(text);
  dfx_dist_options o = {.n_tasks = 2, .n_threads = 1, .only_task = -1};
  dfx_port fetch = {"c/t", 0}, feed = {"p", 0};
  dfx_tensor *fv = bool_scalar(false), *out = NULL;
  dfx_status st;
  cr_assert_eq(dfx__dist_run_local(g, &o, NULL, &feed, &fv, 1, &fetch, &out, 1, NULL, 0, &st), DFX_EINVAL);
  cr_assert(strstr(st.msg, "dead"), "%s", st.msg);
  cr_assert_null(out);
  dfx_tensor_free(fv);
  dfx_graph_free(g);
}

/* An error inside a loop on one task stops every task, with the message of
 * the task that failed. */
Test(dist, error_in_loop_stops_every_task, .timeout = 30) {
  const char *text = GT_CONST_I32("start", 0, "")
      GT_ENTER("w/Enter", "start", "DT_INT32", "w/while", false, 10)
      GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
      GT_CONST_I32("w/limit", 10, GT_INPUT("^w/Merge"))
      GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", "")
      GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
      GT_OP1("w/Identity", "Identity", "w/Switch:1", "DT_INT32", "")
      GT_CONST_I32("w/three", 3, GT_INPUT("^w/Identity"))
      GT_OP2("w/sub", "Sub", "w/three", "w/Identity", "DT_INT32", DEV("/task:1"))
      "node { name: \"w/div\" op: \"FloorDiv\" input: \"w/three\" input: \"w/sub\"" DEV("/task:1")
      GT_TYPE("T", "DT_INT32") " }\n"
      GT_CONST_I32("w/one", 1, GT_INPUT("^w/Identity"))
      GT_OP2("w/add", "Add", "w/Identity", "w/one", "DT_INT32", GT_INPUT("^w/div"))
      GT_OP1("w/NextIteration", "NextIteration", "w/add", "DT_INT32", "")
      GT_OP1("w/Exit", "Exit", "w/Switch", "DT_INT32", "");
  dfx_graph *g = eu_graph(text);
  dfx_dist_options o = {.n_tasks = 2, .n_threads = 1, .only_task = -1};
  dfx_port fetch = {"w/Exit", 0};
  dfx_tensor *out = NULL;
  dfx_status st;
  dfx_code rc = dfx__dist_run_local(g, &o, NULL, NULL, NULL, 0, &fetch, &out, 1, NULL, 0, &st);
  cr_assert_neq(rc, DFX_OK);
  cr_assert(strstr(st.msg, "task 1") && strstr(st.msg, "w/div") && strstr(st.msg, "iteration 3"), "%s", st.msg);
  dfx_graph_free(g);
}
