// Symbol visibility: libkiln is built with hidden visibility; only what is
// marked KILN_API is part of its ABI.
#pragma once

#define KILN_API __attribute__((visibility("default")))
