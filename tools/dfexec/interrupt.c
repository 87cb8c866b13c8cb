/* interrupt.c - Ctrl-C during `dfexec run`: the run is cancelled cleanly
 * (dfx_session_cancel, so every worker stops at its next node and the
 * session frees everything) instead of the process dying mid-write.
 *
 * dfx_session_cancel takes locks, so it cannot run in a signal handler, and
 * blocking SIGINT is not enough either: libraries start threads of their
 * own (OpenBLAS at load time) that would take the signal with its default
 * action. So the handler only writes a byte to a pipe (async-signal-safe),
 * whichever thread it runs on, and a watcher thread reading the pipe does
 * the cancelling. A second Ctrl-C while the run winds down exits at once.
 * A SIGINT the shell set to ignored (a background job) stays ignored. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

struct dfx_interrupt {
  pthread_t thread;
  int pipe[2];
  struct sigaction old;
  dfx_session *s;
  int fired; /* atomic: Ctrl-C was pressed */
  bool installed, running;
};

static volatile sig_atomic_t g_presses;
static int g_write_fd = -1;

static void on_sigint(int sig) {
  (void)sig;
  if (++g_presses > 1) _exit(DFX_EXIT_INTERRUPTED); /* the second Ctrl-C */
  int saved = errno;
  char b = 1;
  if (write(g_write_fd, &b, 1) < 0) { /* nothing more a handler can do */
  }
  errno = saved;
}

bool dfx__interrupt_start(dfx_session *s, dfx_interrupt **out) {
  *out = NULL;
  struct sigaction cur;
  if (sigaction(SIGINT, NULL, &cur) != 0 || cur.sa_handler == SIG_IGN) return true; /* nothing to do */
  dfx_interrupt *it = calloc(1, sizeof *it);
  if (!it) return false;
  it->s = s;
  if (pipe(it->pipe) != 0) {
    free(it);
    return false;
  }
  fcntl(it->pipe[1], F_SETFL, O_NONBLOCK);
  g_presses = 0;
  g_write_fd = it->pipe[1];
  struct sigaction sa = {0};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  it->installed = sigaction(SIGINT, &sa, &it->old) == 0;
  *out = it;
  return it->installed;
}

static void *watch(void *arg) {
  dfx_interrupt *it = arg;
  char b;
  for (;;) {
    ssize_t n = read(it->pipe[0], &b, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || b == 0) return NULL; /* b == 0: dfx__interrupt_end */
    __atomic_store_n(&it->fired, 1, __ATOMIC_RELEASE);
    dfx_session_cancel(it->s);
  }
}

bool dfx__interrupt_watch(dfx_interrupt *it) {
  if (!it) return true;
  it->running = pthread_create(&it->thread, NULL, watch, it) == 0;
  return it->running;
}

bool dfx__interrupt_fired(const dfx_interrupt *it) {
  return it && __atomic_load_n(&it->fired, __ATOMIC_ACQUIRE);
}

void dfx__interrupt_end(dfx_interrupt *it) {
  if (!it) return;
  if (it->installed) sigaction(SIGINT, &it->old, NULL);
  if (it->running) {
    char stop = 0;
    if (write(it->pipe[1], &stop, 1) == 1) pthread_join(it->thread, NULL);
    else pthread_detach(it->thread); /* cannot happen with an empty pipe; never block here */
  }
  g_write_fd = -1;
  close(it->pipe[0]);
  close(it->pipe[1]);
  free(it);
}
