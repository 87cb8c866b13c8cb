/* register.c - registration of the vision kernel family (detection
 * post-processing, image warps, crop sampling). */
#include "kernel.h"

void dfx__kernels_vision_combined_nms(dfx_registry *r);
void dfx__kernels_vision_projective(dfx_registry *r);
void dfx__kernels_vision_sample_bbox(dfx_registry *r);

void dfx__kernels_vision(dfx_registry *r);
void dfx__kernels_vision(dfx_registry *r) {
  dfx__kernels_vision_combined_nms(r);
  dfx__kernels_vision_projective(r);
  dfx__kernels_vision_sample_bbox(r);
}
