/*===- c_api.h - compile a trainer from C, in-process -------------*- C -*-===*
 *
 * The JIT's C entry point, beside the runtime's C API (gacc/runtime/c_api.h),
 * which drives the trainer it returns. It lives in the compiler's library
 * (GaccCompiler): a program that only opens artifacts links the runtime
 * alone.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GACC_COMPILER_JIT_C_API_H
#define GACC_COMPILER_JIT_C_API_H

#include "gacc/runtime/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compiles the MLIR text of a model in-process (`name` labels it in
 * messages) and returns a trainer with initialized parameters. `options`
 * are the training pipeline's, written as gacc-opt's
 * --gacc-training-pipeline takes them and named as the `gacc` flags:
 * "micro-batch=16 remat=sqrt precision=bf16 target=cpu seed=3" (NULL or ""
 * keeps everything as the model says). A string rather than a struct: the
 * same parser and names as every other entry point, and options added later
 * change no struct layout. Returns 0, or -1 with the reason (the located
 * diagnostics) in gacc_last_error(). */
int gacc_trainer_compile(const char *mlir, const char *name,
                         const char *options, gacc_trainer **out);

#ifdef __cplusplus
}
#endif

#endif /* GACC_COMPILER_JIT_C_API_H */
