// The 20,000-delta stream of issue 8: a local OpenAI-compatible server (the tests' fake, on
// 127.0.0.1) streams N one-character deltas; a client reading the real binary's stdout measures
// the time from writing the prompt to reading agent_end, the events and bytes it read, and the
// server's peak resident memory (VmHWM) and CPU time just after agent_end. Prints the median
// over R runs, then the pipe floor: the same line lengths written by a process that does nothing
// but write(2), read by the same reader, so the server's own share of the time is visible.
// usage: bench_stream [deltas (default 20000)] [runs (default 5)]
//                     [full|delta|both|extension|apis|decode]
// Full mode is the default output; delta mode sends set_event_filter messageUpdates:"delta"
// first (protocol.md section 8) and is also compared with the time the fake server needed to
// send the stream. `apis` streams the same deltas through Chat Completions, the Responses API and
// the Gemini API (providers.md) in one run, in both modes, and compares their times and CPU;
// `decode` times the three decoders alone, in this process.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "session/llm/sse_parser.h"
#include "session/llm/stream_decoder.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/openai_rebound.h"
#include "tests/support/proc_status.h"
#include "tests/support/provider_streams.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using Clock = std::chrono::steady_clock;
using rebound::testing::FakeLlmServer;
using rebound::testing::FakeResponse;
using rebound::testing::Subprocess;

namespace {

// The process's user and system CPU time in seconds (utime and stime of /proc/PID/stat).
std::pair<double, double> cpu_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return {-1, -1};
  std::istringstream fields(text.substr(close_paren + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stod(f);
    if (i == 15) {
      stime = std::stod(f);
      break;
    }
  }
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return {utime / tick, stime / tick};
}

// The event loop's (the main thread's) time on a CPU so far, user and system together, in
// seconds, with nanosecond resolution (/proc/PID/task/PID/schedstat): an upper bound of its
// user time that, unlike utime, is not sampled at clock ticks.
double loop_thread_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/schedstat");
  double ns = -1;
  in >> ns;
  return ns / 1e9;
}

// Every thread's time on a CPU so far (/proc/PID/task/*/schedstat, nanoseconds), in seconds:
// the server's own CPU, without its children's (wait4's figures include an extension's).
double all_threads_seconds(int pid) {
  double ns = 0;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    double t = 0;
    if (in >> t) ns += t;
  }
  return ns / 1e9;
}

// all_threads_seconds() once it has stopped growing (what is still queued for an extension is
// written after agent_end): two readings 50 ms apart within 0.2 ms, at most 5 s.
double settled_threads_seconds(int pid) {
  double last = all_threads_seconds(pid);
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double now = all_threads_seconds(pid);
    if (now - last < 0.0002) return now;
    last = now;
  }
  return last;
}

struct Stream {
  std::size_t bytes = 0;
  std::vector<std::size_t> line_lengths;  // with the LF
};

// A lean reader (1 MiB reads, memchr for line ends), so the figure is the writer's: reads `fd`
// until the agent_end line. False if the stream ends first.
bool read_until_agent_end(int fd, Stream& out) {
  std::vector<char> buf(1 << 20);
  std::string line_start;  // the first bytes of the line being read
  std::size_t line_length = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n <= 0) return false;
    out.bytes += static_cast<std::size_t>(n);
    const char* at = buf.data();
    const char* end = buf.data() + n;
    while (at < end) {
      const char* lf = static_cast<const char*>(std::memchr(at, '\n', end - at));
      const std::size_t part = static_cast<std::size_t>((lf ? lf + 1 : end) - at);
      line_start.append(at, std::min(part, 20 - std::min<std::size_t>(20, line_start.size())));
      line_length += part;
      if (!lf) break;
      out.line_lengths.push_back(line_length);
      if (line_start.rfind("{\"type\":\"agent_end", 0) == 0) return true;
      line_start.clear();
      line_length = 0;
      at = lf + 1;
    }
  }
}

