//===- ThreadPool.cpp - the threads compiled CPU steps run on -------------===//
//
// The caller and threads() - 1 workers take chunks from a shared counter.
// A step makes thousands of calls of tens of microseconds each, so idle
// workers spin for a while before they sleep: waking a sleeping thread
// costs about as much as a small chunk.
//
// Built with -DGACC_OPENMP_LOOPS=ON, parallelFor is an OpenMP loop over the
// same chunks instead (libgomp): the comparison docs/cpu.md reports.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/ThreadPool.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sched.h>
#include <thread>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if GACC_OPENMP_LOOPS
#include <omp.h>
#endif

namespace gacc::rt {
namespace {

void pause() {
#if defined(__x86_64__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// About a millisecond of spinning before an idle worker sleeps.
constexpr int kSpins = 1 << 14;

/// The cores this process may run on.
int availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return CPU_COUNT(&set);
  unsigned count = std::thread::hardware_concurrency();
  return count ? static_cast<int>(count) : 1;
}

/// $GACC_NUM_THREADS if it is a positive count, else the cores.
int defaultThreads() {
  const char *value = std::getenv("GACC_NUM_THREADS");
  if (!value || !*value)
    return availableCores();
  char *end = nullptr;
  long count = std::strtol(value, &end, 10);
  if (*end || count < 1 || count > 4096) {
    std::fprintf(stderr,
                 "gacc: warning: GACC_NUM_THREADS=%s is not a thread count; "
                 "using %d\n",
                 value, availableCores());
    return availableCores();
  }
  return static_cast<int>(count);
}

struct Job {
  ChunkTask task;
  void *context;
  int64_t extent, grain, chunks;
  std::atomic<int64_t> next{0}, done{0};
};

/// Runs chunks of `job` until none is left.
void runChunks(Job &job) {
  for (int64_t chunk; (chunk = job.next.fetch_add(1)) < job.chunks;) {
    int64_t begin = chunk * job.grain;
    int64_t end = std::min(begin + job.grain, job.extent);
    job.task(job.context, begin, end);
    job.done.fetch_add(1, std::memory_order_release);
  }
}

thread_local bool onPoolThread = false;

class Pool {
public:
  static Pool &get() {
    static Pool pool;
    return pool;
  }
  ~Pool() { resize(1); }

  int size() const { return size_.load(std::memory_order_relaxed); }

  void resize(int count) {
    // Not while a job runs: wait for the pool to be free.
    while (busy_.exchange(true, std::memory_order_acquire))
      pause();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread &worker : workers_)
      worker.join();
    workers_.clear();
    stopping_ = false;
    for (int i = 1; i < count; ++i)
      workers_.emplace_back([this] { work(); });
    size_.store(count, std::memory_order_relaxed);
    busy_.store(false, std::memory_order_release);
  }

  void run(Job &job) {
    if (onPoolThread || busy_.exchange(true, std::memory_order_acquire)) {
      runChunks(job);
      return;
    }
    if (workers_.empty()) {
      busy_.store(false, std::memory_order_release);
      runChunks(job);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    onPoolThread = true;
    runChunks(job);
    onPoolThread = false;
    while (job.done.load(std::memory_order_acquire) < job.chunks)
      pause();
    // No worker joins once job_ is cleared; wait for those that did.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = nullptr;
    }
    while (active_.load(std::memory_order_acquire) != 0)
      pause();
    busy_.store(false, std::memory_order_release);
  }

private:
  Pool() { resize(defaultThreads()); }

  void work() {
    onPoolThread = true;
    uint64_t seen = generation_.load(std::memory_order_acquire);
    while (true) {
      for (int spin = 0;
           spin < kSpins &&
           generation_.load(std::memory_order_acquire) == seen && !stopping_;
           ++spin)
        pause();
      Job *job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] {
          return stopping_ ||
                 generation_.load(std::memory_order_relaxed) != seen;
        });
        if (stopping_)
          return;
        seen = generation_.load(std::memory_order_relaxed);
        job = job_;
        if (!job)
          continue;
        active_.fetch_add(1, std::memory_order_relaxed);
      }
      runChunks(*job);
      active_.fetch_sub(1, std::memory_order_release);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  /// Guarded by mutex_ (generation_ and stopping_ are also read while
  /// spinning): the job workers may join, counted by generation.
  Job *job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stopping_{false};
  /// Workers inside the current job.
  std::atomic<int> active_{0};
  /// Held by the thread whose job the pool runs, and while it is resized.
  std::atomic<bool> busy_{false};
  /// Owned by whoever holds busy_.
  std::vector<std::thread> workers_;
  /// The caller and the workers.
  std::atomic<int> size_{1};
};

} // namespace

#if GACC_OPENMP_LOOPS
/// The team size for every thread's loops (omp_set_num_threads sets only
/// the calling thread's).
std::atomic<int> &teamSize() {
  static std::atomic<int> size{defaultThreads()};
  return size;
}

int threads() { return teamSize().load(std::memory_order_relaxed); }

void setThreads(int count) {
  teamSize().store(count < 1 ? 1 : count, std::memory_order_relaxed);
}

void parallelFor(int64_t extent, int64_t grain, ChunkTask task, void *context) {
  if (extent <= 0)
    return;
  if (grain < 1)
    grain = 1;
  int64_t chunks = (extent + grain - 1) / grain;
  // Nested calls (a matmul block's) run in the calling thread, as on the
  // pool.
  int team = chunks == 1 || omp_in_parallel() ? 1 : threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (int64_t chunk = 0; chunk < chunks; ++chunk)
    task(context, chunk * grain, std::min(chunk * grain + grain, extent));
}
#else
int threads() { return Pool::get().size(); }

void setThreads(int count) { Pool::get().resize(count < 1 ? 1 : count); }

void parallelFor(int64_t extent, int64_t grain, ChunkTask task,
                 void *context) {
  if (extent <= 0)
    return;
  if (grain < 1)
    grain = 1;
  if (extent <= grain) {
    task(context, 0, extent);
    return;
  }
  Job job;
  job.task = task;
  job.context = context;
  job.extent = extent;
  job.grain = grain;
  job.chunks = (extent + grain - 1) / grain;
  Pool::get().run(job);
}
#endif

} // namespace gacc::rt

extern "C" void gacc_cpu_parallel_for(gacc::rt::ChunkTask task, void *context,
                                      int64_t extent, int64_t grain) {
  gacc::rt::parallelFor(extent, grain, task, context);
}
