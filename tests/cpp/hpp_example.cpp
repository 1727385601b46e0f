#include "neardup.hpp"
#include <cstdio>
#include <string>

int main() {
  try {
    neardup::Options opts;
    opts.sync_writes(false);  // faster; survives a process crash, not a power loss
    neardup::Index ix = neardup::Index::open("example-index", opts);

    std::string body = "<html><body><article><p>The river rose two metres overnight, and the "
                       "town council closed the old bridge before dawn.</p><p>Engineers will "
                       "inspect its piers once the water falls, the mayor said on Tuesday.</p>"
                       "</article></body></html>";
    for (const char* key : {"https://a.example/flood", "https://b.example/copy"}) {
      neardup::Verdict v = ix.insert(neardup::PageRef(key, body));
      std::printf("%s: duplicate=%d cluster=%u representative=%s resemble=%.2f\n", key,
                  v.duplicate, *v.cluster_id, v.representative->c_str(), v.resemble);
    }
    for (const neardup::CursorItem& c : ix.clusters())
      std::printf("cluster %u: %s, %llu page(s)\n", c.cluster_id, c.key.c_str(),
                  static_cast<unsigned long long>(c.size));
    if (std::optional<neardup::Record> r = ix.find("https://c.example/none"))
      std::printf("unexpected: %s\n", r->key.c_str());
    neardup::Deletion d = ix.erase("https://a.example/flood");
    std::printf("deleted a representative: %d; its cluster is led by %s\n", d.was_representative,
                d.representative.value_or("nobody").c_str());
    ix.close();
  } catch (const neardup::Error& e) {  // e.status(): ND_*; e.what(): "ND_…: message"
    std::fprintf(stderr, "neardup: %s\n", e.what());
    return 1;
  }
  return 0;
}
