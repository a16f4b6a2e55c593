// A throwaway OpenSSH server on 127.0.0.1 for tests that need a real one:
// a temp dir with a generated host key, a client key in authorized_keys, and
// its own sshd_config; sshd -D runs until the fixture is destroyed, which
// also removes the dir. Needs root (sshd refuses otherwise) and
// /usr/sbin/sshd; WhyUnavailable() says what is missing, for GTEST_SKIP.
//
// Header-only so that it needs no build rule (the test binary globs
// *_test.cc files only).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cc::testing {

class SshdFixture {
 public:
  static constexpr const char* kSshd = "/usr/sbin/sshd";

  // "" when an sshd can be started here; otherwise the reason.
  static std::string WhyUnavailable() {
    if (geteuid() != 0) return "needs root to run sshd";
    if (access(kSshd, X_OK) != 0) return std::string(kSshd) + " is missing";
    if (std::system("command -v ssh-keygen >/dev/null 2>&1") != 0) {
      return "ssh-keygen is missing";
    }
    return "";
  }
  // WhyUnavailable, and what Start(shell_banner) needs besides.
  static std::string WhyTalkingShellUnavailable() {
    std::string why = WhyUnavailable();
    if (why.empty() && access(kSftpServer, X_OK) != 0) {
      why = std::string(kSftpServer) + " is missing";
    }
    return why;
  }

  SshdFixture() = default;
  SshdFixture(const SshdFixture&) = delete;
  SshdFixture& operator=(const SshdFixture&) = delete;
  ~SshdFixture() {
    Stop();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  // Makes the keys and config and starts sshd. Returns "" or what failed.
  // With a `shell_banner`, every session prints it on stdout before the
  // command runs, as a site's login files do (module systems, conda, "you
  // have mail"): a ForceCommand wrapper echoes it and then runs the original
  // command, and sftp is the external sftp-server run through that wrapper
  // (as Debian's default config runs it through the login shell), so the
  // banner garbles the SFTP stream as a talking ~/.bashrc would.
  std::string Start(const std::string& shell_banner = "") {
    shell_banner_ = shell_banner;
    char tmpl[] = "/tmp/cc-sshd-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return "mkdtemp failed";
    dir_ = tmpl;
    mkdir("/run/sshd", 0755);  // sshd's privilege separation dir
    std::string err = MakeKey("host_key");
    if (err.empty()) err = MakeKey("id_ed25519");
    if (err.empty()) err = MakeKey("other_key");  // never authorized
    if (!err.empty()) return err;
    host_public_key_ = ReadFirstLine(dir_ + "/host_key.pub");
    std::ofstream(dir_ + "/authorized_keys") << ReadFirstLine(dir_ + "/id_ed25519.pub") << "\n";
    if (!shell_banner_.empty()) WriteTalkingShell();
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = FreePort();
      WriteConfig();
      err = Launch();
      if (err.empty()) return "";
      Stop();
    }
    return err;
  }

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // Authorized private key, and one sshd does not accept.
  std::string client_key() const { return dir_ + "/id_ed25519"; }
  std::string unauthorized_key() const { return dir_ + "/other_key"; }
  // "ssh-ed25519 AAAA... host"
  const std::string& host_public_key() const { return host_public_key_; }
  // known_hosts line for this server; with `wrong`, another key of the same
  // type (as after a reinstall).
  std::string KnownHostsLine(bool wrong = false) const {
    std::string key = wrong ? ReadFirstLine(dir_ + "/other_key.pub") : host_public_key_;
    return "[127.0.0.1]:" + std::to_string(port_) + " " + key;
  }
  // Writes dir/name with the given content and returns its path.
  std::string WriteFile(const std::string& name, const std::string& content) const {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }
  std::string Log() const { return ReadAll(dir_ + "/sshd.log"); }

  // The per-connection sshd processes (children of the listener), to freeze
  // one with SIGSTOP and see what a hung node does to the client.
  std::vector<pid_t> SessionPids() const {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
      std::string name = e.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string stat = ReadAll(e.path().string() + "/stat");
      // pid (comm) state ppid ...: comm may hold spaces, so after the ')'.
      size_t close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 1));
      std::string state;
      pid_t ppid = 0;
      rest >> state >> ppid;
      if (ppid == pid_) out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return out;
  }

 private:
  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static std::string ReadFirstLine(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  }

  std::string MakeKey(const std::string& name) const {
    std::string cmd = "ssh-keygen -q -t ed25519 -N '' -C cc-test -f '" + dir_ + "/" + name +
                      "' </dev/null >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0 ? "" : "ssh-keygen failed for " + name;
  }

  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
  }

  void WriteConfig() const {
    std::ofstream c(dir_ + "/sshd_config");
    c << "Port " << port_ << "\n"
      << "ListenAddress 127.0.0.1\n"
      << "HostKey " << dir_ << "/host_key\n"
      << "PidFile none\n"
      << "AuthorizedKeysFile " << dir_ << "/authorized_keys\n"
      << "StrictModes no\n"
      << "UsePAM no\n"
      << "PermitRootLogin prohibit-password\n"
      << "PubkeyAuthentication yes\n"
      << "PasswordAuthentication no\n"
      << "KbdInteractiveAuthentication no\n"
      << "MaxStartups 200\n"
      << "MaxSessions 50\n"
      << "LogLevel ERROR\n"
      // bash sources ~/.bashrc for commands run by sshd when it thinks it
      // is the top-level shell; SHLVL=1 makes it think otherwise, which
      // keeps this machine's (possibly slow) startup files out of tests.
      << "SetEnv SHLVL=1\n";
    if (shell_banner_.empty()) {
      c << "Subsystem sftp internal-sftp\n";
    } else {
      c << "Subsystem sftp " << kSftpServer << "\n"
        << "ForceCommand " << dir_ << "/talking_shell.sh\n";
    }
  }

  static constexpr const char* kSftpServer = "/usr/lib/openssh/sftp-server";

  void WriteTalkingShell() const {
    std::string path = dir_ + "/talking_shell.sh";
    std::ofstream f(path);
    f << "#!/bin/sh\n"
      << "cat <<'CC_BANNER'\n"
      << shell_banner_ << "\nCC_BANNER\n"
      << "exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n";
    f.close();
    chmod(path.c_str(), 0755);
  }

  // Starts sshd and waits until it answers with its banner.
  std::string Launch() {
    // Only async-signal-safe calls after fork: other threads may exist.
    std::string log = dir_ + "/sshd.log";
    std::string conf = dir_ + "/sshd_config";
    pid_ = fork();
    if (pid_ == 0) {
      int null_fd = open("/dev/null", O_RDONLY);
      int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      dup2(null_fd, 0);
      dup2(log_fd, 1);
      dup2(log_fd, 2);
      execl(kSshd, kSshd, "-D", "-e", "-f", conf.c_str(), (char*)nullptr);
      _exit(127);
    }
    if (pid_ < 0) return "fork failed";
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return "sshd exited: " + Log();
      }
      if (AnswersBanner()) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "sshd did not answer on port " + std::to_string(port_) + ": " + Log();
  }

  bool AnswersBanner() const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    bool ok = false;
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      char buf[8] = {};
      ok = recv(fd, buf, 4, MSG_WAITALL) == 4 && std::string(buf, 4) == "SSH-";
    }
    close(fd);
    return ok;
  }

  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::string dir_;
  std::string shell_banner_;
  std::string host_public_key_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace cc::testing
