/* peerreduce C API: allreduce across the GPUs of one node.
 *
 * Valid C11 and C++; the functions have C linkage. Every function returns a prResult_t; on failure
 * prGetLastError() gives the full message (what, where, what to do) and prGetErrorString() a short name.
 * Communicators on the simulator are made by the functions of peerreduce/peerreduce_sim.h.
 *
 * Ownership:
 * - Each communicator is ended by its own prCommDestroy().
 * - Buffers passed to prAllReduce() stay the caller's; they must stay valid, and must not be touched,
 *   until the operation is complete (prCommSynchronize() or prSimWorldRun() returned).
 * - Strings returned by prGetErrorString() are static. The one returned by prGetLastError() belongs to
 *   the calling thread and stays valid until that thread's next peerreduce call.
 *
 * Errors:
 * - A NULL handle or out-pointer, an unknown enum value or any other bad argument gives
 *   prInvalidArgument, and nothing has changed: no buffer, no state, no out-pointer, except that the
 *   handle out-pointers of the create functions (*world, *comm, comms[]) are set to NULL on any failure.
 * - No C++ exception crosses this API.
 * - Successful calls leave prGetLastError() unchanged: check the result first.
 *
 * Thread safety:
 * - One thread at a time per communicator; different communicators (ranks) may be used from different
 *   threads at the same time. prCommInitSimRank() and prCommSynchronize() are collective on the
 *   simulator: every rank's thread must call them.
 * - prSimWorldRun() from one thread, while no rank is inside prCommSynchronize().
 * - prGetLastError() is per thread: a failure on one thread never changes another thread's message.
 *
 * Example (a simulated world of 4 ranks driven from one thread; error checks shortened):
 *
 *   #include "peerreduce/peerreduce_sim.h"
 *   prSimWorld_t world;
 *   prComm_t comms[4];
 *   float data[4][256];                                  // rank r's input, reduced in place
 *   if (prSimWorldCreate(4, 7, &world) != prSuccess ||
 *       prCommInitSimAll(world, NULL, comms) != prSuccess) {
 *     fprintf(stderr, "%s\n", prGetLastError());
 *     return 1;
 *   }
 *   for (int r = 0; r < 4; ++r) prAllReduce(data[r], data[r], 256, prFloat32, prSum, comms[r], NULL);
 *   prSimWorldRun(world);                                // runs what every rank submitted
 *   for (int r = 0; r < 4; ++r) prCommDestroy(comms[r]);
 *   prSimWorldDestroy(world);
 */
