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
