//! Connected components of a day's candidate graph (SCALEOUT §5 S3, §7.1): a union-find over
//! sparse `u64` node ids fed with edges in bulk, whose partial forests (node → root for the
//! nodes that are not alone) several builders can export and one can merge.
//!
//! Why not a crate: `petgraph::unionfind::UnionFind` and `disjoint-sets` work over dense indices
//! `0..n` fixed up front and keep no component sizes; S3's nodes are sparse `u64` ids (a kind tag
//! in the top bits, a page id, a row, a key index) that arrive with the edges. The structure here
//! is theirs (union by size, path halving) behind a map from node id to dense index.

use rustc_hash::FxHashMap;

/// A union-find over `u64` node ids, built from edges in bulk (SCALEOUT §5 S3).
///
/// Nodes are numbered densely in the order they are first seen; components are numbered in
/// the order of their first-seen node, so that the same edges in the same order give the same
/// component ids.
#[derive(Debug, Default, Clone)]
pub struct Components {
    index: FxHashMap<u64, u32>,
    nodes: Vec<u64>,
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl Components {
    /// An empty union-find.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many distinct nodes were seen.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no node was seen.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn slot(&mut self, node: u64) -> u32 {
        let next = self.nodes.len() as u32;
        let slot = *self.index.entry(node).or_insert(next);
        if slot == next {
            self.nodes.push(node);
            self.parent.push(next);
            self.size.push(1);
        }
        slot
    }

