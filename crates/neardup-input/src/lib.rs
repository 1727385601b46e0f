//! Reading pages from crawl files, as the `neardup` command line and `neardup.ray`'s S1 read
//! them: JSONL, WARC or ARC, gzip or plain ([`input::open_source`]). Archive records are read by
//! [`warc`], HTTP payloads decoded by [`http`]. Bad input never stops a read: a damaged record is
//! reported with its place and skipped.

pub mod http;
pub mod input;
pub mod record;
pub mod warc;
