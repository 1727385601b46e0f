//! A format 7 partition as the distributed check and export read it (SCALEOUT §9; issue #34
//! item 5): [`PartitionDb`] over its `u64` ids, so that [`WidePartition::partition_check`] and
//! [`WidePartition::export_asks`] and the rest run the same code as a format 6 partition's.

use rocksdb::{ColumnFamily, DB};

use super::WidePartition;
use crate::merge::layout::Role;
use crate::merge::store::{Consistent, DbSnapshot, PartitionDb};
use crate::storage::codec;
use crate::storage::width::wide_id_key;
use crate::storage::{cf, SimhashTables};
use crate::{Error, Result};

impl PartitionDb for WidePartition {
    type Id = u64;

    fn db(&self) -> &DB {
        &self.db
    }

    fn column(&self, name: &str) -> &ColumnFamily {
        self.cf(name)
    }

    fn simhash_tables(&self) -> &SimhashTables {
        &self.tables
    }

    fn check_process(&self) -> Result<()> {
        self.registration.check_process()
    }

    fn role(&self) -> Result<Option<Role>> {
        Ok(Some(self.partition.role))
    }

    fn keeps_page_clusters(&self) -> bool {
        // Every page's cluster is written with its record (`apply`).
        true
    }

    fn frequent_keys(&self) -> Result<Vec<[u8; 9]>> {
        self.registration.check_process()?;
        Ok(self.frequent_at(&self.db.snapshot())?.into_keys().collect())
    }

    fn consistent(&self) -> Result<Consistent<'_>> {
        // Writes happen under the writer lock: the snapshot holds whole chunks, and the
        // counters and free ids are read from it.
        let snap = {
            let _writer = self.writer.lock();
            self.db.snapshot()
        };
        let c = self.counters_at(&snap)?;
        let (free_docs, free_clusters) = self.free_at(&snap)?;
        Ok(Consistent {
            snap,
            counters: (
                c.next_doc,
                c.next_cluster,
                c.next_seq,
                c.live_docs,
                c.live_clusters,
            ),
            free_docs,
            free_clusters,
        })
    }

    fn filed_keys_at(
        &self,
        snap: &DbSnapshot<'_>,
        id: u64,
        content: u128,
    ) -> Result<Option<Vec<[u8; 9]>>> {
        let k = wide_id_key(id);
        let Some(v) = snap
            .get_cf(self.cf(cf::TEXTS), k)
            .map_err(|e| Error::storage("reading a text", e))?
        else {
            return Ok(None);
        };
        let value = codec::decode_text_value(cf::TEXTS, &k, &v)?;
        self.filed_keys(&value, id, content).map(Some)
    }

    fn decode_simhash(&self, key: &[u8]) -> Option<(u8, u64, u64)> {
        self.tables.decode_wide(key)
    }
}
