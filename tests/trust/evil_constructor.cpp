// The attacker's object of trust.swap_test: a shared object whose constructor
// records, in the file KILN_TEST_EVIL_MARKER names, that it ran and as whom.
// No test loads it on purpose: it runs only if a victim's loader maps it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

__attribute__((constructor)) static void kiln_test_evil_constructor() {
  const char* marker = std::getenv("KILN_TEST_EVIL_MARKER");
  if (marker == nullptr) return;
  const int fd = ::open(marker, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) return;
  char line[64];
  const int length = std::snprintf(line, sizeof line, "ran as uid %u\n", static_cast<unsigned>(::getuid()));
  if (length > 0) (void)!::write(fd, line, static_cast<std::size_t>(length));
  ::close(fd);
}