    fn root(&mut self, mut x: u32) -> u32 {
        // Path halving: every other node on the way points to its grandparent.
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    fn join(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra == rb {
            return;
        }
        // Union by size; on a tie the earlier-seen root stays the root.
        let (big, small) = match self.size[ra as usize].cmp(&self.size[rb as usize]) {
            std::cmp::Ordering::Less => (rb, ra),
            std::cmp::Ordering::Greater => (ra, rb),
            std::cmp::Ordering::Equal => (ra.min(rb), ra.max(rb)),
        };
        self.parent[small as usize] = big;
        self.size[big as usize] = self.size[big as usize].saturating_add(self.size[small as usize]);
    }

    /// Adds nodes that may stay alone (each a component of one unless an edge joins it).
    pub fn add_nodes(&mut self, nodes: &[u64]) {
        for &n in nodes {
            self.slot(n);
        }
    }

    /// Joins `a[i]` and `b[i]` for every `i` (the shorter slice's length).
    pub fn add_edges(&mut self, a: &[u64], b: &[u64]) {
        for (&x, &y) in a.iter().zip(b) {
            let (sx, sy) = (self.slot(x), self.slot(y));
            self.join(sx, sy);
        }
    }

    /// Adds nodes each weighing `weights[i]` (the shorter slice's length): a component's size
    /// is its nodes' weight, a node seen before weighing 1 ([`Self::add_edges_capped`] reads
    /// it). A node already seen keeps its weight.
    pub fn add_weighted_nodes(&mut self, nodes: &[u64], weights: &[u32]) {
        for (&n, &w) in nodes.iter().zip(weights) {
            let before = self.nodes.len();
            let s = self.slot(n);
            if self.nodes.len() > before {
                self.size[s as usize] = w;
            }
        }
    }

    /// Joins `a[i]` and `b[i]` in order, each only when the joined component would weigh at
    /// most `cap` (SCALEOUT §7.1 option (2): what is joined first is kept, what would pass the
    /// cap is cut); nodes not seen before weigh 1. Returns the edges refused.
    pub fn add_edges_capped(&mut self, a: &[u64], b: &[u64], cap: u64) -> u64 {
        let mut refused = 0;
        for (&x, &y) in a.iter().zip(b) {
            let (sx, sy) = (self.slot(x), self.slot(y));
            let (rx, ry) = (self.root(sx), self.root(sy));
            if rx == ry {
                continue;
            }
            if u64::from(self.size[rx as usize]) + u64::from(self.size[ry as usize]) > cap {
                refused += 1;
                continue;
            }
            self.join(rx, ry);
        }
        refused
    }

    /// Whether `a` and `b` are in one component (false for a node never seen).
    pub fn connected(&mut self, a: u64, b: u64) -> bool {
        match (self.index.get(&a).copied(), self.index.get(&b).copied()) {
            (Some(x), Some(y)) => self.root(x) == self.root(y),
            _ => a == b && self.index.contains_key(&a),
        }
    }

    /// The partial forest: `(node, root)` for every node not alone in its component, the root
    /// included (as `(root, root)`), in first-seen order. Another builder's
    /// [`merge_forest`](Self::merge_forest) of it gives the same joins as these edges did.
    pub fn forest(&mut self) -> (Vec<u64>, Vec<u64>) {
        let mut nodes = Vec::new();
        let mut roots = Vec::new();
        for i in 0..self.nodes.len() as u32 {
            let r = self.root(i);
            if self.size[r as usize] > 1 {
                nodes.push(self.nodes[i as usize]);
                roots.push(self.nodes[r as usize]);
            }
        }
        (nodes, roots)
    }

    /// Merges a partial forest exported by [`forest`](Self::forest) (of this or another builder).
    pub fn merge_forest(&mut self, nodes: &[u64], roots: &[u64]) {
        self.add_edges(nodes, roots);
    }

    /// Every node seen with its component id (dense, in the order of each component's
    /// first-seen node), in first-seen order; and the size of each component.
    pub fn labels(&mut self) -> (Vec<u64>, Vec<u32>, Vec<u32>) {
        let mut id_of_root: Vec<u32> = vec![u32::MAX; self.nodes.len()];
        let mut labels = Vec::with_capacity(self.nodes.len());
        let mut sizes = Vec::new();
        for i in 0..self.nodes.len() as u32 {
            let r = self.root(i) as usize;
            if id_of_root[r] == u32::MAX {
                id_of_root[r] = sizes.len() as u32;
                sizes.push(self.size[r]);
            }
            labels.push(id_of_root[r]);
        }
        (self.nodes.clone(), labels, sizes)
    }
}

/// The pairs `(i, j)`, `i < j`, of `hashes` whose simhashes differ in at most `distance` bits,
/// each once, sorted. Hashes are compared only when they agree on one of `distance + 1` blocks of
/// bits, which two hashes within the distance do (pigeonhole); equal hashes pair too.
pub fn close_simhash_pairs(hashes: &[u64], distance: u32) -> Vec<(u32, u32)> {
    let blocks = distance.min(63) + 1;
    let width = 64 / blocks;
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let mut pairs = Vec::new();
    let mut buckets: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for b in 0..blocks {
        buckets.clear();
        for (i, &h) in hashes.iter().enumerate() {
            buckets
                .entry((h >> (b * width)) & mask)
                .or_default()
                .push(i as u32);
        }
        for members in buckets.values() {
            for (n, &i) in members.iter().enumerate() {
                for &j in &members[n + 1..] {
                    if (hashes[i as usize] ^ hashes[j as usize]).count_ones() <= distance {
                        pairs.push((i.min(j), i.max(j)));
                    }
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A reference: components by repeated relabelling.
    fn reference(n: u64, edges: &[(u64, u64)]) -> Vec<u64> {
        let mut label: Vec<u64> = (0..n).collect();
        loop {
            let mut changed = false;
            for &(a, b) in edges {
                let m = label[a as usize].min(label[b as usize]);
                for x in [a, b] {
                    if label[x as usize] != m {
                        label[x as usize] = m;
                        changed = true;
                    }
                }
            }
            if !changed {
                return label;
            }
        }
    }

    #[test]
    fn edges_join_and_sizes_count() {
        let mut c = Components::new();
        c.add_nodes(&[100]);
        c.add_edges(&[1, 2, 7], &[2, 3, 8]);
        assert!(c.connected(1, 3));
        assert!(!c.connected(1, 7));
        assert!(!c.connected(1, 999));
        let (nodes, labels, sizes) = c.labels();
        assert_eq!(nodes, vec![100, 1, 2, 3, 7, 8]);
        assert_eq!(labels, vec![0, 1, 1, 1, 2, 2]);
        assert_eq!(sizes, vec![1, 3, 2]);
    }

    #[test]
    fn capped_edges_join_while_the_weights_fit() {
        let mut c = Components::new();
        c.add_weighted_nodes(&[1, 2, 3, 4], &[3, 2, 2, 5]);
        // 1+2 = 5 fits a cap of 7; then 3 would make 7 (fits); 4 would make 12 (cut); 5 is
        // new and weighs 1 but the component is full.
        let refused = c.add_edges_capped(&[1, 2, 3, 1, 6], &[2, 3, 4, 5, 7], 7);
        assert_eq!(refused, 2);
        assert!(c.connected(1, 3) && !c.connected(1, 4) && !c.connected(1, 5));
        assert!(c.connected(6, 7));
        let (nodes, _, sizes) = c.labels();
        assert_eq!(nodes, vec![1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(sizes, vec![7, 5, 1, 2]);
        // An edge inside one component is no cut; a node seen before keeps its weight.
        assert_eq!(c.add_edges_capped(&[1], &[3], 7), 0);
        c.add_weighted_nodes(&[4], &[1]);
        assert_eq!(c.add_edges_capped(&[4], &[5], 6), 0);
        assert_eq!(c.labels().2, vec![7, 6, 2]);
    }

    #[test]
    fn forests_of_several_builders_merge_into_the_whole() {
        let mut left = Components::new();
        left.add_edges(&[1, 3], &[2, 4]);
        left.add_nodes(&[50]);
        let mut right = Components::new();
        right.add_edges(&[2, 9], &[3, 10]);
        let mut all = Components::new();
        for part in [&mut left, &mut right] {
            let (n, r) = part.forest();
            all.merge_forest(&n, &r);
        }
        let (nodes, _, sizes) = all.labels();
        assert!(!nodes.contains(&50), "a lone node is not in a forest");
        assert_eq!(sizes, vec![4, 2]);
        assert!(all.connected(1, 4));
        assert!(all.connected(9, 10));
    }

    #[test]
    fn close_simhashes_pair_within_the_distance_inclusive() {
        let hashes = [0u64, 0b111, 0b1111, u64::MAX, 0];
        assert_eq!(
            close_simhash_pairs(&hashes, 3),
            vec![(0, 1), (0, 4), (1, 2), (1, 4)]
        );
        assert_eq!(close_simhash_pairs(&hashes, 0), vec![(0, 4)]);
    }

    proptest! {
        #[test]
        fn components_equal_the_reference(
            n in 1u64..40,
            raw in proptest::collection::vec((0u64..40, 0u64..40), 0..80),
            cut in 0usize..80,
        ) {
            let edges: Vec<(u64, u64)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).collect();
            let want = reference(n, &edges);
            // One builder, or two whose forests are merged: the same partition of the nodes.
            let cut = cut.min(edges.len());
            let mut one = Components::new();
            let mut two = Components::new();
            let (mut x, mut y) = (Components::new(), Components::new());
            let all: Vec<u64> = (0..n).collect();
            one.add_nodes(&all);
            two.add_nodes(&all);
            let (a, b): (Vec<u64>, Vec<u64>) = edges.iter().copied().unzip();
            one.add_edges(&a, &b);
            x.add_edges(&a[..cut], &b[..cut]);
            y.add_edges(&a[cut..], &b[cut..]);
            for part in [&mut x, &mut y] {
                let (f, r) = part.forest();
                two.merge_forest(&f, &r);
            }
            for c in [&mut one, &mut two] {
                let (nodes, labels, sizes) = c.labels();
                prop_assert_eq!(nodes.len() as u64, n);
                for (i, &u) in nodes.iter().enumerate() {
                    for (j, &v) in nodes.iter().enumerate() {
                        prop_assert_eq!(labels[i] == labels[j], want[u as usize] == want[v as usize]);
                    }
                    let members = labels.iter().filter(|&&l| l == labels[i]).count();
                    prop_assert_eq!(sizes[labels[i] as usize] as usize, members);
                }
            }
        }

        #[test]
        fn close_simhash_pairs_equal_all_pairs(
            hashes in proptest::collection::vec(any::<u64>().prop_map(|h| h & 0xFFFF_0000_0000_00FF), 0..30),
            distance in 0u32..8,
        ) {
            let mut want = Vec::new();
            for i in 0..hashes.len() {
                for j in i + 1..hashes.len() {
                    if (hashes[i] ^ hashes[j]).count_ones() <= distance {
                        want.push((i as u32, j as u32));
                    }
                }
            }
            prop_assert_eq!(close_simhash_pairs(&hashes, distance), want);
        }
    }
}
