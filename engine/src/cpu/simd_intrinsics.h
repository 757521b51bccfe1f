// <immintrin.h> for the CPU kernels, with one GCC 12 false positive silenced for the including file.
//
// GCC 12's AVX-512 intrinsics (_mm512_cvtph_ps, _mm512_cvtepi32_ps, _mm512_inserti64x4,
// _mm512_reduce_add_ps, ...) merge into _mm512_undefined_*() and -Wmaybe-uninitialized then reports
// that value wherever the intrinsic is inlined, i.e. in our code, although it is never read (GCC bug
// 105593, fixed in GCC 13). The pragma is deliberately not popped: the warning is issued at the
// inlining site, anywhere in the rest of the file.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13 && defined(__AVX512F__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(__AVX2__) || defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif
