#include "hardening_util.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <thread>

namespace rdma_exporter::testing {

const std::string kExporterBin = RDMA_EXPORTER_BIN;
const std::string kSimulatorBin = RDMA_FABRIC_SIM_BIN;

void MakePki(const std::string& dir) {
  std::string script = "set -e; cd '" + dir + "'\n" + R"(
key() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" \
  -out "$1.csr" -subj "/CN=$2" 2>/dev/null; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
  -days 2 -subj /CN=rdma-test-ca 2>/dev/null
key server localhost
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile server.ext -out server.pem 2>/dev/null
key client prometheus
printf 'extendedKeyUsage=clientAuth\n' > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile client.ext -out client.pem 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout rogue.key \
  -out rogue.pem -days 2 -subj /CN=prometheus 2>/dev/null
)";
  std::string output;
  ASSERT_EQ(RunCommand({"bash", "-c", script}, &output), 0) << output;
}

std::string BcryptHash(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", cost, nullptr, 0, salt, sizeof(salt)) == nullptr) return "";
  crypt_data data{};
  const char* hash = crypt_r(password.c_str(), salt, &data);
  return hash != nullptr && hash[0] != '*' ? hash : "";
}

CurlResult Curl(const std::vector<std::string>& args, const std::string& url) {
  std::vector<std::string> argv = {"curl", "-sS", "--max-time", "20", "-w", "\n%{http_code}"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(url);
  CurlResult r;
  r.rc = RunCommand(argv, &r.out);
  size_t nl = r.out.rfind('\n');
  if (nl != std::string::npos) {
    try {
      r.status = std::stoi(r.out.substr(nl + 1));
    } catch (...) {
      r.status = 0;
    }
    r.out.resize(nl);
  }
  return r;
}

ExporterProcess::ExporterProcess(std::vector<std::string> flags, bool https,
                                 std::vector<std::string> curl_args)
    : https_(https) {
  for (int attempt = 0; attempt < 5 && !ready_; ++attempt) {
    port_ = FreeLoopbackPort();
    std::vector<std::string> argv = {kExporterBin,
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process_ = std::make_unique<Process>(argv);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline && process_->Running()) {
      if (!https_) {
        ready_ = WaitReady(port_, std::chrono::milliseconds(200));
      } else {
        std::vector<std::string> a = curl_args;
        a.insert(a.end(), {"--max-time", "2"});
        ready_ = Curl(a, url("/-/ready")).status == 200;
      }
      if (ready_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Lost the race for the port to another test: try another one.
    if (!ready_ && process_->Running()) break;
  }
}

std::string ExporterProcess::url(const std::string& path) const {
  return std::string(https_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + path;
}

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool WaitForLog(Process& process, const std::string& text) {
  for (int i = 0; i < 200; ++i) {
    if (process.stderr_text().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return process.stderr_text().find(text) != std::string::npos;
}

long RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

int OpenFds(pid_t pid) {
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n;
}

}  // namespace rdma_exporter::testing
