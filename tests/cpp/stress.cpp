// Concurrency stress through the C ABI (issue "Reliability you can prove", point 5): 8 C++
// threads share one handle for a bounded time — inserts, replaces, deletes, batches, queries,
// look-ups, cursors — then the index checks clean and every thread's keys are as it left them.
// Built with ASan+UBSan by tests/ffi_cpp.rs.
//
// Usage: stress DIR [SECONDS]   Prints "stress: ok" and exits 0 when every check holds.

#include <neardup.h>

#include "expect.hpp"
#include "pages.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using testpages::paragraph;

// Family `f` (shared by all threads), variant `v` (one paragraph rewritten).
std::string body(unsigned f, unsigned v) {
  std::string h = "<html><body>";
  for (unsigned i = 0; i < 6; ++i) h += "<p>" + paragraph(f * 100 + i + (i == v % 6 ? v * 7 : 0)) + "</p>";
  return h + "</body></html>";
}

nd_page page(const std::string& key, const std::string& html) {
  nd_page p{};
  p.key = key.data();
  p.key_len = key.size();
  p.content = reinterpret_cast<const uint8_t*>(html.data());
  p.content_len = html.size();
  p.content_kind = ND_CONTENT_HTML;
  return p;
}

std::atomic<unsigned long> ops{0};

// One thread's work; returns its keys and the body each holds now.
std::map<std::string, std::string> work(nd_index* ix, unsigned t,
                                        std::chrono::steady_clock::time_point until) {
  std::map<std::string, std::string> mine;
  unsigned x = 0x9e3779b9u * (t + 1);
  auto rnd = [&x](unsigned n) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x % n;
  };
  while (std::chrono::steady_clock::now() < until) {
    ops++;
    const std::string key = "t" + std::to_string(t) + "-k" + std::to_string(rnd(30));
    const unsigned op = rnd(100);
    if (op < 40) {
      const std::string b = body(rnd(10), rnd(1000));
      nd_page p = page(key, b);
      nd_verdict v{};
      OK(nd_index_insert(ix, &p, &v));
      nd_verdict_free(&v);
      mine[key] = b;
    } else if (op < 55) {
      nd_deletion d{};
      const nd_status s = nd_index_delete(ix, key.data(), key.size(), &d);
      EXPECT(s == ND_OK || s == ND_NOT_FOUND);
      EXPECT((s == ND_OK) == (mine.count(key) == 1));
      nd_deletion_free(&d);
      mine.erase(key);
    } else if (op < 63) {
      std::vector<std::string> keys, bodies;
      for (int i = 0; i < 5; ++i) {
        keys.push_back("t" + std::to_string(t) + "-b" + std::to_string(i));
        bodies.push_back(body(rnd(10), rnd(1000)));
      }
      std::vector<nd_page> pages;
      for (size_t i = 0; i < keys.size(); ++i) pages.push_back(page(keys[i], bodies[i]));
      std::vector<nd_verdict> vs(pages.size());
      std::vector<nd_status> st(pages.size(), ND_PANIC);
      std::vector<nd_str> msg(pages.size(), nd_str{nullptr, 0});
      OK(nd_index_insert_batch(ix, pages.data(), pages.size(), ND_ORDER_INPUT, vs.data(),
                               st.data(), msg.data(), nullptr, nullptr));
      for (size_t i = 0; i < pages.size(); ++i) {
        EXPECT(st[i] == ND_OK);
        nd_verdict_free(&vs[i]);
        nd_str_free(&msg[i]);
        mine[keys[i]] = bodies[i];
      }
    } else if (op < 78) {
      const std::string b = body(rnd(10), rnd(1000));
      nd_verdict v{};
      OK(nd_index_query(ix, reinterpret_cast<const uint8_t*>(b.data()), b.size(),
                        ND_CONTENT_HTML, &v));
      nd_verdict_free(&v);
    } else if (op < 92) {
      nd_record r{};
      const nd_status s = nd_index_get(ix, key.data(), key.size(), &r);
      EXPECT(s == ND_OK || s == ND_NOT_FOUND);
      EXPECT((s == ND_OK) == (mine.count(key) == 1));
      nd_record_free(&r);
    } else {
      nd_cursor* c = nullptr;
      OK(nd_index_clusters(ix, &c));
      nd_cursor_item item{};
      bool has = true;
      for (int i = 0; i < 10 && has; ++i) {
        OK(nd_cursor_next(c, &item, &has));
        if (has) EXPECT(item.size > 0 && item.key_len > 0);
      }
      nd_cursor_free(c);
    }
  }
  return mine;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: stress DIR [SECONDS]\n");
    return 2;
  }
  const std::string path = std::string(argv[1]) + "/ix";
  const int seconds = argc > 2 ? std::atoi(argv[2]) : 3;
  nd_options* opts = nullptr;
  OK(nd_options_new(&opts));
  OK(nd_options_set_sync_writes(opts, false));
  nd_index* ix = nullptr;
  OK(nd_index_open(path.data(), path.size(), opts, &ix));
  nd_options_free(opts);

  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::vector<std::map<std::string, std::string>> kept(8);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 8; ++t)
    threads.emplace_back([&, t] { kept[t] = work(ix, t, until); });
  for (auto& th : threads) th.join();

  uint64_t problems = 1;
  OK(nd_index_check(ix, &problems, nullptr));
  EXPECT(problems == 0);
  uint64_t live = 0;
  for (auto& mine : kept) {
    for (auto& [key, b] : mine) {
      nd_record r{};
      OK(nd_index_get(ix, key.data(), key.size(), &r));
      nd_record_free(&r);
      // An unchanged re-insert of the body this thread left: the index holds that version.
      nd_page p = page(key, b);
      nd_verdict v{};
      OK(nd_index_insert(ix, &p, &v));
      EXPECT(v.unchanged);
      nd_verdict_free(&v);
    }
    live += mine.size();
  }
  uint64_t n = 0;
  OK(nd_index_len(ix, &n));
  EXPECT(n == live);
  OK(nd_index_close(ix));
  nd_index_free(ix);
  std::printf("stress: ok (%lu operations, %llu pages live)\n", ops.load(),
              static_cast<unsigned long long>(live));
  return 0;
}
