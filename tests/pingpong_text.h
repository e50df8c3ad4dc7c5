// A small ping-pong scenario for tests: two goroutines hand a token over two unbuffered channels
// 2,000 times; BenchmarkPingPong reports ns per round trip.
#pragma once

inline constexpr char kPingPong[] = R"(
chan { name: "ping" }
chan { name: "pong" }
func { name: "main"
  op { go { func: "echo" } }
  op { loop { name: "rt" count: 2000 op { send { chan: "ping" } } op { recv { chan: "pong" } } } }
  op { close { chan: "ping" } }
}
func { name: "echo" op { loop { range: "ping" op { send { chan: "pong" } } } } }
benchmark { name: "BenchmarkPingPong" loop: "rt" }
)";
