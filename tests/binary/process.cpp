#include "process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace rdma_exporter::testing {
namespace {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string TempFile(const char* tag) {
  std::string tmpl = std::string("/tmp/rdma-binary-test-") + tag + "-XXXXXX";
  int fd = mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  return tmpl;
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& in_path,
            const std::string& out_path, const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Process::Process(std::vector<std::string> argv) {
  out_path_ = TempFile("out");
  err_path_ = TempFile("err");
  pid_ = Spawn(argv, "/dev/null", out_path_, err_path_);
}

Process::~Process() {
  if (Running()) Stop();
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

bool Process::Running() {
  if (status_ >= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = DecodeStatus(status);
    return false;
  }
  return r == 0;
}

int Process::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (Running()) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

int Process::Stop() {
  if (!Running()) return status_;
  kill(pid_, SIGTERM);
  if (Wait(std::chrono::seconds(10)) < 0) {
    kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(5));
  }
  return status_;
}

std::string Process::stdout_text() const {
  return ReadWholeFile(out_path_);
}
std::string Process::stderr_text() const {
  return ReadWholeFile(err_path_);
}

int RunCommand(const std::vector<std::string>& argv, std::string* output,
               const std::string& stdin_text) {
  std::string in_path = TempFile("in");
  std::ofstream(in_path) << stdin_text;
  std::string out_path = TempFile("cmd");
  pid_t pid = Spawn(argv, in_path, out_path, out_path);
  int status = 0;
  waitpid(pid, &status, 0);
  *output = ReadWholeFile(out_path);
  unlink(in_path.c_str());
  unlink(out_path.c_str());
  return DecodeStatus(status);
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

HttpResponse HttpGet(int port, const std::string& path,
                     const std::map<std::string, std::string>& headers, const std::string& method) {
  HttpResponse response;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return response;
  }
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [k, v] : headers)
    request += k + ": " + v + "\r\n";
  request += "Connection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return response;
  }
  std::string raw;
  char buf[65536];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
    raw.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t header_end = raw.find("\r\n\r\n");
  if (header_end == std::string::npos) return response;
  std::istringstream head(raw.substr(0, header_end));
  std::string line;
  std::getline(head, line);
  if (line.size() > 12) response.status = std::atoi(line.c_str() + 9);
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (auto& c : name)
      c = static_cast<char>(std::tolower(c));
    size_t start = line.find_first_not_of(' ', colon + 1);
    response.headers[name] = start == std::string::npos ? "" : line.substr(start);
  }
  response.body = raw.substr(header_end + 4);
  return response;
}

bool WaitReady(int port, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (HttpGet(port, "/-/ready").status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string Gunzip(const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return "";
  std::string out;
  char buf[65536];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  } while (rc == Z_OK);
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? out : "";
}

}  // namespace rdma_exporter::testing
