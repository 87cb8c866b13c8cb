/* dist_mpi.h - the MPI transport (mpi_rdv.c, built when meson finds MPI:
 * option `mpi`, auto). Rank K runs task K. Start-up and shutdown calls
 * (new, check_hash, agree, free) are collective: every rank makes them,
 * in the same order, from its main thread, while the communication thread
 * is stopped. */
#ifndef DFX_DIST_MPI_H
#define DFX_DIST_MPI_H

#include <stdbool.h>
#include <stdint.h>

#include "rendezvous.h"

typedef struct dfx_mpi dfx_mpi;

/* Whether this process was started by mpiexec (MPICH's or Open MPI's
 * environment), without initialising MPI. */
bool dfx__mpi_launched(void);
/* MPI_Init_thread (MPI_THREAD_SERIALIZED) and the transport; *out new. */
dfx_code dfx__mpi_new(int *argc, char ***argv, dfx_mpi **out, dfx_status *st);
int dfx__mpi_rank(const dfx_mpi *m);
int dfx__mpi_size(const dfx_mpi *m);
/* Collective: fails on every rank, naming the first rank whose hash
 * differs from rank 0's, when the ranks do not hold the same graph. */
dfx_code dfx__mpi_check_hash(dfx_mpi *m, uint64_t hash, dfx_status *st);
/* Collective: the minimum of `value` over the ranks (stop the rendezvous first). */
dfx_code dfx__mpi_agree(dfx_mpi *m, int value, int *out, dfx_status *st);
/* The rendezvous (borrowed from m); starts the communication thread. */
dfx_rendezvous *dfx__mpi_rendezvous(dfx_mpi *m);
/* Drops what step left behind in the local table. */
void dfx__mpi_end_step(dfx_mpi *m, int64_t step);
/* Stops the communication thread once every queued message went out. */
void dfx__mpi_stop(dfx_mpi *m);
/* Stops, frees and calls MPI_Finalize. */
void dfx__mpi_free(dfx_mpi *m);

#endif
