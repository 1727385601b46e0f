//! Sentence fingerprints (seed 000 §4.2, "可能相似子集的计算", second stage).
//!
//! 1. Keep the sentences wider than X (here `min_sentence_width`, in GBK bytes) and MD5 each
//!    (its text without white space, see [`sentence_digest`]).
//! 2. Group the distinct digests by `digest mod m` (the digest read as a big-endian 128-bit
//!    integer).
//! 3. In each group take the Y smallest digests; if the group has fewer than Y, or their sentences
//!    together are narrower than Z (`min_cover_width`), the group gives no fingerprint. Otherwise
//!    the fingerprint is the MD5 of those Y digests (in ascending order of the original digest, so
//!    the same sentences give the same fingerprint whichever rotation found them).
//! 4. Rotate every digest left by one byte and repeat, 16 rotations in all: at most 16 × m
//!    fingerprints (112 with m = 7). Duplicates are removed; the list is sorted.
//!
//! Two pages sharing one fingerprint are *possibly similar*.

use md5::{Digest, Md5};

use super::md5x8;
use crate::text::Sentence;

/// A 128-bit sentence fingerprint.
pub type Fingerprint = u128;

/// The parameters of sentence fingerprints and clause keys (seed 000 §4.2), as
/// `SignatureConfig` holds them (its `sentence_params()`; widths in GBK bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentenceParams {
    /// X: sentences (or clauses) narrower than this are not fingerprinted.
    pub min_sentence_width: u32,
    /// m: digests are grouped by `digest mod m`.
    pub groups: u32,
    /// Y: how many smallest distinct digests of a group make one fingerprint.
    pub sentences_per_fingerprint: u32,
    /// Z: the Y units must together be at least this wide.
    pub min_cover_width: u32,
    /// How many byte rotations of the digests are used, 1 to 16.
    pub rotations: u32,
    /// Fingerprint clauses rather than whole sentences.
    pub clause_units: bool,
    /// The smallest winnowing window of the local keys ([`local_minima`]).
    pub local_window: u32,
    /// Local keys per page, about; 0 turns them off.
    pub local_keys: u32,
    /// A text of at most `local_window` units keys every unit ([`containment_keys`]).
    pub short_page_keys: bool,
    /// One in this many unit digests (content-defined) is a key too ([`containment_keys`]);
    /// 0: none.
    pub sampled_keys: u32,
}

/// Computes the sentence fingerprints of a normalized text (see the module docs).
pub fn sentence_fingerprints(
    text: &str,
    sentences: &[Sentence],
    cfg: &SentenceParams,
) -> Vec<Fingerprint> {
    fingerprints_and_sketch(text, sentences, cfg, 0).0
}

/// The `k` smallest distinct unit digests of a text (a bottom-k sketch of its clauses or
/// sentences), sorted. Two pages that share one of them share a whole unit of text.
pub fn unit_sketch(
    text: &str,
    sentences: &[Sentence],
    cfg: &SentenceParams,
    k: usize,
) -> Vec<u128> {
    let mut digests = unit_digests(text, sentences, cfg);
    digests.truncate(k);
    digests.into_iter().map(|(d, _)| d).collect()
}

/// The sentence fingerprints and the clause keys of a text, from one pass over its units. The
/// clause keys are the bottom-`k` sketch plus, when `k > 0`, the local keys of [`local_minima`]
/// (with `cfg.local_keys > 0`) and the containment keys of [`containment_keys`]; sorted and
/// distinct.
pub fn fingerprints_and_sketch(
    text: &str,
    sentences: &[Sentence],
    cfg: &SentenceParams,
    k: usize,
) -> (Vec<Fingerprint>, Vec<u128>) {
    let ordered = ordered_unit_digests(text, sentences, cfg);
    let mut sketch = if k > 0 && cfg.local_keys > 0 {
        local_minima(&ordered, cfg.local_window as usize, cfg.local_keys as usize)
    } else {
        Vec::new()
    };
    if k > 0 {
        sketch.extend(containment_keys(&ordered, cfg));
    }
    let digests = sorted_distinct(ordered);
    sketch.extend(digests.iter().take(k).map(|d| d.0));
    sketch.sort_unstable();
    sketch.dedup();
    let mut fps: Vec<Fingerprint> = group_fingerprints_of(&digests, cfg)
        .into_iter()
        .map(|g| g.2)
        .collect();
    fps.sort_unstable();
    fps.dedup();
    (fps, sketch)
}

