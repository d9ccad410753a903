// The oldest nccl.h libpeerreduce_nccl.so compiles against, checked after every #include <nccl.h> of the
// library and its tests, so a build that does not go through CMake is refused as clearly as one that
// does (nccl/CMakeLists.txt reads the two numbers below from this file and checks the header it finds at
// configure time).
//
// 2.28: exports.cc defines every function the library wraps with nccl.h's own declarations
// (nccl_functions.h), and the newest of them came with NCCL 2.28 (ncclCommRevoke, ncclAlltoAll,
// ncclGather, ncclScatter; ncclCommShrink with 2.27, ncclCommInitRankScalable with 2.23,
// ncclGroupSimulateEnd with 2.22). An older header lacks them: the build would fail with errors about
// undeclared functions; with this check its first error says why. The header's version is not the real
// library's: at run time the library loads any NCCL from kRequiredSince (2.12) on.
#pragma once

#define PEERREDUCE_NCCL_MIN_MAJOR 2
#define PEERREDUCE_NCCL_MIN_MINOR 28

#if !defined(NCCL_MAJOR) || !defined(NCCL_MINOR)
#error "nccl/nccl_header_version.h: include <nccl.h> first (it defines NCCL_MAJOR and NCCL_MINOR)"
#elif NCCL_MAJOR < PEERREDUCE_NCCL_MIN_MAJOR || \
    (NCCL_MAJOR == PEERREDUCE_NCCL_MIN_MAJOR && NCCL_MINOR < PEERREDUCE_NCCL_MIN_MINOR)
#error \
    "libpeerreduce_nccl needs nccl.h of NCCL 2.28 or later (the API it defines); set PEERREDUCE_NCCL_INCLUDE_DIR to a newer one"
#endif
