// Helpers of the hardening tests: a test PKI made with the openssl CLI, curl as the client, and
// an exporter process on a free loopback port.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "process.h"
#include "test_util.h"

namespace rdma_exporter::testing {

extern const std::string kExporterBin;
extern const std::string kSimulatorBin;

// ca.pem/ca.key, server.pem/server.key (127.0.0.1, signed by the CA), client.pem/client.key
// (signed by the CA) and rogue.pem/rogue.key (self-signed) in dir.
void MakePki(const std::string& dir);

// A bcrypt hash of password made with libxcrypt (cost 10 unless told).
std::string BcryptHash(const std::string& password, int cost = 10);

struct CurlResult {
  int rc = -1;      // curl's exit status (0 = HTTP exchange completed)
  int status = 0;   // HTTP status, 0 when none
  std::string out;  // body (and curl's error text)
};
// Runs curl -sS with args and the URL; -w appends the status.
CurlResult Curl(const std::vector<std::string>& args, const std::string& url);

// An exporter on 127.0.0.1:<free port>; waits until /-/ready answers 200 over http or https
// (curl_args carry the CA, client certificate and credentials needed for that).
class ExporterProcess {
 public:
  ExporterProcess(std::vector<std::string> flags, bool https = false,
                  std::vector<std::string> curl_args = {});
  int port() const { return port_; }
  Process& process() { return *process_; }
  std::string url(const std::string& path) const;
  bool ready() const { return ready_; }

 private:
  int port_ = 0;
  bool https_ = false;
  bool ready_ = false;
  std::unique_ptr<Process> process_;
};

// Resident set size (kB) and number of open descriptors of a process, from /proc.
long RssKb(pid_t pid);
int OpenFds(pid_t pid);
// A TCP connection to 127.0.0.1:port; -1 if it fails.
int Connect(int port);
// Waits (up to 5 s) until the process's stderr contains text; whether it did.
bool WaitForLog(Process& process, const std::string& text);

}  // namespace rdma_exporter::testing
