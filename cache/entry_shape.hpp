// Whether a file is shaped like one of kiln's entries, before kiln removes it.
// The cache folder is whatever KILN_CACHE_DIR names, a typo included, so a name
// in the entry layout (<2 hex>/<30 hex>) is not proof enough: `kiln cache
// clear` and gc remove a file only when its bytes say kiln wrote it too.
#pragma once

#include <filesystem>

namespace kiln::cache {

// True for a regular file (not a link, not a FIFO: it is opened without
// following or blocking) whose last bytes hold an entry trailer's magic at its
// place (entry_format.hpp), or whose first bytes are the header of an older
// entry format. Nothing else is checked: an entry with a flipped payload bit
// is still kiln's to remove. False when it cannot be opened or read.
bool is_entry_shaped(const std::filesystem::path& path);

}  // namespace kiln::cache
