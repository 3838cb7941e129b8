/* units.h: the byte units: binary, as GPU memory is quoted (NVIDIA's
 * "80 GB" H100 is 80 GiB) and as PyTorch and Megatron-LM print memory.
 * The one home of each; a size in a file or a report is in these. */
#ifndef PLANSIM_BASE_UNITS_H
#define PLANSIM_BASE_UNITS_H

#define UNITS_KIB 1024.0
#define UNITS_MIB (1024.0 * UNITS_KIB)
#define UNITS_GIB (1024.0 * UNITS_MIB)
#define UNITS_TIB (1024.0 * UNITS_GIB)

#endif
