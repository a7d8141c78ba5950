/* Fortran arrays into kiln_arg views, through the descriptors of
 * ISO_Fortran_binding.h: any array or section, contiguous or not, passes with
 * its real strides and no copy (the module's kiln_array). */
#include <ISO_Fortran_binding.h>
#include <stdio.h>

#include "kiln/kiln.h"

/* The kiln type of a descriptor's element type, or 0 when kiln has none. */
static int kiln_type_of(CFI_type_t type) {
  switch (type) {
    case CFI_type_double: return KILN_F64;
    case CFI_type_float: return KILN_F32;
    case CFI_type_int32_t: return KILN_I32;
    case CFI_type_int64_t: return KILN_I64;
    case CFI_type_Bool: return KILN_BOOL; /* logical(c_bool): one byte, as C's _Bool and C++'s bool */
    default: return 0;
  }
}

/* Fills `out` from the descriptor; `why` (capacity `why_size`) says what is
 * wrong otherwise. Strides: the descriptor's byte strides over the element
 * length; a stride that is no whole number of elements cannot be a kiln view. */
int kiln_fortran_view(const CFI_cdesc_t* array, kiln_arg* out, char* why, int why_size) {
  const int type = kiln_type_of(array->type);
  int64_t shape[4], strides[4];
  int d;
  if (type == 0) {
    snprintf(why, (size_t)why_size, "its element type (CFI type %d) is none of real(c_double), real(c_float), "
             "integer(c_int32_t), integer(c_int64_t), logical(c_bool)", (int)array->type);
    return 1;
  }
  if (array->rank < 1 || array->rank > 4) {
    snprintf(why, (size_t)why_size, "its rank is %d, not 1 to 4", (int)array->rank);
    return 1;
  }
  for (d = 0; d < array->rank; ++d) {
    const CFI_index_t sm = array->dim[d].sm;
    if (sm % (CFI_index_t)array->elem_len != 0) {
      snprintf(why, (size_t)why_size, "dimension %d's stride of %ld bytes is no whole number of elements", d + 1,
               (long)sm);
      return 1;
    }
    shape[d] = array->dim[d].extent;
    strides[d] = sm / (CFI_index_t)array->elem_len;
  }
  if (kiln_array(array->base_addr, (kiln_type)type, array->rank, shape, strides, out) != KILN_OK) {
    snprintf(why, (size_t)why_size, "%s", kiln_last_error());
    return 1;
  }
  return 0;
}
