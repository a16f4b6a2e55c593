#include "agent/dial_back.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cc {
namespace {

TEST(DialHello, RoundTripsAndRejectsWhatIsNotOne) {
  DialHello h{"gpu17", "main", "s3cret"};
  auto back = ParseDialHello(DialHelloLine(h));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->node, "gpu17");
  EXPECT_EQ(back->slot, "main");
  EXPECT_EQ(back->secret, "s3cret");
  for (const char* bad :
       {"", "hello", R"({"type":"hello","v":1})", R"({"dial":1,"node":"a","slot":"main"})",
        R"({"dial":1,"node":"","slot":"main","secret":"x"})",
        R"({"dial":2,"node":"a","slot":"main","secret":"x"})",
        R"({"dial":1,"node":7,"slot":"main","secret":"x"})"}) {
    EXPECT_FALSE(ParseDialHello(bad).has_value()) << bad;
  }
  EXPECT_FALSE(ParseDialHello(DialHelloLine({"n", "main", std::string(2000, 'x')})).has_value())
      << "longer than kMaxDialHello";
}

TEST(DialHello, SecretsCompareWhole) {
  EXPECT_TRUE(SecretsEqual("abc", "abc"));
  EXPECT_FALSE(SecretsEqual("abc", "abd"));
  EXPECT_FALSE(SecretsEqual("abc", "ab"));
  EXPECT_FALSE(SecretsEqual("", "a"));
}

TEST(DialHello, HostAndPortSplit) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(SplitHostPort("10.0.0.254:41000", &host, &port));
  EXPECT_EQ(host, "10.0.0.254");
  EXPECT_EQ(port, 41000);
  ASSERT_TRUE(SplitHostPort("[fe80::1]:22", &host, &port));
  EXPECT_EQ(host, "fe80::1");
  for (const char* bad : {"10.0.0.1", ":80", "h:", "h:0", "h:70000", "h:8x"}) {
    EXPECT_FALSE(SplitHostPort(bad, &host, &port)) << bad;
  }
}

// A listening socket on loopback and its port.
int Listener(int* port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  listen(fd, 4);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

TEST(DialBack, ConnectsAndSaysHelloFirst) {
  int port = 0;
  int l = Listener(&port);
  std::string why;
  int fd = DialBack("127.0.0.1:" + std::to_string(port), {"n1", "main", "k"}, 5, &why);
  ASSERT_GE(fd, 0) << why;
  int c = accept(l, nullptr, nullptr);
  char buf[256] = {};
  ssize_t n = read(c, buf, sizeof buf - 1);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), DialHelloLine({"n1", "main", "k"}) + "\n");
  close(fd);
  close(c);
  close(l);
}

TEST(DialBack, NobodyListeningFailsWithTheReasonAfterItsTimeout) {
  int port = 0;
  close(Listener(&port));  // a port just freed: connections are refused
  std::string why;
  EXPECT_LT(DialBack("127.0.0.1:" + std::to_string(port), {"n1", "main", "k"}, 0.3, &why), 0);
  EXPECT_NE(why.find("Connection refused"), std::string::npos) << why;
  EXPECT_LT(DialBack("nonsense", {"n1", "main", "k"}, 1, &why), 0);
  EXPECT_EQ(why, "--connect: 'nonsense' is not HOST:PORT");
}

}  // namespace
}  // namespace cc
