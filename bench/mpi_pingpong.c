/* mpi_pingpong.c - the limit a partitioned loop is measured against: a raw
 * MPI round trip between ranks 0 and 1 (MPI_Send/MPI_Recv of a 4-byte
 * message), and the bandwidth of one large message. Run with
 *   mpiexec -n 2 build/bench/dfx-mpi-pingpong [ROUNDS] [MB]
 * next to `mpiexec -n 2 dfexec run bench/graphs/pingpong.pbtxt --threads 1
 * --repeat 5` (one round trip per loop iteration, 2000 iterations). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  long mb = argc > 2 ? atol(argv[2]) : 64;
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "dfx-mpi-pingpong: run with mpiexec -n 2\n");
    MPI_Finalize();
    return 2;
  }
  int v = 0;
  for (int warm = 0; warm < 2; warm++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < rounds; i++) {
      if (rank == 0) {
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v++;
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      }
    }
    double t = MPI_Wtime() - t0;
    if (warm && rank == 0) printf("round trip: %.2f us (%d rounds)\n", t / rounds * 1e6, rounds);
  }
  size_t n = (size_t)mb << 20;
  char *buf = malloc(n);
  if (buf) {
    memset(buf, 1, n);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0) printf("%ld MB: %.1f ms, %.2f GB/s\n", mb, t * 1e3, (double)n / t / 1e9);
    free(buf);
  }
  MPI_Finalize();
  return 0;
}
