/* peerreduce's simulator from C: a deterministic world of virtual GPUs in host memory, and communicators
 * over it. Declared here, defined in the peerreduce_sim library (link peerreduce::sim); the rest of the C
 * API is peerreduce/peerreduce.h, which this header includes.
 *
 * Ownership: prSimWorldCreate() makes a world; prSimWorldDestroy() ends it. prCommInitSimAll() and
 * prCommInitSimRank() make communicators; each is ended by its own prCommDestroy(). The world must
 * outlive its communicators: destroy every communicator of a world before the world.
 *
 * Thread safety: prCommInitSimRank() and prCommSynchronize() are collective on the simulator: every
 * rank's thread must call them. prSimWorldRun() from one thread, while no rank is inside
 * prCommSynchronize().
 */
#ifndef PEERREDUCE_PEERREDUCE_SIM_H_
#define PEERREDUCE_PEERREDUCE_SIM_H_

#include "peerreduce/peerreduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A simulated world of virtual GPUs in host memory. */
typedef struct prSimWorld* prSimWorld_t;

/* Creates a simulated world of nranks (1 .. 64) ranks whose scheduler is seeded with `seed` (the same
 * seed gives the same interleaving on every machine). */
prResult_t prSimWorldCreate(int nranks, uint64_t seed, prSimWorld_t* world) PEERREDUCE_NOEXCEPT;
/* Ends a world. Destroy its communicators first. */
prResult_t prSimWorldDestroy(prSimWorld_t world) PEERREDUCE_NOEXCEPT;
/* Runs everything every rank has submitted, to completion or failure, and returns the first rank
 * error. For a single thread that drives all ranks (instead of every rank calling prCommSynchronize). */
prResult_t prSimWorldRun(prSimWorld_t world) PEERREDUCE_NOEXCEPT;

/* Creates the communicators of every rank of `world` (internally one thread per rank, since creation is
 * collective) into comms[0 .. nranks-1]. `config` NULL means prConfigInit()'s settings; otherwise it is
 * used as given. On failure every comms[i] is NULL. */
prResult_t prCommInitSimAll(prSimWorld_t world, const prConfig_t* config, prComm_t* comms) PEERREDUCE_NOEXCEPT;
/* Creates rank `rank`'s communicator of `world`, for applications with one thread per rank. Collective:
 * every rank's thread calls it with its own rank and the same config (NULL as for prCommInitSimAll).
 * A rank whose arguments are rejected does not take part: the others then fail with prTimeout once the
 * bootstrap bound (the larger of timeout_ms and bootstrap_timeout_ms) has passed, instead of waiting for
 * it forever. */
prResult_t prCommInitSimRank(prSimWorld_t world, int rank, const prConfig_t* config,
                             prComm_t* comm) PEERREDUCE_NOEXCEPT;

/* The bootstrap of rank `rank` of `world`: prCommInitRank with it makes a communicator on the simulated
 * world, the same call that makes one on a GPU with another bootstrap. The world must outlive the
 * communicators made with it; the bootstrap may be destroyed at any time. */
prResult_t prSimWorldBootstrap(prSimWorld_t world, int rank, prBootstrap_t* bootstrap) PEERREDUCE_NOEXCEPT;

/* Makes communicators created with `bootstrap` (from prBootstrapCreate) run on `world`: the application's
 * own rendezvous, tested on the simulator. The ranks must be threads of this process. prInvalidArgument
 * when the bootstrap's world size is not the world's. */
prResult_t prSimWorldAttachBootstrap(prSimWorld_t world, prBootstrap_t bootstrap) PEERREDUCE_NOEXCEPT;

/* Simulated machines (docs/MULTI_MACHINE.md): `machines` machine worlds of `ranks_per_machine` virtual GPUs
 * each and a network between them (400 Gb/s per NIC, 5 us), at most 64 ranks in all; rank r is on machine
 * r / ranks_per_machine. The world must outlive its communicators (prMultiCommDestroy them first). */
typedef struct prMultiSimWorld* prMultiSimWorld_t;
prResult_t prMultiSimWorldCreate(int machines, int ranks_per_machine, uint64_t seed,
                                 prMultiSimWorld_t* world) PEERREDUCE_NOEXCEPT;
prResult_t prMultiSimWorldDestroy(prMultiSimWorld_t world) PEERREDUCE_NOEXCEPT;
/* Creates rank `rank`'s communicator across the simulated machines. Collective: every rank's thread calls
 * it with its own rank and the same config (NULL: prConfigInit()'s settings). A rank whose arguments are
 * rejected does not take part: the others fail with prTimeout once the bootstrap bound has passed. */
prResult_t prMultiCommInitSimRank(prMultiSimWorld_t world, int rank, const prConfig_t* config,
                                  prMultiComm_t* comm) PEERREDUCE_NOEXCEPT;
/* Creates every rank's communicator into comms[0 .. machines x ranks_per_machine - 1] (internally one
 * thread per rank). On failure every comms[i] is NULL. The collectives still need a thread per rank. */
prResult_t prMultiCommInitSimAll(prMultiSimWorld_t world, const prConfig_t* config,
                                 prMultiComm_t* comms) PEERREDUCE_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PEERREDUCE_PEERREDUCE_SIM_H_ */
