/* gen_graphs.c - writes the MPI tests' graphs into tests/dist/data from the
 * gtext.h macros (run by hand when they change:
 *   cc -Itests tests/dist/gen_graphs.c -o /tmp/gen && /tmp/gen tests/dist/data). */
#include <stdio.h>
#include <string.h>

#include "gtext.h"

#define DEV(d) " device: \"" d "\""

static void put(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.pbtxt", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  /* The counter loop with its compare and add on task 1. */
  put(dir, "loop_split",
      GT_CONST_I32("w/start", 0, "") GT_ENTER("w/Enter", "w/start", "DT_INT32", "w/while", false, 10)
      GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
      GT_CONST_I32("w/limit", 10, GT_INPUT("^w/Merge"))
      GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", DEV("/job:worker/task:1"))
      GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
      GT_OP1("w/Identity", "Identity", "w/Switch:1", "DT_INT32", "")
      GT_CONST_I32("w/step", 1, GT_INPUT("^w/Identity"))
      GT_OP2("w/add", "Add", "w/Identity", "w/step", "DT_INT32", DEV("/task:1"))
      GT_OP1("w/NextIteration", "NextIteration", "w/add", "DT_INT32", "")
      GT_OP1("w/Exit", "Exit", "w/Switch", "DT_INT32", ""));
  /* A cond in a loop, the cond's compute on the last task. */
  put(dir, "nested_split",
      GT_CONST_I32("start", 0, "") GT_ENTER("w/Enter", "start", "DT_INT32", "w/while", false, 4)
      GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
      GT_CONST_I32("w/limit", 25, GT_INPUT("^w/Merge"))
      GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", "")
      GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
      GT_OP1("w/i", "Identity", "w/Switch:1", "DT_INT32", "")
      GT_CONST_I32("w/two", 2, GT_INPUT("^w/i"))
      GT_OP2("w/mod", "FloorMod", "w/i", "w/two", "DT_INT32", DEV("/task:1"))
      GT_CONST_I32("w/zero", 0, GT_INPUT("^w/i"))
      GT_OP2("w/even", "Equal", "w/mod", "w/zero", "DT_INT32", "")
      GT_SWITCH("w/c/Switch", "w/i", "w/even", "DT_INT32")
      GT_OP1("w/c/t", "Identity", "w/c/Switch:1", "DT_INT32", "")
      GT_OP1("w/c/f", "Identity", "w/c/Switch:0", "DT_INT32", "")
      GT_CONST_I32("w/c/one", 1, GT_INPUT("^w/c/t"))
      GT_CONST_I32("w/c/three", 3, GT_INPUT("^w/c/f"))
      GT_OP2("w/c/add1", "Add", "w/c/t", "w/c/one", "DT_INT32", DEV("/task:1"))
      GT_OP2("w/c/add3", "Add", "w/c/f", "w/c/three", "DT_INT32", DEV("/task:1"))
      GT_MERGE2("w/c/Merge", "w/c/add3", "w/c/add1", "DT_INT32", "")
      GT_OP1("w/NextIteration", "NextIteration", "w/c/Merge", "DT_INT32", "")
      GT_OP1("w/Exit", "Exit", "w/Switch", "DT_INT32", ""));
  /* A cond whose branches live on tasks 1 and 0. */
  put(dir, "cond_split",
      GT_PLACEHOLDER("p", "DT_BOOL") GT_CONST_I32("x", 5, "") GT_SWITCH("c/Switch", "x", "p", "DT_INT32")
      GT_OP1("c/t", "Identity", "c/Switch:1", "DT_INT32", DEV("/task:1"))
      GT_OP1("c/f", "Identity", "c/Switch:0", "DT_INT32", "")
      GT_CONST_I32("c/two", 2, GT_INPUT("^c/t"))
      GT_CONST_I32("c/ten", 10, GT_INPUT("^c/f"))
      GT_OP2("c/mul", "Mul", "c/t", "c/two", "DT_INT32", DEV("/task:1"))
      GT_OP2("c/add", "Add", "c/f", "c/ten", "DT_INT32", "")
      GT_MERGE2("c/Merge", "c/add", "c/mul", "DT_INT32", ""));
  put(dir, "bad_task",
      GT_COUNTER_LOOP("x/", 0, 3, 1, 10)
      "node { name: \"w/add\" op: \"Add\" input: \"x/Exit\" input: \"x/Exit\"" DEV("/task:5") GT_TYPE("T", "DT_INT32") " }\n");
  /* 3 / (3 - i) fails (division by zero) in iteration 3, on task 1. */
  put(dir, "loop_error",
      GT_CONST_I32("start", 0, "") GT_ENTER("w/Enter", "start", "DT_INT32", "w/while", false, 10)
      GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
      GT_CONST_I32("w/limit", 10, GT_INPUT("^w/Merge"))
      GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", "")
      GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
      GT_OP1("w/Identity", "Identity", "w/Switch:1", "DT_INT32", "")
      GT_CONST_I32("w/three", 3, GT_INPUT("^w/Identity"))
      GT_OP2("w/sub", "Sub", "w/three", "w/Identity", "DT_INT32", DEV("/task:1"))
      GT_OP2("w/div", "FloorDiv", "w/three", "w/sub", "DT_INT32", DEV("/task:1"))
      GT_CONST_I32("w/one", 1, GT_INPUT("^w/Identity"))
      GT_OP2("w/add", "Add", "w/Identity", "w/one", "DT_INT32", GT_INPUT("^w/div"))
      GT_OP1("w/NextIteration", "NextIteration", "w/add", "DT_INT32", "")
      GT_OP1("w/Exit", "Exit", "w/Switch", "DT_INT32", ""));
  return 0;
}