/// Local keys of a long text: winnowing (Schleimer, Wilkerson and Aiken 2003; the "winnowing"
/// of seed 002) over the sequence of unit digests in text order — the smallest digest of every
/// `w` consecutive units, the rightmost on a tie, each position once — sorted and distinct.
///
/// The fingerprints and the sketch are global minima of a page, so a chapter shares none of them
/// with the whole manual it sits in (issue: "containment in long documents has no candidates").
/// Winnowing guarantees a shared key for every run of at least `w` units the two texts share.
/// The window grows with the text so that a page gives at most about `max_keys` keys
/// (winnowing selects about `2 / (w + 1)` of the positions): `w = max(min_window, ⌈2n / max_keys⌉)`
/// for `n` units. A shorter text thus uses a window no larger than a longer one's, and the
/// smallest digest of a longer text's window is also the smallest of every shorter window
/// inside it that holds it: a chapter still shares a key with the manual wherever they share a
/// run of the manual's window. Texts of at most `min_window` units give none (their minimum is
/// already in the sketch).
pub fn local_minima(ordered: &[(u128, u32)], min_window: usize, max_keys: usize) -> Vec<u128> {
    let n = ordered.len();
    let min_window = min_window.max(1);
    if n <= min_window || max_keys == 0 {
        return Vec::new();
    }
    let w = min_window.max((2 * n).div_ceil(max_keys));
    let mut out: Vec<u128> = Vec::new();
    // A monotone deque of positions whose digests increase; the front is the window's minimum
    // (the rightmost of equal minima, since equal digests replace older ones at the back).
    let mut deque: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut last: Option<usize> = None;
    for i in 0..n {
        while deque.back().is_some_and(|&j| ordered[j].0 >= ordered[i].0) {
            deque.pop_back();
        }
        deque.push_back(i);
        if deque.front().is_some_and(|&j| j + w <= i) {
            deque.pop_front();
        }
        if i + 1 >= w {
            if let Some(&j) = deque.front() {
                if last != Some(j) {
                    out.push(ordered[j].0);
                    last = Some(j);
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    // Distinct digests repeat in texts that repeat themselves; the bound holds for any input.
    out.truncate(2 * max_keys);
    out
}

/// At most this many sampled clause keys a page (`SignatureConfig::sampled_keys`): the
/// smallest, for pages of more than about `MAX_SAMPLED_KEYS · sampled_keys` units (16,384 at the
/// default: some 700 KB of English).
pub const MAX_SAMPLED_KEYS: usize = 1024;

/// Containment keys of a text (issue #35; seed 000 §4.4, the contain rate), from its unit
/// digests in text order: keys that a contained page and the page containing it share however
/// long the container is.
///
/// The bottom-k sketch and the fingerprints are global minima of a page, and the local keys are
/// minima of windows that grow with the text ([`local_minima`]): a short page (a help topic, a
/// module reference, a chapter of a one-page manual) sitting inside a long one shares a local
/// key only where one of the long page's windows has its smallest unit inside the short page's
/// span, and that unit among the short page's own `k` smallest. On natural-dev two thirds of the
/// containment pairs found no candidate at all for that reason. Two keys fix it:
/// - `cfg.short_page_keys`: a text of at most `local_window` units (no local keys of its own)
///   keys *every* unit, so any unit of its span the long page picks is shared;
/// - `cfg.sampled_keys = p > 0`: every text keys the units whose digest is `0 mod p` (low 64
///   bits) — a choice made by the unit alone, so the sampled units of a span are the same in
///   the excerpt and in the whole page; about `n / p` keys for `n` units, at most
///   [`MAX_SAMPLED_KEYS`] (the smallest).
///
/// Unsorted, possibly repeating (the caller sorts and dedups the clause keys).
pub fn containment_keys(ordered: &[(u128, u32)], cfg: &SentenceParams) -> Vec<u128> {
    let mut out: Vec<u128> = Vec::new();
    if cfg.short_page_keys && ordered.len() <= cfg.local_window as usize {
        out.extend(ordered.iter().map(|d| d.0));
    }
    if cfg.sampled_keys > 0 {
        let p = u64::from(cfg.sampled_keys);
        let mut sampled: Vec<u128> = ordered
            .iter()
            .map(|d| d.0)
            .filter(|&d| (d as u64).is_multiple_of(p))
            .collect();
        if sampled.len() > MAX_SAMPLED_KEYS {
            sampled.sort_unstable();
            sampled.dedup();
            sampled.truncate(MAX_SAMPLED_KEYS);
        }
        out.extend(sampled);
    }
    out
}

/// The digests of the fingerprint units of a text (sentences, or clauses), with their widths,
/// sorted and distinct.
fn unit_digests(text: &str, sentences: &[Sentence], cfg: &SentenceParams) -> Vec<(u128, u32)> {
    sorted_distinct(ordered_unit_digests(text, sentences, cfg))
}

fn sorted_distinct(mut digests: Vec<(u128, u32)>) -> Vec<(u128, u32)> {
    digests.sort_unstable();
    digests.dedup_by_key(|d| d.0);
    digests
}

/// Calls `f` with each fingerprint unit of a text (a sentence, or a clause of one, at least
/// `min_sentence_width` wide) and its width, in text order.
fn for_each_unit(
    text: &str,
    sentences: &[Sentence],
    cfg: &SentenceParams,
    mut f: impl FnMut(&str, u32),
) {
    for s in sentences {
        let st = s.text(text);
        if cfg.clause_units {
            // Clauses end at ',' and ':' (ASCII, so a byte split keeps UTF-8 whole).
            let mut from = 0;
            for end in
                memchr::memchr2_iter(b',', b':', st.as_bytes()).chain(std::iter::once(st.len()))
            {
                let clause = &st[from..end];
                from = end + 1;
                let w = crate::text::width_without_spaces(clause);
                if w >= cfg.min_sentence_width {
                    f(clause, w);
                }
            }
        } else if s.width >= cfg.min_sentence_width {
            f(st, s.width);
        }
    }
}

/// The number of fingerprint units of a text (those [`fingerprints_and_sketch`] hashes), without
/// hashing them.
pub fn unit_count(text: &str, sentences: &[Sentence], cfg: &SentenceParams) -> usize {
    let mut n = 0;
    for_each_unit(text, sentences, cfg, |_, _| n += 1);
    n
}

/// About how many clause keys [`fingerprints_and_sketch`] gives a text of `units` fingerprint
/// units (at most; repeated units give fewer): every unit for a short text
/// ([`containment_keys`]), else the bottom-`k` sketch or the local keys ([`local_minima`]: about
/// `2n / (w + 1)`; they hold the sketch's digests), whichever are more, and the sampled keys
/// (`n / sampled_keys`). What candidate ranking counts for
/// a stored page whose keys it cannot read (seed 000 §4.4, the share of the shorter page).
pub fn clause_key_count(units: usize, cfg: &SentenceParams, k: usize) -> usize {
    if k == 0 {
        return 0;
    }
    let window = cfg.local_window.max(1) as usize;
    if cfg.short_page_keys && units <= window {
        return units;
    }
    let max_local = cfg.local_keys as usize;
    let local = if max_local > 0 && units > window {
        let w = window.max((2 * units).div_ceil(max_local));
        (2 * units / (w + 1)).min(2 * max_local)
    } else {
        0
    };
    let sampled = match cfg.sampled_keys {
        0 => 0,
        p => (units / p as usize).min(MAX_SAMPLED_KEYS),
    };
    // The sketch's smallest digests are minima of the windows holding them: local keys too.
    (units.min(k).max(local) + sampled).min(units)
}

/// The digests of the fingerprint units of a text with their widths, in text order.
fn ordered_unit_digests(
    text: &str,
    sentences: &[Sentence],
    cfg: &SentenceParams,
) -> Vec<(u128, u32)> {
    // Each kept unit's bytes, as `sentence_digest` hashes them, one after another in `kept`;
    // their MD5s are then taken eight at a time (`md5x8`).
    let mut kept: Vec<u8> = Vec::with_capacity(text.len());
    let mut units: Vec<(usize, usize, u32)> = Vec::with_capacity(sentences.len());
    for_each_unit(text, sentences, cfg, |unit, w| {
        let start = kept.len();
        for run in unit.as_bytes().split(|b| is_left_out(*b)) {
            kept.extend_from_slice(run);
        }
        units.push((start, kept.len(), w));
    });
    let msgs: Vec<&[u8]> = units.iter().map(|&(a, b, _)| &kept[a..b]).collect();
    md5x8::md5_many(&msgs)
        .into_iter()
        .zip(&units)
        .map(|(d, u)| (d, u.2))
        .collect()
}

/// Every (rotation, group, fingerprint) a text gives, before duplicates are removed.
#[cfg(test)]
fn group_fingerprints(
    text: &str,
    sentences: &[Sentence],
    cfg: &SentenceParams,
) -> Vec<(u32, u32, Fingerprint)> {
    group_fingerprints_of(&unit_digests(text, sentences, cfg), cfg)
}

/// Every (rotation, group, fingerprint) of a text's sorted distinct unit digests.
fn group_fingerprints_of(
    digests: &[(u128, u32)],
    cfg: &SentenceParams,
) -> Vec<(u32, u32, Fingerprint)> {
    let y = cfg.sentences_per_fingerprint as usize;
    let mut out = Vec::with_capacity((cfg.rotations * cfg.groups) as usize);
    if digests.len() < y {
        return out;
    }
    let m = cfg.groups as usize;
    let mut residues = Residues::new(digests, cfg.groups as u64);
    // Each group's Y smallest rotated digests so far, ascending, with their indices: group `g`
    // holds `best[g·Y .. g·Y + len[g]]`. Rotation is a bijection, so no two are equal and the Y
    // smallest are one set whatever the order of insertion.
    let mut best: Vec<(u128, u32)> = vec![(0, 0); m * y];
    let mut len: Vec<usize> = vec![0; m];
    let mut chosen: Vec<(u128, u32)> = Vec::with_capacity(y);
    // Each fingerprint's message (its Y digests, big-endian, ascending), one after another; their
    // MD5s are taken eight at a time at the end (`md5x8`).
    let mut messages: Vec<u8> = Vec::with_capacity(out.capacity() * 16 * y);
    for rotation in 0..cfg.rotations {
        len.fill(0);
        for (i, &(d, _)) in digests.iter().enumerate() {
            let rotated = d.rotate_left(8 * rotation);
            let g = residues.take(i, rotated);
            let slots = &mut best[g * y..(g + 1) * y];
            let n = len[g];
            if n == y && rotated >= slots[y - 1].0 {
                continue;
            }
            // Insert in order, dropping the largest when the group is full.
            let mut p = n.min(y - 1);
            while p > 0 && slots[p - 1].0 > rotated {
                slots[p] = slots[p - 1];
                p -= 1;
            }
            slots[p] = (rotated, i as u32);
            len[g] = (n + 1).min(y);
        }
        for g in 0..m {
            if len[g] < y {
                continue;
            }
            let slots = &best[g * y..(g + 1) * y];
            let cover: u32 = slots.iter().map(|e| digests[e.1 as usize].1).sum();
            if cover < cfg.min_cover_width {
                continue;
            }
            chosen.clear();
            chosen.extend(slots.iter().map(|e| digests[e.1 as usize]));
            chosen.sort_unstable_by_key(|e| e.0);
            for e in &chosen {
                messages.extend_from_slice(&e.0.to_be_bytes());
            }
            out.push((rotation, g as u32, 0));
        }
    }
    let msgs: Vec<&[u8]> = messages.chunks_exact(16 * y).collect();
    for (o, d) in out.iter_mut().zip(md5x8::md5_many(&msgs)) {
        o.2 = d;
    }
    out
}

/// `rotated mod m` of every digest, rotation after rotation, without a division per digest and
/// rotation (they were a tenth of the signature stage's time). Rotating a 128-bit `x` left by 8
/// bits gives `256·x − top·(2¹²⁸ − 1)` with `top` the byte rotated out, so its residue follows
/// from the previous one by two table look-ups: `(A·r − top·B) mod m` with `A = 256 mod m` and
/// `B = (2¹²⁸ − 1) mod m`.
struct Residues {
    m: u64,
    /// `2⁶⁴ mod m`.
    r64: u64,
    /// `r·A mod m` for each residue `r` (empty when `m` is too large for tables).
    times_a: Vec<usize>,
    /// `(−top·B) mod m` for each byte `top`.
    minus_top_b: Vec<usize>,
    /// The residue of each digest at the current rotation.
    current: Vec<usize>,
}

/// Residue tables are used up to this many groups.
const MAX_TABLE_GROUPS: u64 = 1 << 12;

impl Residues {
    fn new(digests: &[(u128, u32)], m: u64) -> Residues {
        let mut res = Residues {
            m,
            r64: ((1u128 << 64) % m as u128) as u64,
            times_a: Vec::new(),
            minus_top_b: Vec::new(),
            current: Vec::new(),
        };
        if m <= MAX_TABLE_GROUPS {
            let mu = m as usize;
            let a = (256 % m) as usize;
            let b = (u128::MAX % m as u128) as usize;
            res.times_a = (0..mu).map(|r| r * a % mu).collect();
            res.minus_top_b = (0..256).map(|top| (mu - top * b % mu) % mu).collect();
            res.current = digests.iter().map(|&(d, _)| res.direct(d)).collect();
        }
        res
    }

    /// `x mod m` from the two 64-bit halves of `x` (`x = hi·2⁶⁴ + lo`), without a software
    /// 128-bit division.
    #[inline]
    fn direct(&self, x: u128) -> usize {
        let m = self.m;
        ((((x >> 64) as u64 % m) * self.r64 + (x as u64 % m)) % m) as usize
    }

    /// The residue of digest `i` at its current rotation (`rotated`), moving it on to the next.
    #[inline]
    fn take(&mut self, i: usize, rotated: u128) -> usize {
        if self.times_a.is_empty() {
            return self.direct(rotated);
        }
        let r = self.current[i];
        let next = self.times_a[r] + self.minus_top_b[(rotated >> 120) as usize];
        self.current[i] = if next >= self.m as usize {
            next - self.m as usize
        } else {
            next
        };
        r
    }
}

/// The MD5 digest of a sentence with its white space and quotation marks left out, so that
/// spaces put in or taken out by formatting, or quotes a site puts around a quoted paragraph, do
/// not change it.
pub fn sentence_digest(sentence: &str) -> u128 {
    // The kept runs are fed to MD5 one after another: the digest of their concatenation.
    let mut h = Md5::new();
    for run in sentence.as_bytes().split(|b| is_left_out(*b)) {
        h.update(run);
    }
    u128::from_be_bytes(h.finalize().into())
}

/// The bytes a unit digest leaves out: white space (the normalized text has only the ASCII space)
/// and quotation marks.
#[inline]
fn is_left_out(b: u8) -> bool {
    matches!(b, b' ' | b'"' | b'\'')
}

/// MD5 of bytes as a big-endian 128-bit integer.
pub fn md5_u128(bytes: &[u8]) -> u128 {
    u128::from_be_bytes(Md5::digest(bytes).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::split_sentences;

    fn defaults() -> SentenceParams {
        crate::options::SignatureConfig::default().sentence_params()
    }

    fn fps(text: &str) -> Vec<Fingerprint> {
        sentence_fingerprints(text, &split_sentences(text), &defaults())
    }

    fn keys(text: &str) -> (Vec<Fingerprint>, Vec<u128>) {
        let k = crate::options::SignatureConfig::default().sketch_size as usize;
        fingerprints_and_sketch(text, &split_sentences(text), &defaults(), k)
    }

    #[test]
    fn a_chapter_shares_local_keys_with_the_manual_that_contains_it() {
        // A manual of 6,000 distinct sentences and one 400-sentence chapter from its middle:
        // every global signature of the chapter is a minimum the manual's other chapters beat.
        let manual = article(6000);
        let chapter: String = manual.split_inclusive(". ").skip(3000).take(400).collect();
        let (mf, ms) = keys(&manual);
        let (cf, cs) = keys(&chapter);
        assert!(!mf.iter().any(|f| cf.binary_search(f).is_ok()));
        let shared = ms.iter().filter(|k| cs.binary_search(k).is_ok()).count();
        assert!(shared >= 2, "chapter and manual share {shared} clause keys");
        // Bounded: about `local_keys` local keys however long the text, plus the sampled
        // containment keys (one unit in `sampled_keys`).
        let bound = 2 * 256 + 8 + 6000 * 2 / defaults().sampled_keys as usize;
        assert!(ms.len() <= bound, "{} keys", ms.len());
        // Without local and containment keys they share nothing.
        let cfg = SentenceParams {
            local_keys: 0,
            short_page_keys: false,
            sampled_keys: 0,
            ..defaults()
        };
        let (_, ms0) = fingerprints_and_sketch(&manual, &split_sentences(&manual), &cfg, 8);
        let (_, cs0) = fingerprints_and_sketch(&chapter, &split_sentences(&chapter), &cfg, 8);
        assert!(!ms0.iter().any(|k| cs0.binary_search(k).is_ok()));
    }

    #[test]
    fn clause_key_count_counts_the_keys_a_page_gets() {
        let cfg = defaults();
        // The counted units and keys of pages of several lengths, against the keys made: every
        // unit of a short page, a sample (sketch, local, sampled keys) of a longer one.
        for n in [0, 5, 20, 32, 33, 40, 200, 1000, 6000] {
            let text = article(n);
            let sentences = split_sentences(&text);
            let units = unit_count(&text, &sentences, &cfg);
            assert_eq!(units, ordered_unit_digests(&text, &sentences, &cfg).len());
            assert_eq!(units, n);
            let (_, sketch) = keys(&text);
            let counted = clause_key_count(units, &cfg, 8);
            let made = sketch.len();
            assert!(
                counted.abs_diff(made) <= 2 + made / 2,
                "{n} units: {counted} counted, {made} made"
            );
        }
        assert_eq!(clause_key_count(20, &cfg, 8), 20);
        assert_eq!(clause_key_count(20, &cfg, 0), 0);
    }

    #[test]
    fn a_short_page_keys_every_unit_and_excerpts_share_their_sampled_units() {
        let cfg = defaults();
        let ordered = |t: &str| ordered_unit_digests(t, &split_sentences(t), &cfg);
        // A page of at most `local_window` units keys each of them.
        let short = article(20);
        let units = ordered(&short);
        assert_eq!(units.len(), 20);
        let (_, sketch) = keys(&short);
        assert!(units.iter().all(|u| sketch.binary_search(&u.0).is_ok()));
        let (_, longer) = keys(&article(40));
        assert!(
            longer.len() < 40,
            "a longer page keys a sample: {}",
            longer.len()
        );
        // Sampled units are chosen by their digest alone: every excerpt of a long manual, of
        // any length, shares all of its sampled units with the manual.
        let manual = article(6000);
        let (_, mk) = keys(&manual);
        let sampled = |t: &str| {
            let c = SentenceParams {
                short_page_keys: false,
                ..cfg
            };
            containment_keys(&ordered(t), &c)
        };
        let all = sampled(&manual);
        let p = cfg.sampled_keys as usize;
        assert!(
            all.len() > 6000 / (2 * p) && all.len() < 2 * 6000 / p,
            "{}",
            all.len()
        );
        let mut found = 0;
        for (from, len) in [(100, 5), (2000, 12), (3000, 40), (4500, 400)] {
            let excerpt: String = manual.split_inclusive(". ").skip(from).take(len).collect();
            let ek = sampled(&excerpt);
            assert!(ek.iter().all(|k| mk.binary_search(k).is_ok()));
            found += ek.len();
        }
        assert!(found > 0);
        // Off, neither kind of key is made.
        let off = SentenceParams {
            short_page_keys: false,
            sampled_keys: 0,
            ..cfg
        };
        assert!(containment_keys(&ordered(&manual), &off).is_empty());
        assert!(containment_keys(&units, &off).is_empty());
        // Bounded however long the text.
        let dense = SentenceParams {
            sampled_keys: 1,
            ..off
        };
        assert_eq!(
            containment_keys(&ordered(&manual), &dense).len(),
            MAX_SAMPLED_KEYS
        );
    }

    #[test]
    fn winnowing_picks_the_rightmost_minimum_once_per_position() {
        let seq: Vec<(u128, u32)> = [5u128, 3, 7, 3, 9, 8, 1, 6]
            .iter()
            .map(|&d| (d, 20))
            .collect();
        // Windows of 3: [5 3 7]→3@1, [3 7 3]→3@3, [7 3 9]→3@3, [3 9 8]→3@3, [9 8 1]→1@6, [8 1 6]→1@6.
        assert_eq!(local_minima(&seq, 3, 1000), vec![1, 3]);
        // Texts no longer than the window give none.
        assert!(local_minima(&seq[..3], 3, 1000).is_empty());
    }

    fn article(n: usize) -> String {
        (0..n)
            .map(|i| format!("Sentence number {i} tells a different part of the long story here."))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn at_most_112_and_sorted_distinct() {
        let f = fps(&article(200));
        assert!(!f.is_empty() && f.len() <= 112, "{}", f.len());
        assert!(f.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn short_text_gives_none() {
        assert!(fps("too short. far too short.").is_empty());
    }

    #[test]
    fn sentence_order_does_not_matter() {
        let a = article(60);
        let mut parts: Vec<&str> = split_sentences(&a)
            .iter()
            .map(|s| s.text(&a))
            .collect::<Vec<_>>();
        parts.reverse();
        let b = parts.join(" ");
        assert_eq!(fps(&a), fps(&b));
    }

    #[test]
    fn an_edit_changes_only_the_groups_holding_the_sentence() {
        let cfg = SentenceParams {
            clause_units: false,
            ..defaults()
        };
        let a = article(80);
        let sa = split_sentences(&a);
        let victim = sa[37].text(&a).to_string();
        let edited = victim.replacen("different", "distinct", 1);
        let b = a.replacen(&victim, &edited, 1);
        let sb = split_sentences(&b);
        let ga = group_fingerprints(&a, &sa, &cfg);
        let gb = group_fingerprints(&b, &sb, &cfg);
        let (old, new) = (sentence_digest(&victim), sentence_digest(&edited));
        let m = cfg.groups as u128;
        let holds = |rot: u32, g: u32| {
            (old.rotate_left(8 * rot) % m) as u32 == g || (new.rotate_left(8 * rot) % m) as u32 == g
        };
        let mut changed = 0;
        for (rot, g, fp) in &ga {
            let after = gb.iter().find(|x| x.0 == *rot && x.1 == *g).map(|x| x.2);
            if after != Some(*fp) {
                changed += 1;
                assert!(
                    holds(*rot, *g),
                    "rotation {rot} group {g} changed without holding the edit"
                );
            } else {
                assert!(after.is_some());
            }
        }
        assert!(changed > 0 && changed <= 32, "{changed}");
        // And the groups not holding the sentence all kept their fingerprints.
        let untouched = ga.iter().filter(|(r, g, _)| !holds(*r, *g)).count();
        assert!(untouched >= ga.len() - 32);
    }

    #[test]
    fn residues_follow_the_rotations_exactly() {
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        let digests: Vec<(u128, u32)> = (0..50)
            .map(|i| {
                x = x
                    .wrapping_mul(0x2545_f491_4f6c_dd1d_9e37_79b9_7f4a_7c15)
                    .wrapping_add(i);
                (x, 1)
            })
            .collect();
        for m in [1u64, 2, 3, 7, 10, 97, 256, 4096, 5000] {
            let mut res = Residues::new(&digests, m);
            for rotation in 0..16 {
                for (i, &(d, _)) in digests.iter().enumerate() {
                    let rotated = d.rotate_left(8 * rotation);
                    assert_eq!(
                        res.take(i, rotated),
                        (rotated % m as u128) as usize,
                        "m {m}"
                    );
                }
            }
        }
    }

    #[test]
    fn cover_threshold_is_inclusive() {
        // Four sentences of width exactly 25 cover exactly 100; Z = 100 keeps them, 101 does not.
        let text = (1..=4)
            .map(|i| format!("A{}{i}.", "a".repeat(22)))
            .collect::<Vec<_>>()
            .join(" ");
        let text = text.as_str();
        let s = split_sentences(text);
        assert!(s.iter().all(|s| s.width == 25));
        let cfg = SentenceParams {
            groups: 1,
            min_cover_width: 100,
            ..defaults()
        };
        assert_eq!(sentence_fingerprints(text, &s, &cfg).len(), 1);
        let strict = SentenceParams {
            min_cover_width: 101,
            ..cfg
        };
        assert!(sentence_fingerprints(text, &s, &strict).is_empty());
    }
}
