// The alpha-beta of MPI on this machine, as the cost model uses it
// (passes/analysis/CostModel.h: a ring all-reduce over n ranks takes 2(n-1)
// steps of `latency` and moves 2(n-1)/n of the tensor at `bandwidth`).
//
//   mpicxx -O2 bench/costmodel/mpi_alpha_beta.cpp -o mpi_alpha_beta
//   mpirun -np 2 ./mpi_alpha_beta
//
// Rank 0 prints one line per size: bytes and the median seconds of an
// MPI_Allreduce (float sum) of that many bytes, over many repetitions;
// bench/costmodel/measure_cpu.py fits latency and bandwidth to them.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (long bytes = 64; bytes <= (64l << 20); bytes *= 4) {
    long count = bytes / 4;
    std::vector<float> in(count, 1.0f), out(count);
    int reps = bytes < (1 << 20) ? 200 : 20;
    std::vector<double> times;
    for (int r = 0; r < reps + 5; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      MPI_Allreduce(in.data(), out.data(), int(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      t = MPI_Wtime() - t;
      if (r >= 5) // warm-up
        times.push_back(t);
    }
    std::sort(times.begin(), times.end());
    if (rank == 0)
      std::printf("%ld %.9f\n", bytes, times[times.size() / 2]);
  }
  MPI_Finalize();
  return 0;
}
