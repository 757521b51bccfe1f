# Compiler flags shared by every target of the project.
add_library(wb_compile_options INTERFACE)
target_compile_options(wb_compile_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
if(WB_NATIVE)
  # The hot loops (matvec, attention, norms) rely on the compiler vectorising for the host's SIMD.
  target_compile_options(wb_compile_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()
if(WB_SANITIZE)
  target_compile_options(wb_compile_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(wb_compile_options INTERFACE -fsanitize=address,undefined)
endif()
if(WB_FUZZ)
  # Every engine object gets libFuzzer's coverage hooks (fuzzer-no-link: the fuzzer's main() is linked
  # into the fuzz targets only) and aborts on the first ASan or UBSan report, so a finding is a crash
  # libFuzzer saves as an input, not a line of log.
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "WB_FUZZ=ON needs clang (-DCMAKE_CXX_COMPILER=clang++): libFuzzer is part of clang")
  endif()
  target_compile_options(wb_compile_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g>)
  target_link_options(wb_compile_options INTERFACE -fsanitize=address,undefined)
endif()
