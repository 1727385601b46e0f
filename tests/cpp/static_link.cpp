// The embeddable static archive (issue #13, point 2) in a program that also uses another RocksDB:
// linked against `libneardup_embed.a` (scripts/static-lib.sh) and the distribution's `librocksdb`,
// it uses both. Before the archive hid its bundled RocksDB, such a program linked without a
// warning and crashed before `main`.
//
// Usage: static_link DIR   (DIR must exist and be empty)
// Prints "rocksdb <version>" (the version the system library reports, which must be the version
// its headers declare) and "static_link: ok"; exits 0 when every check passed.
#include <neardup.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/version.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

static int failures = 0;

static void expect(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s (neardup's last error: %s)\n", what, nd_last_error());
    ++failures;
  }
}

// The system RocksDB: open a database with a block-based table factory, write, read back.
static void use_system_rocksdb(const std::string &path) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 8 * 1024;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB *raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, path, &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "FAILED: rocksdb::DB::Open: %s\n", s.ToString().c_str());
    ++failures;
    return;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  expect(db->Put(rocksdb::WriteOptions(), "crawl:1", "fetched").ok(), "rocksdb Put");
  std::string value;
  expect(db->Get(rocksdb::ReadOptions(), "crawl:1", &value).ok() && value == "fetched",
         "rocksdb Get returns the value put");
  expect(db->Get(rocksdb::ReadOptions(), "crawl:2", &value).IsNotFound(),
         "rocksdb Get of an absent key is NotFound");
  expect(db->Close().ok(), "rocksdb Close");
}

static nd_status insert(nd_index *ix, const char *key, const std::string &html, nd_verdict *v) {
  nd_page p;
  std::memset(&p, 0, sizeof p);
  p.key = key;
  p.key_len = std::strlen(key);
  p.content = reinterpret_cast<const uint8_t *>(html.data());
  p.content_len = html.size();
  p.content_kind = ND_CONTENT_HTML;
  return nd_index_insert(ix, &p, v);
}

// neardup: open an index, insert a page and a copy of it, query a third.
static void use_neardup(const std::string &path) {
  expect(nd_abi_version() == ND_ABI_VERSION, "the library's ABI version is the header's");
  nd_options *opts = nullptr;
  expect(nd_options_new(&opts) == ND_OK, "nd_options_new");
  nd_index *ix = nullptr;
  nd_status st = nd_index_open(path.data(), path.size(), opts, &ix);
  nd_options_free(opts);
  expect(st == ND_OK, "nd_index_open");
  if (st != ND_OK) return;

  const std::string html =
      "<html><body><article><p>The river rose two metres overnight, and the town council "
      "closed the old bridge before dawn.</p><p>Engineers will inspect its piers once the "
      "water falls, the mayor said on Tuesday.</p></article></body></html>";
  nd_verdict v;
  std::memset(&v, 0, sizeof v);
  expect(insert(ix, "https://a.example/flood", html, &v) == ND_OK, "insert the first page");
  expect(!v.duplicate, "the first page is no duplicate");
  nd_verdict_free(&v);
  expect(insert(ix, "https://b.example/copy", html, &v) == ND_OK, "insert its copy");
  expect(v.duplicate && v.exact, "the copy is an exact duplicate");
  expect(v.similar_to.ptr != nullptr &&
             std::string(v.similar_to.ptr, v.similar_to.len) == "https://a.example/flood",
         "the copy is similar to the first page");
  nd_verdict_free(&v);
  expect(nd_index_query(ix, reinterpret_cast<const uint8_t *>(html.data()), html.size(),
                        ND_CONTENT_HTML, &v) == ND_OK,
         "query");
  expect(v.duplicate, "the query finds the page");
  nd_verdict_free(&v);
  uint64_t len = 0;
  expect(nd_index_len(ix, &len) == ND_OK && len == 2, "two pages held");
  expect(nd_index_close(ix) == ND_OK, "nd_index_close");
  nd_index_free(ix);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  const std::string version = rocksdb::GetRocksVersionAsString(true);
  std::printf("rocksdb %s\n", version.c_str());
  const std::string declared = std::to_string(ROCKSDB_MAJOR) + "." +
                               std::to_string(ROCKSDB_MINOR) + "." +
                               std::to_string(ROCKSDB_PATCH);
  expect(version == declared, "the RocksDB called is the one whose headers were included");
  // Interleaved, so that both libraries' state is live at once.
  use_system_rocksdb(dir + "/rocks");
  use_neardup(dir + "/neardup");
  use_system_rocksdb(dir + "/rocks-again");
  if (failures != 0) return 1;
  std::printf("static_link: ok\n");
  return 0;
}
