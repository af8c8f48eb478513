/*===- c_api.h - the gacc runtime's C API -------------------------*- C -*-===*
 *
 * Training with an artifact from C (or anything with a C FFI): load it,
 * copy inputs in, step, read the loss, get and set parameters, save and
 * load checkpoints. Functions returning int return 0 on success and -1 on
 * failure, with the reason in gacc_last_error() (per thread). Tensors cross
 * as raw bytes in the slot's dtype and row-major shape; a size that differs
 * from the slot's is an error. A trainer compiled in-process from MLIR text
 * comes from gacc_trainer_compile, in the compiler's library
 * (compiler/jit/c_api.h), and is driven by these functions alike.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GACC_RUNTIME_C_API_H
#define GACC_RUNTIME_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gacc_trainer gacc_trainer;

/* The last failure's message on this thread ("" if none). */
const char *gacc_last_error(void);

/* Loads the artifact at `path` with parameters initialized from `seed`. */
int gacc_trainer_open(const char *path, uint64_t seed, gacc_trainer **out);
void gacc_trainer_close(gacc_trainer *trainer);

/* Copies `bytes` bytes into input `name`. */
int gacc_trainer_set_input(gacc_trainer *trainer, const char *name,
                           const void *data, size_t bytes);
/* One optimizer step on the inputs; the loss and global gradient norm. */
int gacc_trainer_step(gacc_trainer *trainer, double *loss, double *grad_norm);
/* Steps taken so far. */
uint64_t gacc_trainer_step_count(const gacc_trainer *trainer);

/* Parameters by name: their byte size, a copy out, a copy in. */
int gacc_trainer_parameter_bytes(const gacc_trainer *trainer, const char *name,
                                 size_t *bytes);
int gacc_trainer_get_parameter(const gacc_trainer *trainer, const char *name,
                               void *data, size_t bytes);
int gacc_trainer_set_parameter(gacc_trainer *trainer, const char *name,
                               const void *data, size_t bytes);

/* Parameters, optimizer state and step counters (.safetensors). */
int gacc_trainer_save_checkpoint(const gacc_trainer *trainer,
                                 const char *path);
int gacc_trainer_load_checkpoint(gacc_trainer *trainer, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* GACC_RUNTIME_C_API_H */
