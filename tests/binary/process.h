// Test helpers for the binary tests: start a program and stop it by its PID, pick a free
// loopback port, and a minimal HTTP/1.1 client for 127.0.0.1.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace rdma_exporter::testing {

class Process {
 public:
  // Starts argv[0] with the given arguments; stdout and stderr go to files read by output().
  explicit Process(std::vector<std::string> argv);
  ~Process();  // stops the process (SIGTERM, then SIGKILL) if it is still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Sends SIGTERM and waits; returns the exit status (128 + signal if killed by one).
  int Stop();
  // Waits for the process to exit on its own (up to timeout); -1 on timeout.
  int Wait(std::chrono::milliseconds timeout);
  bool Running();
  std::string stdout_text() const;
  std::string stderr_text() const;

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string out_path_, err_path_;
};

// Runs a command to completion; returns its exit status and output (stdout+stderr).
int RunCommand(const std::vector<std::string>& argv, std::string* output,
               const std::string& stdin_text = "");

int FreeLoopbackPort();

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};
// GET (or HEAD) http://127.0.0.1:<port><path>; status 0 if the connection failed.
HttpResponse HttpGet(int port, const std::string& path,
                     const std::map<std::string, std::string>& headers = {},
                     const std::string& method = "GET");

// Polls /-/ready until it answers 200 or the timeout passes.
bool WaitReady(int port, std::chrono::milliseconds timeout);

std::string Gunzip(const std::string& data);

}  // namespace rdma_exporter::testing
