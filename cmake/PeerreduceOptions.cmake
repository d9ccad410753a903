# Compiler flags shared by every peerreduce target: warnings, sanitizers, coverage.
add_library(peerreduce_flags INTERFACE)
target_compile_options(peerreduce_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports false -Wrestrict overlaps inside std::string at -O2/-O3 (GCC bug 105329).
  target_compile_options(peerreduce_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(PEERREDUCE_WERROR)
  target_compile_options(peerreduce_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()

if(PEERREDUCE_SANITIZE)
  # Sanitizers apply to everything built here, so that containers and templates are checked too.
  add_compile_options(-fsanitize=${PEERREDUCE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${PEERREDUCE_SANITIZE})
endif()

if(PEERREDUCE_COVERAGE)
  # Plain (non-atomic) counters: atomic updates made instrumented tests 7x slower, and a count lost to
  # a race between simulator threads never turns a covered line into an uncovered one.
  add_compile_options(--coverage)
  add_link_options(--coverage)
endif()
