# Warnings for every kgate target: host code with -Wall -Wextra; the host half of .cu files
# through nvcc's pass-through. nvcc rewrites designated initializers positionally before g++ sees
# them, which makes g++ report every defaulted field as missing; that one warning is off for CUDA.
function(kgate_target_warnings target)
  set(cxx_flags -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic)
  set(cuda_flags -Xcompiler=-Wall,-Wextra,-Wno-missing-field-initializers)
  if(KGATE_WERROR)
    list(APPEND cxx_flags -Werror)
    list(APPEND cuda_flags --Werror=all-warnings)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${cxx_flags}>
    $<$<COMPILE_LANGUAGE:CUDA>:${cuda_flags}>)
endfunction()
