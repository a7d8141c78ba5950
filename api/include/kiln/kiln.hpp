// kiln: specialise kernels at run time, compile them in process, cache them on disk.
#pragma once

#include "kiln/arg.hpp"
#include "kiln/blocks.hpp"
#include "kiln/cache.hpp"
#include "kiln/collective.hpp"
#include "kiln/errors.hpp"
#include "kiln/gpu_kernel.hpp"
#include "kiln/kernel.hpp"
#include "kiln/metrics.hpp"
#include "kiln/runtime.hpp"
#include "kiln/spec.hpp"
#include "kiln/version.hpp"