// Seconds from fork to the agent_end line read by the lean reader, for a child that writes
// the stream to `fd` (a pipe with the same 1 MiB buffer the server asks for) and exits.
template <typename Write>
double timed_child_stream(Write write) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  (void)::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  const auto t0 = Clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    write(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  Stream got;
  const bool ok = read_until_agent_end(fds[0], got);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return ok ? s : -1;
}

// The floor the kernel sets: a child process that does nothing but write(2) lines of the given
// lengths, one call per line.
double pipe_floor_seconds(const std::vector<std::size_t>& lengths) {
  const std::size_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::string filler(longest, 'x');
  const std::string last = "{\"type\":\"agent_end\"}\n";
  return timed_child_stream([&](int fd) {
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      std::string_view line(filler.data(), lengths[i]);
      if (i + 1 == lengths.size()) line = last;
      filler[lengths[i] - 1] = '\n';
      while (!line.empty()) {
        const ssize_t n = ::write(fd, line.data(), line.size());
        if (n <= 0) ::_exit(1);
        line.remove_prefix(static_cast<std::size_t>(n));
      }
      filler[lengths[i] - 1] = 'x';
    }
  });
}

// The floor that `cat` sets: the same bytes (the recorded line lengths, in a file in the page
// cache) copied by cat(1) (issue 27: the line-by-line writer above is slower than cat).
double cat_floor_seconds(const std::string& file) {
  return timed_child_stream([&](int fd) {
    ::dup2(fd, 1);
    ::execl("/bin/cat", "cat", file.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  });
}

// The recorded line lengths as a file: filler lines, the agent_end line last.
std::string write_stream_file(const std::vector<std::size_t>& lengths, const char* label) {
  const std::string path = std::string("/tmp/rebound-bench-stream-") + label + ".jsonl";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::size_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::string filler(longest, 'x');
  for (std::size_t i = 0; i + 1 < lengths.size(); ++i) {
    filler[lengths[i] - 1] = '\n';
    out.write(filler.data(), static_cast<std::streamsize>(lengths[i]));
    filler[lengths[i] - 1] = 'x';
  }
  out << "{\"type\":\"agent_end\"}\n";
  return path;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct ModeFigures {
  double seconds = 0, mbytes = 0, events_per_s = 0, rss_mib = 0, idle_rss_mib = 0, user_s = 0,
         sys_s = 0, send_s = 0, user_us_per_event = 0, life_user_s = 0, life_sys_s = 0,
         loop_us_per_event = 0, threads_s = 0;
  std::size_t lines = 0;
  std::vector<std::size_t> lengths;  // of the last run's lines, for the pipe floor
};

// `runs` runs of the stream against a fresh server each; medians. `filter` (commands, one per
// line) is sent and answered before the prompt when not empty; `extra`: more arguments.
// `api`: a models.json provider of that wire API at `base_path` instead of the openai provider.
ModeFigures measure(const FakeResponse& r, int runs, const std::string& filter, const char* label,
                    const std::vector<std::string>& extra = {}, const std::string& api = "",
                    const std::string& base_path = "") {
  std::vector<double> seconds, rss_mib, idle_rss_mib, mbytes, events_per_s, user_s, sys_s, send_s,
      per_event, life_user, life_sys, first_byte_s, loop_us, threads;
  ModeFigures out;
  for (int run = 0; run < runs; ++run) {
    FakeLlmServer server({r});
    rebound::testing::TempDir dir;
    // REBOUND_BENCH_BINARY measures another build (the "before" of a change).
    const char* other = std::getenv("REBOUND_BENCH_BINARY");
    const std::string binary = other && *other ? other : REBOUND_BINARY;
    auto process = api.empty() ? rebound::testing::start_openai_rebound(binary, server, dir, extra)
                               : rebound::testing::start_api_rebound(binary, server, dir, api,
                                                                     base_path, extra);
    Subprocess& p = *process;
    p.write("{\"id\":0,\"type\":\"get_state\"}\n");
    if (!p.read_line()) {
      std::fprintf(stderr, "no answer: %s\n", p.stderr_text().c_str());
      std::exit(1);
    }
    std::istringstream commands(filter);
    for (std::string command; std::getline(commands, command);) {
      p.write(command + "\n");
      if (!p.read_line()) std::exit(1);
    }
    idle_rss_mib.push_back(rebound::testing::proc_status_kib(p.pid(), "VmHWM:") / 1024.0);
    const auto cpu0 = cpu_seconds(p.pid());
    const double loop0 = loop_thread_seconds(p.pid());
    const double threads0 = all_threads_seconds(p.pid());
    const auto t0 = Clock::now();
    p.write("{\"id\":1,\"type\":\"prompt\",\"message\":\"stream please\"}\n");
    Stream got;
    if (!read_until_agent_end(p.stdout_fd(), got)) {
      std::fprintf(stderr, "stream ended early: %s\n", p.stderr_text().c_str());
      std::exit(1);
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    rss_mib.push_back(rebound::testing::proc_status_kib(p.pid(), "VmHWM:") / 1024.0);
    const auto cpu1 = cpu_seconds(p.pid());
    const double loop_s = loop_thread_seconds(p.pid()) - loop0;
    threads.push_back(settled_threads_seconds(p.pid()) - threads0);
    user_s.push_back(cpu1.first - cpu0.first);
    sys_s.push_back(cpu1.second - cpu0.second);
    const std::size_t bytes = got.bytes, events = got.line_lengths.size() - 1;  // less the answer
    seconds.push_back(s);
    mbytes.push_back(bytes / 1e6);
    events_per_s.push_back(events / s);
    per_event.push_back(user_s.back() / events * 1e6);
    loop_us.push_back(loop_s / events * 1e6);
    const auto sent = server.send_seconds();
    send_s.push_back(sent.empty() ? -1 : sent.back());
    const auto starts = server.send_starts();
    const double to_first_byte =
        starts.empty() ? -1 : std::chrono::duration<double>(starts.back() - t0).count();
    first_byte_s.push_back(to_first_byte);
    out.lengths = got.line_lengths;
    out.lines = got.line_lengths.size();
    std::printf(
        "%s run %d: %.4f s, %zu lines, %.1f MB, %.0f events/s, fake server started sending "
        "%.4f s after the prompt and sent in %.4f s, peak "
        "RSS %.1f MiB, server CPU %.3f s user + %.3f s system (%.2f us user per event), event "
        "loop %.2f us per event\n",
        label, run + 1, s, got.line_lengths.size(), bytes / 1e6, events / s, to_first_byte,
        send_s.back(), rss_mib.back(), user_s.back(), sys_s.back(), per_event.back(),
        loop_us.back());
    p.close_stdin();
    p.wait(std::chrono::seconds(10));
    const auto life = p.cpu_seconds();
    life_user.push_back(life ? life->first : -1);
    life_sys.push_back(life ? life->second : -1);
  }
  out.life_user_s = median(life_user);
  out.life_sys_s = median(life_sys);
  out.seconds = median(seconds);
  out.mbytes = median(mbytes);
  out.events_per_s = median(events_per_s);
  out.rss_mib = median(rss_mib);
  out.idle_rss_mib = median(idle_rss_mib);
  out.user_s = median(user_s);
  out.sys_s = median(sys_s);
  out.send_s = median(send_s);
  out.user_us_per_event = median(per_event);
  out.loop_us_per_event = median(loop_us);
  out.threads_s = median(threads);
  return out;
}

// The median of `runs` runs of `one` (seconds; negative: failed, which ends the benchmark).
template <typename Run>
double median_of_floor_runs(int runs, const char* floor, const char* label, Run one) {
  std::vector<double> floor_s;
  for (int run = 0; run < runs; ++run) {
    floor_s.push_back(one());
    if (floor_s.back() < 0) {
      std::fprintf(stderr, "%s floor run failed\n", floor);
      std::exit(1);
    }
    std::printf("%s %s floor run %d: %.3f s\n", label, floor, run + 1, floor_s.back());
  }
  return median(floor_s);
}

double floor_median(const std::vector<std::size_t>& lengths, int runs, const char* label) {
  return median_of_floor_runs(runs, "pipe", label, [&] { return pipe_floor_seconds(lengths); });
}

double cat_floor_median(const std::vector<std::size_t>& lengths, int runs, const char* label) {
  const std::string file = write_stream_file(lengths, label);
  cat_floor_seconds(file);  // once unmeasured: the file is in the page cache after it
  const double m =
      median_of_floor_runs(runs, "cat", label, [&] { return cat_floor_seconds(file); });
  std::remove(file.c_str());
  return m;
}

}  // namespace

// The stream of `deltas` one-character text deltas in the Responses API's events.
FakeResponse responses_deltas(int deltas) {
  std::vector<std::string> parts;
  for (int i = 0; i < deltas; ++i)
    parts.emplace_back(1, static_cast<char>('a' + i % 26));
  return rebound::testing::ResponsesStream().message("msg_1", parts).completed(5, 0, deltas);
}

// The same in Gemini's GenerateContentResponse events, each with its usage so far, model version
// and response id as the service sends them, the finish reason on the last.
FakeResponse gemini_deltas(int deltas) {
  using rebound::protocol::Json;
  std::vector<std::string> events;
  for (int i = 0; i < deltas; ++i) {
    const Json parts =
        Json::array({Json{{"text", std::string(1, static_cast<char>('a' + i % 26))}}});
    events.push_back(rebound::testing::gemini_event(parts, i + 1 < deltas ? "" : "STOP",
                                                    rebound::testing::gemini_usage(5, 0, i + 1)));
  }
  return rebound::testing::gemini_stream(std::move(events));
}

// providers.md's bench: the three APIs side by side, each mode measured for all three in turn.
void compare_apis(const FakeResponse& chat, int deltas, int runs) {
  struct Api {
    const char* label;
    FakeResponse stream;
    const char* api;
    const char* base_path;
  };
  const std::vector<Api> apis{
      {"chat-completions", chat, "", ""},
      {"openai-responses", responses_deltas(deltas), "openai-responses", "/v1"},
      {"google-generative-ai", gemini_deltas(deltas), "google-generative-ai", "/v1beta"}};
  const std::string delta_filter =
      R"({"id":"f","type":"set_event_filter","messageUpdates":"delta"})";
  for (const char* mode : {"full", "delta"}) {
    const std::string filter = std::string(mode) == "delta" ? delta_filter : "";
    std::vector<ModeFigures> figures;
    for (const auto& a : apis) {
      const std::string label = std::string(a.label) + ", " + mode;
      figures.push_back(measure(a.stream, runs, filter, label.c_str(), {}, a.api, a.base_path));
    }
    const ModeFigures& base = figures[0];
    for (std::size_t i = 0; i < apis.size(); ++i) {
      const ModeFigures& m = figures[i];
      const double cpu = m.user_s + m.sys_s, base_cpu = base.user_s + base.sys_s;
      std::size_t bytes = 0;
      for (const auto& c : apis[i].stream.chunks)
        bytes += c.size();
      std::printf(
          "apis %s, %s, median of %d runs, %d deltas: %.3f s request to agent_end (%.2fx chat "
          "completions), server CPU during the stream %.3f s user + %.3f s system (%.2fx), all "
          "threads %.3f s (%.2fx), %zu lines, peak RSS %.1f MiB, %.1f stream bytes per delta; goal "
          "within 1.2x\n",
          mode, apis[i].label, runs, deltas, m.seconds, m.seconds / base.seconds, m.user_s, m.sys_s,
          cpu / base_cpu, m.threads_s, m.threads_s / base.threads_s, m.lines, m.rss_mib,
          static_cast<double>(bytes) / deltas);
    }
  }
}

// A decoder with its fast path on or off.
template <typename Decoder, typename... Args>
std::unique_ptr<rebound::session::llm::StreamDecoder> with_fast_path(bool fast,
                                                                     const Args&... args) {
  auto decoder = std::make_unique<Decoder>(args...);
  decoder->set_fast_path(fast);
  return decoder;
}

// The decoders alone, in this process: each API's stream bytes through the SSE parser and its
// decoder, with the fast path (templates and scanner) and with the general parser only, in
// nanoseconds per delta (the median of `runs` runs, each decoding the stream 10 times).
void decode_apis(const FakeResponse& chat, int deltas, int runs) {
  using namespace rebound::session::llm;
  struct Api {
    const char* label;
    FakeResponse stream;
    std::function<std::unique_ptr<StreamDecoder>(bool)> make;
  };
  const rebound::protocol::Model model;
  const std::vector<Api> apis{
      {"chat-completions", chat,
       [&](bool fast) { return with_fast_path<OpenAiStreamDecoder>(fast, model); }},
      {"openai-responses", responses_deltas(deltas),
       [&](bool fast) { return with_fast_path<ResponsesStreamDecoder>(fast, model); }},
      {"google-generative-ai", gemini_deltas(deltas),
       [&](bool fast) { return with_fast_path<GeminiStreamDecoder>(fast, model, 0); }}};
  double base[2] = {};
  for (const auto& a : apis) {
    std::string bytes;
    for (const auto& c : a.stream.chunks)
      bytes += c;
    double figures[2];
    for (const bool fast : {true, false}) {
      std::vector<double> ns;
      std::size_t events = 0;
      for (int run = 0; run < runs; ++run) {
        const auto start = Clock::now();
        for (int pass = 0; pass < 10; ++pass) {
          const auto decoder = a.make(fast);
          SseParser parser;
          parser.keep_stray_lines(decoder->wants_stray_lines());
          const StreamDecoder::Emit emit = [&](StreamEvent&&) { ++events; };
          const SseParser::Sink sink = [&](const SseEvent& e) { decoder->on_event(e, emit); };
          for (std::size_t at = 0; at < bytes.size(); at += 16384)
            parser.feed(std::string_view(bytes).substr(at, 16384), sink);
          parser.finish(sink);
        }
        ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                     (10.0 * deltas));
      }
      figures[fast ? 0 : 1] = median(ns);
      if (events == 0) std::exit(1);
    }
    if (base[0] == 0) std::copy(figures, figures + 2, base);
    std::printf(
        "decode %s, median of %d runs, %d deltas, %.1f stream bytes per delta: fast path %.0f ns "
        "per delta (%.2fx chat completions), general parser %.0f ns per delta (%.2fx)\n",
        a.label, runs, deltas, static_cast<double>(bytes.size()) / deltas, figures[0],
        figures[0] / base[0], figures[1], figures[1] / base[1]);
  }
}

// usage: bench_stream [deltas (default 20000)] [runs (default 5)]
//                     [full|delta|both (default)|extension|apis|decode]
int main(int argc, char** argv) {
  const int deltas = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string which = argc > 3 ? argv[3] : "both";
  FakeResponse r;
  for (int i = 0; i < deltas; ++i) {
    r.chunks.push_back(FakeLlmServer::sse(R"({"choices":[{"index":0,"delta":{"content":")" +
                                          std::string(1, static_cast<char>('a' + i % 26)) +
                                          R"("},"finish_reason":null}]})"));
  }
  r.chunks.push_back(FakeLlmServer::sse(
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":20000}})"));
  r.chunks.push_back(FakeLlmServer::sse("[DONE]"));
  // The same server life with an empty answer: what start-up, the prompt and shutdown cost,
  // taken off the stream's whole-life CPU time (wait4, microsecond resolution).
  FakeResponse empty;
  empty.chunks.assign(r.chunks.end() - 2, r.chunks.end());
  const auto report = [&](const char* label, const ModeFigures& m, double floor_s,
                          const ModeFigures& base) {
    const double events = static_cast<double>(m.lines - 1);
    std::printf(
        "%s, median of %d runs, %d deltas: %.3f s request to agent_end, %.0f events/s, %.2f MB "
        "of stdout, fake server send %.3f s (ratio %.2f), pipe floor %.3f s (ratio %.2f), peak "
        "RSS %.1f MiB (idle %.1f MiB), server CPU during the stream %.3f s user + %.3f s "
        "system; whole life %.4f s user + %.4f s system, empty answer %.4f s user + %.4f s "
        "system: %.2f us user and %.2f us system per event; the event loop's thread (user + "
        "system, from schedstat) %.2f us per event\n",
        label, runs, deltas, m.seconds, m.events_per_s, m.mbytes, m.send_s, m.seconds / m.send_s,
        floor_s, m.seconds / floor_s, m.rss_mib, m.idle_rss_mib, m.user_s, m.sys_s, m.life_user_s,
        m.life_sys_s, base.life_user_s, base.life_sys_s,
        (m.life_user_s - base.life_user_s) / events * 1e6,
        (m.life_sys_s - base.life_sys_s) / events * 1e6, m.loop_us_per_event);
  };
  if (which == "full" || which == "both") {
    const ModeFigures full = measure(r, runs, "", "full");
    // The same lines with nothing but write(2) behind them: what any writer of these bytes
    // pays.
    const double floor_s = floor_median(full.lengths, runs, "full");
    const double cat_s = cat_floor_median(full.lengths, runs, "full");
    report("full", full, floor_s, measure(empty, runs, "", "full, empty answer"));
    std::printf("full: cat of the same bytes %.3f s; Rebound/cat ratio %.2f (goal within 1.2)\n",
                cat_s, full.seconds / cat_s);
  }
  if (which == "apis") {
    compare_apis(r, deltas, runs);
    return 0;
  }
  if (which == "decode") {
    decode_apis(r, deltas, runs);
    return 0;
  }
  if (which == "extension") {
    // One extension subscribed to every event in the delta form (extensions.md section 11): the
    // server's CPU during the stream against the same delta stream without it.
    const std::string delta = R"({"id":"f","type":"set_event_filter","messageUpdates":"delta"})";
    const ModeFigures without = measure(r, runs, delta, "delta, no extension");
    const ModeFigures with =
        measure(r, runs,
                R"({"id":"x","type":"get_extensions","wait":true})"
                "\n" +
                    delta,
                "delta, one extension",
                {"--extension",
                 "exec python3 " + std::string(REBOUND_SOURCE_DIR) + "/bench/ext_gate.py sink"});
    // The server's threads from the prompt until all is written (the extension's own CPU, which
    // wait4's whole-life figures would include, is not the server's).
    const double a = without.threads_s, b = with.threads_s;
    std::printf(
        "forwarding every event (delta form) to one extension, medians of %d runs, %d deltas: "
        "server CPU (all threads, schedstat) from the prompt until everything is written %.4f s "
        "without, %.4f s with (%+.1f %%); target at most +15 %%\n",
        runs, deltas, a, b, (b - a) / a * 100);
    return 0;
  }
  if (which == "delta" || which == "both") {
    const ModeFigures delta = measure(
        r, runs, R"({"id":"f","type":"set_event_filter","messageUpdates":"delta"})", "delta");
    const double floor_s = floor_median(delta.lengths, runs, "delta");
    report("delta", delta, floor_s,
           measure(empty, runs, R"({"id":"f","type":"set_event_filter","messageUpdates":"delta"})",
                   "delta, empty answer"));
  }
  return 0;
}
