#include "rdma_exporter/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "rdma_exporter/unique_fd.h"

namespace rdma_exporter {

int ReadWholeFile(const std::string& path, std::string* out) {
  out->clear();
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return errno;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      out->clear();
      return err;
    }
    if (n == 0) return 0;
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace rdma_exporter
