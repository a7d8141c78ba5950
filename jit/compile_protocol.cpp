#include "jit/compile_protocol.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace kiln::jit::protocol {
namespace {

struct Header {
  std::uint32_t magic;
  std::uint32_t type;
  std::uint64_t size;
};
static_assert(sizeof(Header) == 16);

// Waits until `fd` is ready for `events` or the deadline passes.
// Io::ok: ready (or hung up: the next recv/send says how).
IoResult wait_for(int fd, short events, Deadline deadline) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return {Io::timed_out};
      timeout_ms = static_cast<int>(std::min<long long>(left, INT_MAX));
    }
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, timeout_ms);
    if (n > 0) return {};
    if (n == 0) continue;  // the loop sees whether the deadline passed
    if (errno == EINTR) continue;
    return {Io::failed, errno};
  }
}

bool is_closed(int error) { return error == EPIPE || error == ECONNRESET || error == ENOTCONN; }

IoResult write_all(int fd, const char* data, std::size_t size, Deadline deadline) {
  while (size > 0) {
    if (IoResult ready = wait_for(fd, POLLOUT, deadline); ready.io != Io::ok) return ready;
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (is_closed(errno)) return {Io::closed, errno};
      return {Io::failed, errno};
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

IoResult read_exact(int fd, char* out, std::size_t size, Deadline deadline, bool& started) {
  while (size > 0) {
    if (IoResult ready = wait_for(fd, POLLIN, deadline); ready.io != Io::ok) return {ready.io, ready.error, started};
    const ssize_t n = ::recv(fd, out, size, MSG_DONTWAIT);
    if (n == 0) return {Io::closed, 0, started};
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (is_closed(errno)) return {Io::closed, errno, started};
      return {Io::failed, errno, started};
    }
    started = true;
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return {Io::ok, 0, started};
}

}  // namespace

IoResult write_frame(int fd, Type type, const std::vector<std::string_view>& fields, Deadline deadline) {
  std::uint64_t payload = 0;
  for (std::string_view field : fields) payload += sizeof(std::uint64_t) + field.size();
  if (payload > kMaxPayload) return {Io::malformed};
  // One buffer, one send in the common case: the header, each field's size and bytes.
  std::string bytes;
  bytes.reserve(sizeof(Header) + payload);
  const Header header{kMagic, static_cast<std::uint32_t>(type), payload};
  bytes.append(reinterpret_cast<const char*>(&header), sizeof header);
  for (std::string_view field : fields) {
    const std::uint64_t size = field.size();
    bytes.append(reinterpret_cast<const char*>(&size), sizeof size);
    bytes.append(field.data(), field.size());
  }
  return write_all(fd, bytes.data(), bytes.size(), deadline);
}

IoResult read_frame(int fd, Frame& out, Deadline deadline) {
  bool started = false;
  Header header{};
  if (IoResult r = read_exact(fd, reinterpret_cast<char*>(&header), sizeof header, deadline, started); r.io != Io::ok)
    return r;
  const bool known_type = header.type >= static_cast<std::uint32_t>(Type::hello) &&
                          header.type <= static_cast<std::uint32_t>(Type::result);
  if (header.magic != kMagic || !known_type || header.size > kMaxPayload) return {Io::malformed, 0, true};
  std::string payload(header.size, '\0');
  if (IoResult r = read_exact(fd, payload.data(), payload.size(), deadline, started); r.io != Io::ok) return r;
  out.type = static_cast<Type>(header.type);
  out.fields.clear();
  std::size_t at = 0;
  while (at < payload.size()) {
    std::uint64_t size = 0;
    if (payload.size() - at < sizeof size) return {Io::malformed, 0, true};
    std::memcpy(&size, payload.data() + at, sizeof size);
    at += sizeof size;
    if (size > payload.size() - at) return {Io::malformed, 0, true};
    out.fields.emplace_back(payload, at, size);
    at += size;
  }
  return {Io::ok, 0, true};
}

std::string describe(const IoResult& result) {
  switch (result.io) {
    case Io::ok: return "ok";
    case Io::closed: return "the other end closed the connection";
    case Io::timed_out: return "timed out";
    case Io::failed: return std::strerror(result.error);
    case Io::malformed: return "malformed frame";
  }
  return "unknown";
}

}  // namespace kiln::jit::protocol