#ifndef PEERREDUCE_PEERREDUCE_H_
#define PEERREDUCE_PEERREDUCE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
/* The functions never throw; saying so lets C++ callers rely on it. */
#define PEERREDUCE_NOEXCEPT noexcept
extern "C" {
#else
#define PEERREDUCE_NOEXCEPT
#endif

/* prNum... is the number of valid values (0 .. prNum...-1), for loops; it is not a valid value itself.
 * Each enum also ends with ..._MinEnum_ and ..._MaxEnum_, never valid either. They keep the type
 * int-sized (a stable ABI) and, in C++, make every int a value of the type, so that an unknown value is
 * reported (prInvalidArgument, or "unknown result") rather than being undefined behaviour. */

/* Same numbers as peerreduce::ErrorCode (peerreduce/status.h). */
typedef enum {
  prSuccess = 0,
  prInvalidArgument = 1, /* the caller passed something wrong; nothing was changed */
  prOutOfMemory = 2,     /* a pool or quota is exhausted; the message names the setting to change */
  prTimeout = 3,         /* a bounded wait expired; the message names rank, peer and step */
  prRemoteError = 4,     /* a peer reported an error of its own */
  prPeerLost = 5,        /* a peer crashed or left */
  prLinkDown = 6,        /* a link between two ranks stopped working */
  prAborted = 7,         /* the communicator was aborted; recreate it */
  prUnsupported = 8,     /* a valid request this build or platform cannot do */
  prInternalError = 9,   /* a bug in peerreduce; please report it with the message */
  prUnavailable = 10,    /* a resource (device, peer access, bootstrap) is not there */
  prMismatch = 11,       /* ranks disagree (count, dtype, op, configuration, world size); after an
                          * operation's mismatch the communicators must be recreated (sticky). Ranks of
                          * one machine compare every operation before it is launched (collective,
                          * count, dtype, op, root; PEERREDUCE_CHECK_OPERATIONS=0 turns it off): the rank
                          * that finds the difference gets it at its call, a rank whose operation was
                          * launched at its synchronize once its wait ends */
  prCorrupt = 12,        /* a message or handle received from a peer is malformed */
  prNumResults = 13,
  prResult_MinEnum_ = -0x7fffffff - 1,
  prResult_MaxEnum_ = 0x7fffffff
} prResult_t;

/* Same numbers as peerreduce::DataType (peerreduce/types.h). fp16 and bf16 accumulate in fp32. The 8-bit
 * floats are the OCP FP8 formats (NCCL's ncclFloat8e4m3 and ncclFloat8e5m2, 10 and 11 there too) and
 * accumulate in fp8: each pairwise step computes in fp32 and rounds to nearest even back to fp8; e4m3
 * saturates at +-448, e5m2 overflows to infinity (peerreduce/types.h). */
typedef enum {
  prInt8 = 0,
  prUint8 = 1,
  prInt32 = 2,
  prUint32 = 3,
  prInt64 = 4,
  prUint64 = 5,
  prFloat16 = 6,
  prBFloat16 = 7,
  prFloat32 = 8,
  prFloat64 = 9,
  prFloat8e4m3 = 10,
  prFloat8e5m2 = 11,
  prNumDataTypes = 12,
  prDataType_MinEnum_ = -0x7fffffff - 1,
  prDataType_MaxEnum_ = 0x7fffffff
} prDataType_t;

/* Same numbers as peerreduce::ReduceOp. Integer sum/prod wrap. prAvg is NCCL's average: integers divide
 * the wrapped sum by the world size (truncating toward zero); floating types premultiply every input
 * element by 1/nranks (rounded to the type, as NCCL's ncclAvg) and sum the products, with no division at
 * the end, so the average of finite values whose sum would overflow stays finite (peerreduce/types.h). */
typedef enum {
  prSum = 0,
  prProd = 1,
  prMin = 2,
  prMax = 3,
  prAvg = 4,
  prNumRedOps = 5,
  prRedOp_MinEnum_ = -0x7fffffff - 1,
  prRedOp_MaxEnum_ = 0x7fffffff
} prRedOp_t;

/* Same numbers as peerreduce::Algorithm. prAlgoAuto lets the cost model choose per message size. */
typedef enum {
  prAlgoAuto = 0,
  prAlgoOneShot = 1,
  prAlgoTwoShot = 2,
  prAlgoRing = 3,
  prAlgoRecursiveDoubling = 4,
  prAlgoRabenseifner = 5,
  prAlgoTree = 6,
  prAlgoCopyEngineTwoShot = 7, /* only when forced, until measured */
  prAlgoUser = 8,              /* a plan file (PEERREDUCE_PLAN_FILE); reported, never forced */
  prNumAlgorithms = 9,
  prAlgorithm_MinEnum_ = -0x7fffffff - 1,
  prAlgorithm_MaxEnum_ = 0x7fffffff
} prAlgorithm_t;

/* Same numbers as peerreduce::Collective. */
typedef enum {
  prCollAllReduce = 0,
  prCollReduceScatter = 1,
  prCollAllGather = 2,
  prCollBroadcast = 3,
  prNumCollectives = 4,
  prCollective_MinEnum_ = -0x7fffffff - 1,
  prCollective_MaxEnum_ = 0x7fffffff
} prCollective_t;

/* One rank's communicator. */
typedef struct prComm* prComm_t;

/* Capacities of prConfig_t's text fields, the terminating NUL included: every value the settings accept
 * fits (docs/SETTINGS.md). PR_CONFIG_LINK_MASK_BYTES bytes also hold any value prConfigGet() returns. */
#define PR_CONFIG_LINK_MASK_BYTES 16385 /* PEERREDUCE_LINK_MASK: at most 16384 characters */
#define PR_CONFIG_PATH_BYTES 4096       /* PEERREDUCE_TUNING_FILE: at most 4095 characters */

/* Communicator settings: every field of the C++ peerreduce::Config, each the value of one PEERREDUCE_*
 * setting (docs/SETTINGS.md). Every rank of a world must use the same ones (creation fails with
 * prMismatch otherwise). A plain struct: put it on the stack, fill it with prConfigInit(), then change
 * fields directly or by setting name with prConfigSet(). A communicator created with it means exactly
 * what one created with a NULL config means when the environment is the same as at prConfigInit(). */
typedef struct {
  size_t struct_size;           /* set by prConfigInit(): the size of prConfig_t the caller was built with */
  int algorithm;                /* PEERREDUCE_ALGO: a prAlgorithm_t value */
  int64_t timeout_ms;           /* PEERREDUCE_TIMEOUT_MS: bound on every wait of an operation, 1 .. 86400000 */
  int64_t bootstrap_timeout_ms; /* PEERREDUCE_BOOTSTRAP_TIMEOUT_MS: least bound on waits at creation */
  size_t scratch_bytes;         /* PEERREDUCE_SCRATCH_BYTES: scratch memory per rank, 64 KiB .. 64 GiB */
  int verify_plans;             /* PEERREDUCE_VERIFY_PLANS: nonzero runs the plan verifier at creation */
  size_t pool_bytes;            /* PEERREDUCE_POOL_BYTES: symmetric memory per rank */
  size_t pool_quota_bytes;      /* PEERREDUCE_POOL_QUOTA_BYTES: 0 = no quota */
  size_t pool_alignment_bytes;  /* PEERREDUCE_POOL_ALIGNMENT */
  double pool_defrag_threshold; /* PEERREDUCE_POOL_DEFRAG_THRESHOLD: 0 .. 1 */
  size_t pinned_limit_bytes;    /* PEERREDUCE_PINNED_LIMIT_BYTES */
  char link_mask[PR_CONFIG_LINK_MASK_BYTES]; /* PEERREDUCE_LINK_MASK, NUL-terminated; "" = none */
  char tuning_file[PR_CONFIG_PATH_BYTES];    /* PEERREDUCE_TUNING_FILE, NUL-terminated; "" = the built-in table */
  int reduce_scatter_algorithm; /* PEERREDUCE_ALGO_REDUCE_SCATTER: a prAlgorithm_t value; 0 (auto) = algorithm's */
  int all_gather_algorithm;     /* PEERREDUCE_ALGO_ALL_GATHER: likewise */
  int broadcast_algorithm;      /* PEERREDUCE_ALGO_BROADCAST: likewise */
  int device; /* PEERREDUCE_DEVICE: the GPU of a communicator on GPUs: PR_DEVICE_CURRENT (the default: the
                 device current on the creating thread, NCCL's rule), PR_DEVICE_OF_LOCAL_RANK (the rank's
                 position among its machine's ranks modulo the visible devices, for programs that never
                 choose one), or a device ordinal. The library never changes the caller's current device. */
  char plan_file[PR_CONFIG_PATH_BYTES]; /* PEERREDUCE_PLAN_FILE, NUL-terminated; "" = none (docs/PLANS.md) */
  size_t plan_min_bytes;                /* PEERREDUCE_PLAN_MIN_BYTES: smallest size the plan file runs */
  size_t plan_max_bytes;                /* PEERREDUCE_PLAN_MAX_BYTES: exclusive bound; 0 = none */
  int check_operations; /* PEERREDUCE_CHECK_OPERATIONS: nonzero (the default) compares every operation with the
                           other ranks' of this machine before it is launched (prMismatch when they differ) */
} prConfig_t;
#define PR_DEVICE_CURRENT (-1)
#define PR_DEVICE_OF_LOCAL_RANK (-2)

/* Fills *config with the defaults, overridden by every PEERREDUCE_* variable a communicator reads (the
 * same as a NULL config reads at creation), and sets config->struct_size. A malformed variable gives
 * prInvalidArgument naming it, and *config is left unchanged. `struct_size` is sizeof(prConfig_t) as the
 * caller sees it, so that a later library with a larger prConfig_t writes only the fields the caller has:
 * call prConfigInit(), which passes it. */
prResult_t prConfigInitSized(prConfig_t* config, size_t struct_size) PEERREDUCE_NOEXCEPT;
/* sizeof(prConfig_t) in this library: for bindings that hold the struct as bytes (ctypes) and pass it
 * to prConfigInitSized. */
size_t prConfigSize(void) PEERREDUCE_NOEXCEPT;
static inline prResult_t prConfigInit(prConfig_t* config) PEERREDUCE_NOEXCEPT {
  return prConfigInitSized(config, sizeof(prConfig_t));
}
/* Sets the field of setting `name` (the variable, e.g. "PEERREDUCE_POOL_BYTES") from `value`, parsed and
 * range-checked exactly as the environment variable would be ("" clears the link mask or the tuning file
 * and is refused elsewhere). prInvalidArgument naming the setting, the value and what is accepted, and
 * *config unchanged, for an unknown name, a setting that is not a field here (PEERREDUCE_GPU_*,
 * PEERREDUCE_DEBUG: set those in the environment), or a bad value. Rules between settings (a pool quota
 * within the pool) are checked when a communicator is created. */
prResult_t prConfigSet(prConfig_t* config, const char* name, const char* value) PEERREDUCE_NOEXCEPT;
/* Writes the value of setting `name` in *config as NUL-terminated text into value[0 .. value_size):
 * decimal numbers (bytes in bytes), the algorithm's name, 1 or 0, the text fields as they are. What
 * prConfigSet() reads back as the same value. prInvalidArgument, and nothing written, for an unknown name
 * or a buffer too small (the message says how many bytes are needed; PR_CONFIG_LINK_MASK_BYTES always
 * suffice). */
prResult_t prConfigGet(const prConfig_t* config, const char* name, char* value, size_t value_size) PEERREDUCE_NOEXCEPT;

/* How the ranks of a world find each other at creation (and in recovery): the application's own
 * rendezvous given as callbacks, MPI (prBootstrapFromMpi, peerreduce/peerreduce_mpi.h), or a simulated
 * world's (prSimWorldBootstrap, peerreduce/peerreduce_sim.h). Never used on the allreduce path. */
typedef struct prBootstrap* prBootstrap_t;

/* The application's rendezvous. all_gather is required: every rank contributes `bytes` bytes from
 * `sendbuf`; `recvbuf` (nranks x bytes) receives rank r's block at offset r x bytes; it sets *gathered to
 * the bytes it delivered and returns 0, or a nonzero code of its own on failure. It should give up after
 * timeout_ms (the communicator's timeout). barrier is optional (NULL: an all_gather is used). Callbacks
 * run on a peerreduce thread, one at a time, while the calling thread waits; one that has not returned
 * timeout_ms (plus a short grace) after it was called is abandoned and creation fails with prTimeout.
 * Every block travels in a frame peerreduce checks, so a callback that delivers the wrong number of
 * bytes, blocks out of order, or blocks of ranks with another nranks gives a typed error naming them.
 * `context` is passed back to every callback; `name` (may be NULL) names the bootstrap in errors. */
typedef struct {
  int (*all_gather)(void* context, const void* sendbuf, void* recvbuf, size_t bytes, size_t* gathered,
                    int64_t timeout_ms);
  int (*barrier)(void* context, int64_t timeout_ms);
  void* context;
  const char* name;
} prBootstrapCallbacks_t;

/* Makes rank `rank` of `nranks`'s bootstrap from callbacks (copied; the context must outlive the
 * bootstrap and every communicator made with it). prInvalidArgument for a missing all_gather or a rank
 * outside 0..nranks-1; *bootstrap is NULL on failure. */
prResult_t prBootstrapCreate(int nranks, int rank, const prBootstrapCallbacks_t* callbacks,
                             prBootstrap_t* bootstrap) PEERREDUCE_NOEXCEPT;
/* Ends a bootstrap. Communicators made with it keep what they need; destroy it whenever convenient. */
prResult_t prBootstrapDestroy(prBootstrap_t bootstrap) PEERREDUCE_NOEXCEPT;

/* Creates rank `rank` of `nranks`'s communicator. Collective: every rank calls it with the same nranks
 * and config. The bootstrap decides where it runs: a simulated world's bootstrap makes a communicator on
 * that world; any other makes one on a GPU: config's device (prConfig_t.device), by default the device
 * current on the calling thread, as NCCL's (PR_DEVICE_OF_LOCAL_RANK: the rank's position among the ranks
 * on the same host modulo the visible devices). The library never changes the caller's current device,
 * and refuses a buffer that is not memory of the communicator's device. On a machine without a GPU or
 * driver this is prUnavailable. config NULL means prConfigInit()'s settings. *comm is NULL on failure,
 * and nothing is left half-created. */
prResult_t prCommInitRank(prComm_t* comm, int nranks, int rank, prBootstrap_t bootstrap,
                          const prConfig_t* config) PEERREDUCE_NOEXCEPT;

/* One process, several GPUs, one thread (NCCL's ncclCommInitAll): comms[i] becomes rank i of a world of
 * `ndev` ranks, on device devlist[i] (devlist NULL: devices 0..ndev-1; each device at most once). The
 * ranks meet inside the process; each is created on a thread of its own and the call returns when every
 * one is made, or with none (every comms[i] NULL) and the first failing rank's error. config NULL means
 * prConfigInit()'s settings; its device field is replaced by each rank's device. The caller's current
 * device is left as it was. Drive the communicators from any thread: enqueue every rank's call of a
 * collective (each on a stream of its device) before synchronizing any of them, since each rank's work
 * waits for the others'. prCommDestroy each. */
prResult_t prCommInitAll(prComm_t* comms, int ndev, const int* devlist, const prConfig_t* config) PEERREDUCE_NOEXCEPT;

/* The color of a rank that takes part in prCommSplit but joins no new communicator (NCCL_SPLIT_NOCOLOR). */
#define PR_SPLIT_NOCOLOR (-1)
/* Splits `comm` as NCCL's ncclCommSplit: the ranks that pass the same `color` (0 or more) form one new
 * communicator, ranked by `key` (equal keys: by rank in `comm`); a rank passing PR_SPLIT_NOCOLOR gets
 * *newcomm = NULL. Collective over every rank of `comm`, at the same point of each rank's sequence of
 * collective calls (each rank on a thread of its own when one thread drives several), PR_SPLIT_NOCOLOR ranks
 * included: every rank returns once every new communicator is made or failed, each wait bounded by the
 * parent's bootstrap timeout.
 * Where the new communicators run: where `comm` runs. A simulated parent's children run each on a simulated
 * world of its own (seeded from the parent's seed and the color, with the links the parent has between
 * the members), completed by prCommSynchronize from each of its ranks (there is no prSimWorld_t to run); a
 * parent on GPUs gives children on GPUs, each rank on the parent's device unless config->device names one
 * (0 or more; PR_DEVICE_CURRENT and PR_DEVICE_OF_LOCAL_RANK keep the parent's). config NULL means the
 * parent's settings; ranks of one child must pass the same (prMismatch otherwise).
 * Lifetime: the children need nothing of `comm` once this returns: destroy the parent, or its bootstrap,
 * whenever convenient, and use the parent and the children independently afterwards. A child on GPUs meets
 * its ranks through the parent's bootstrap during this call only, so a later collective of its bootstrap
 * (prCommRegisterBuffer) is prUnsupported on it; a simulated child has a bootstrap of its own.
 * Errors (*newcomm NULL on every failure): prInvalidArgument for a NULL or dead comm, a NULL newcomm, a
 * negative color other than PR_SPLIT_NOCOLOR, or a bad config; every other rank then gets prRemoteError
 * naming the rank that refused (NULL or dead comm excepted: such a rank cannot tell the others, who time
 * out naming it). prAborted on an aborted comm. prMismatch when a rank of `comm` called another collective
 * instead, or ranks of one child disagree about its settings; prUnavailable when another member of this
 * rank's child failed (that rank's error says why); prTimeout naming the missing ranks. */
prResult_t prCommSplit(prComm_t comm, int color, int key, prComm_t* newcomm,
                       const prConfig_t* config) PEERREDUCE_NOEXCEPT;

/* Reduces `count` elements of `datatype` with `op` across every rank; every rank gets the same bits in
 * recvbuff. sendbuff == recvbuff is in place; otherwise the buffers must not overlap, and both must be
 * aligned to the element size. Every rank calls it with the same count, datatype and op, in the same
 * order. It enqueues the work on `stream` (a hipStream_t / cudaStream_t; ignored by the simulator) and
 * returns; prCommSynchronize() (or prSimWorldRun()) completes it. count 0 does nothing. */
prResult_t prAllReduce(const void* sendbuff, void* recvbuff, size_t count, prDataType_t datatype, prRedOp_t op,
                       prComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
/* One buffer of prAllReduceBatch: like prAllReduce's sendbuff, recvbuff and count. */
typedef struct {
  const void* sendbuff;
  void* recvbuff;
  size_t count;
} prBatchItem_t;
/* Reduces every item as prAllReduce would, with the same datatype and op, in as few operations as it
 * can (on GPUs one kernel launch for up to 64 small items): the way to reduce many small tensors. Items
 * reduced together must not overlap each other. At most 1024 items per call; every item is checked
 * before anything is enqueued. nitems 0 does nothing. */
prResult_t prAllReduceBatch(const prBatchItem_t* items, size_t nitems, prDataType_t datatype, prRedOp_t op,
                            prComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
/* The other collectives, with NCCL's buffer semantics; enqueued on `stream` like prAllReduce, checked
 * before anything is touched, and count 0 does nothing. Every rank calls them with the same counts,
 * datatype, op and root, in the same order as its other operations.
 * prReduceScatter: sendbuff holds nranks x recvcount elements; block b of every rank's sendbuff, reduced
 * with `op` (prAvg: NCCL's average, as prAllReduce's), lands in rank b's recvbuff (recvcount elements). In place when
 * recvbuff == sendbuff + rank x recvcount elements; otherwise the buffers must not overlap. */
prResult_t prReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, prDataType_t datatype, prRedOp_t op,
                           prComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
/* prAllGather: rank b's sendbuff (sendcount elements) lands in block b of every rank's recvbuff (nranks x
 * sendcount elements). In place when sendbuff == recvbuff + rank x sendcount elements. */
prResult_t prAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, prDataType_t datatype, prComm_t comm,
                       void* stream) PEERREDUCE_NOEXCEPT;
/* prBroadcast: the root's sendbuff (count elements) lands in every rank's recvbuff. sendbuff is read on
 * the root only (NULL elsewhere is fine); in place when sendbuff == recvbuff. */
prResult_t prBroadcast(const void* sendbuff, void* recvbuff, size_t count, prDataType_t datatype, int root,
                       prComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
/* Waits, bounded by the configured timeout, until everything enqueued on `stream` is done, and returns
 * the error it ended with. On the simulator every rank must call it (it is collective). */
prResult_t prCommSynchronize(prComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
/* The first error an enqueued operation of `comm` ended with, or prSuccess. Does not block. */
prResult_t prCommGetAsyncError(prComm_t comm) PEERREDUCE_NOEXCEPT;
/* Ends every wait of `comm` promptly and makes every later call on it return prAborted, writing nothing.
 * Safe from any thread and when every rank aborts at once; destroy the communicator afterwards. */
prResult_t prCommAbort(prComm_t comm) PEERREDUCE_NOEXCEPT;
/* Ends a communicator; complete its operations first. */
prResult_t prCommDestroy(prComm_t comm) PEERREDUCE_NOEXCEPT;
prResult_t prCommRank(prComm_t comm, int* rank) PEERREDUCE_NOEXCEPT;
prResult_t prCommSize(prComm_t comm, int* size) PEERREDUCE_NOEXCEPT;
/* The GPU the communicator uses (prConfig_t.device resolved at creation); -1 on the simulator and for a
   transport the application's bootstrap made. */
prResult_t prCommDevice(prComm_t comm, int* device) PEERREDUCE_NOEXCEPT;

/* Statistics of a communicator's symmetric memory pool (docs/MEMORY.md); the same on every rank. */
typedef struct {
  uint64_t capacity_bytes; /* the pool: PEERREDUCE_POOL_BYTES */
  uint64_t quota_bytes;    /* limit on bytes_in_use: PEERREDUCE_POOL_QUOTA_BYTES, or the capacity */
  uint64_t bytes_in_use;
  uint64_t peak_bytes_in_use;
  uint64_t live_blocks;
  uint64_t allocations;        /* successful, since creation */
  uint64_t failed_allocations; /* refused for lack of memory, since creation */
  uint64_t free_blocks;
  uint64_t largest_free_block_bytes;
  double fragmentation;      /* 1 - largest free block / free bytes; 0 when nothing is free */
  uint64_t defragmentations; /* compaction passes run */
  uint64_t blocks_moved;
  uint64_t bytes_moved;
} prMemoryStats_t;
/* Fills *stats with the pool's statistics now. Does not block and changes nothing. */
prResult_t prCommMemoryStats(prComm_t comm, prMemoryStats_t* stats) PEERREDUCE_NOEXCEPT;

/* Profiling (peerreduce/profiler.h): off until enabled; keeps the most recent `capacity` operations
 * (1 .. 1048576, else prInvalidArgument; prUnsupported where the transport cannot time). Enabling again
 * starts afresh. Not collective. */
prResult_t prCommEnableProfiling(prComm_t comm, size_t capacity) PEERREDUCE_NOEXCEPT;
prResult_t prCommDisableProfiling(prComm_t comm) PEERREDUCE_NOEXCEPT;
/* Over the operations held; times in microseconds (real time on GPUs, virtual on the simulator). An
 * operation is timed once it finished; failed ones never are. */
typedef struct {
  uint64_t operations; /* records held */
  uint64_t timed;
  uint64_t dropped; /* older records overwritten */
  uint64_t bytes;   /* of the timed operations */
  double total_us;
  double min_us;
  double median_us;
  double max_us;
  double busbw_gbps; /* 2(n-1)/n x bytes / total time */
} prProfileSummary_t;
/* Fills *summary; prUnavailable (summary untouched) while profiling is off. */
prResult_t prCommProfileSummary(prComm_t comm, prProfileSummary_t* summary) PEERREDUCE_NOEXCEPT;

/* Recovery (peerreduce/recovery.h): after a failure every rank aborts (prCommAbort), asks its failure
 * detector (prCommFailureReport), the ranks agree on what failed (prCommAgreeOnFailures, over a
 * bootstrap that still connects every rank of the old world), and the survivors shrink
 * (prCommShrink). Rank sets are bit masks: bit r stands for rank r (at most 64 ranks). */
#define PR_MAX_RANKS 64
typedef struct {
  int rank;                          /* whose report */
  uint64_t lost_ranks;               /* ranks it stopped hearing from; its own bit when it failed */
  uint64_t dead_links[PR_MAX_RANKS]; /* bit b of dead_links[a]: the link a-b stopped working */
} prFailureReport_t;
typedef struct {
  int rank;
  uint64_t survivors;                /* the group that goes on (lacks `rank` when it was declared failed) */
  uint64_t failed;                   /* every other rank of the old world */
  uint64_t dead_links[PR_MAX_RANKS]; /* among survivors, both directions set */
  int rounds;                        /* rounds of the agreement until this rank's knowledge stopped growing */
} prFailureDecision_t;
/* What this rank's failure detector saw. Does not block; valid after prCommAbort. */
prResult_t prCommFailureReport(prComm_t comm, prFailureReport_t* report) PEERREDUCE_NOEXCEPT;
/* Collective over `bootstrap` (the old world's, or one connecting the same ranks): every rank contributes
 * its report; every rank gets its decision. Bounded by timeout_ms (prTimeout naming the missing ranks). */
prResult_t prCommAgreeOnFailures(prComm_t comm, prBootstrap_t bootstrap, const prFailureReport_t* mine,
                                 int64_t timeout_ms, prFailureDecision_t* decision) PEERREDUCE_NOEXCEPT;
/* Collective over the survivors: the communicator of the shrunk world, on the survivors' bootstrap
 * (new_bootstrap: rank = position in the survivors, nranks = their number). prPeerLost when the decision
 * declared this rank failed. The old communicator stays valid (aborted) until destroyed. */
prResult_t prCommShrink(prComm_t comm, const prFailureDecision_t* decision, prBootstrap_t new_bootstrap,
                        prComm_t* newcomm) PEERREDUCE_NOEXCEPT;

/* What prAllReduce would choose for `count` elements of `datatype`, and why. */
#define PR_MAX_CANDIDATES 16
typedef struct {
  int algorithm;       /* a prAlgorithm_t value */
  double predicted_us; /* the cost model's prediction */
  int segments;        /* pieces the operation is split into to fit the scratch */
  char plan[96];       /* the variant ("ring over 0-2-1-3"), cut to fit */
} prCandidate_t;
typedef struct {
  int chosen;      /* a prAlgorithm_t value */
  int forced;      /* nonzero: by the configuration (PEERREDUCE_ALGO) */
  int tuned;       /* nonzero: by the tuning table rather than the cost model */
  char plan[96];   /* the chosen variant, cut to fit */
  int ncandidates; /* candidates[0 .. ncandidates-1], cheapest first (at most PR_MAX_CANDIDATES) */
  prCandidate_t candidates[PR_MAX_CANDIDATES];
} prSelection_t;
prResult_t prCommExplainSelection(prComm_t comm, size_t count, prDataType_t datatype,
                                  prSelection_t* selection) PEERREDUCE_NOEXCEPT;
/* What `collective` would choose for `count` elements per rank's block (prReduceScatter's recvcount,
 * prAllGather's sendcount, prBroadcast's and prAllReduce's count) of `datatype`, broadcast from `root` (the
 * other collectives ignore it, but it must be a rank). Builds and prepares the collective's plans if no
 * call did yet (for broadcast, the root's), as its first call would, locally: nothing is exchanged. So a
 * binding can make a later first call, inside CUDA graph capture too, do no setup. */
prResult_t prCommExplainCollective(prComm_t comm, prCollective_t collective, size_t count, prDataType_t datatype,
                                   int root, prSelection_t* selection) PEERREDUCE_NOEXCEPT;

/* The communicator's pinned host memory (docs/MEMORY.md), which host-staged paths use. */
typedef struct {
  uint64_t limit_bytes;  /* PEERREDUCE_PINNED_LIMIT_BYTES */
  uint64_t bytes_pinned; /* held from the system now: in use + idle */
  uint64_t peak_bytes_pinned;
  uint64_t bytes_in_use;
  uint64_t bytes_idle; /* cached for reuse, evictable */
  uint64_t blocks_in_use;
  uint64_t blocks_idle;
  uint64_t acquisitions;       /* successful acquisitions */
  uint64_t reuses;             /* acquisitions served by an idle block */
  uint64_t system_allocations; /* acquisitions that took new memory from the system */
  uint64_t evictions;          /* idle blocks returned to the system */
  uint64_t bytes_evicted;
  uint64_t failures;     /* acquisitions refused (limit or system) */
  uint64_t bytes_staged; /* bytes asked for by the acquisitions: host-staged links' traffic */
} prPinnedStats_t;
prResult_t prCommPinnedStats(prComm_t comm, prPinnedStats_t* stats) PEERREDUCE_NOEXCEPT;

/* Buffer registration: [ptr, ptr + bytes) of every rank made reachable by its peers (collective; every
 * rank registers at the same point of its call sequence). The handle is the caller's until
 * prCommDeregisterBuffer (collective) ends it; a communicator's registrations end with it. */
typedef struct prRegisteredBuffer* prRegisteredBuffer_t;
prResult_t prCommRegisterBuffer(prComm_t comm, const void* ptr, size_t bytes,
                                prRegisteredBuffer_t* buffer) PEERREDUCE_NOEXCEPT;
prResult_t prCommDeregisterBuffer(prComm_t comm, prRegisteredBuffer_t buffer) PEERREDUCE_NOEXCEPT;

/* Communicators that span machines (docs/MULTI_MACHINE.md): the ranks of several machines, peer memory
 * inside each machine and a network between them. Made by prMultiCommInitSimRank / prMultiCommInitSimAll
 * (peerreduce/peerreduce_sim.h) on simulated machines; ended by prMultiCommDestroy. Counts, buffers and
 * in-place forms are those of the one-machine calls above, over the world's ranks. Every call runs its
 * steps on the host one after another (the step between machines needs the machine's result), so each
 * rank needs a thread of its own; prMultiCommSynchronize completes what a call left enqueued (allreduce's,
 * broadcast's and all-gather's last step inside the machine; a reduce-scatter is complete when it returns).
 * Errors as above; integer avg is prUnsupported; a fault between machines fails every rank's call with a
 * typed error naming the machine or the network link. */
typedef struct prMultiComm* prMultiComm_t;
/* How a collective crosses machines: the cost model's choice per size (auto), or forced. */
typedef enum {
  prStrategyAuto = 0,
  prStrategyHierarchical = 1, /* reduce inside each machine, then between machines: each NIC carries 1/K */
  prStrategyFlat = 2,         /* the whole data crosses the network: fewer steps, K times the network bytes */
  prNumStrategies = 3,
  prStrategy_MinEnum_ = -0x7fffffff - 1,
  prStrategy_MaxEnum_ = 0x7fffffff
} prMachineStrategy_t;
prResult_t prMultiAllReduce(const void* sendbuff, void* recvbuff, size_t count, prDataType_t datatype, prRedOp_t op,
                            prMachineStrategy_t strategy, prMultiComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
prResult_t prMultiReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, prDataType_t datatype,
                                prRedOp_t op, prMachineStrategy_t strategy, prMultiComm_t comm,
                                void* stream) PEERREDUCE_NOEXCEPT;
prResult_t prMultiAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, prDataType_t datatype,
                            prMachineStrategy_t strategy, prMultiComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
prResult_t prMultiBroadcast(const void* sendbuff, void* recvbuff, size_t count, prDataType_t datatype, int root,
                            prMultiComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
prResult_t prMultiCommSynchronize(prMultiComm_t comm, void* stream) PEERREDUCE_NOEXCEPT;
/* Ends every wait of `comm` (its machine's and the network's) promptly and makes every later call on it
 * return prAborted at once, writing nothing (as prCommAbort). Safe from any thread; destroy it afterwards. */
prResult_t prMultiCommAbort(prMultiComm_t comm) PEERREDUCE_NOEXCEPT;
prResult_t prMultiCommDestroy(prMultiComm_t comm) PEERREDUCE_NOEXCEPT;
/* Where this rank sits: its world rank and size, the number of machines and of ranks per machine, its
 * machine and its local rank there. */
typedef struct {
  int rank;
  int size;
  int machines;
  int ranks_per_machine;
  int machine;
  int local_rank;
} prMachineLayout_t;
prResult_t prMultiCommLayout(prMultiComm_t comm, prMachineLayout_t* layout) PEERREDUCE_NOEXCEPT;

/* The loaded library's version as one integer, major * 10000 + minor * 100 + patch (what
 * PEERREDUCE_VERSION_CODE of peerreduce/version.h is for the headers compiled against). */
prResult_t prGetVersion(int* version) PEERREDUCE_NOEXCEPT;

/* The GPU platform the loaded library was built for: "cuda", "hip", or "none" (a build for the simulator and
 * CPU-only use, in which a communicator on a GPU cannot be made: build with the release-cuda or release-hip
 * preset). *platform is a static string. The check after installing: "none" means the wrong build. */
prResult_t prGetGpuPlatform(const char** platform) PEERREDUCE_NOEXCEPT;

/* Short static name of a result ("success", "invalid argument", ...); "unknown result" for other values. */
const char* prGetErrorString(prResult_t result) PEERREDUCE_NOEXCEPT;
/* The full message of the last failing peerreduce call on this thread, or "" if none has failed. */
const char* prGetLastError(void) PEERREDUCE_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PEERREDUCE_PEERREDUCE_H_ */
