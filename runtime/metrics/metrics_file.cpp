#include "runtime/metrics/metrics_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "base/posix_io.hpp"

namespace kiln::runtime {

void write_metrics_file(const std::filesystem::path& path, const std::string& text) {
  // O_NONBLOCK: on a FIFO without a reader the open fails (ENXIO) at once
  // instead of waiting for one; a regular file is unaffected.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    if (error == ENXIO)
      base::log().warn("kiln: metrics not written: KILN_METRICS_FILE {} is a FIFO that nobody reads", path.string());
    else
      base::log().error("kiln: cannot write metrics to {}: {}", path.string(), std::strerror(error));
    return;
  }
  // A reader is there (or a plain file): writes may block as they normally would.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const base::Result<void> written = base::write_all(fd, text);
  if (!written)
    base::log().error("kiln: cannot write metrics to {}: {}", path.string(),
                      std::strerror(written.error().error_number));
  ::close(fd);
}

}  // namespace kiln::runtime
