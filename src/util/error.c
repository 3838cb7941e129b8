/* error.c: the GError domain of plansim. */
#include "util/error.h"

G_DEFINE_QUARK(plansim - error - quark, ps_error)
