//! MD5 (RFC 1321) of many short messages at once, eight to a batch: one message in each 32-bit
//! lane of a 256-bit vector.
//!
//! Seed 000 §4.2 takes an MD5 of every kept sentence (here clause) and of every group's Y digests:
//! about a hundred of each on a dev page, every one a message of one or two 64-byte blocks. One
//! MD5 stream cannot use vector registers (each step needs the one before), but independent
//! messages can: the same 64 steps run on eight lanes. The digests are MD5's, bit for bit (a test
//! holds them to the `md-5` crate); only their computation is batched.
//!
//! No well-kept crate does this (multi-buffer MD5 crates exist only as alphas), so it is here:
//! the lanes are plain `[u32; 8]` arrays, which the compiler turns into AVX2 instructions in the
//! copy compiled for AVX2 and picked at run time; elsewhere the same code runs as it compiles.

/// Lanes of one batch.
#[cfg(target_arch = "x86_64")]
const LANES: usize = 8;

/// RFC 1321 §3.4: the sine table `K[i] = ⌊2³² |sin(i + 1)|⌋`.
#[cfg(target_arch = "x86_64")]
const K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// RFC 1321 §3.3: the initial state A, B, C, D.
#[cfg(target_arch = "x86_64")]
const INIT: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];

/// The steps of one MD5 block (RFC 1321 §3.4) on eight lanes: `$w[j]` holds word `j` of every
/// lane's block, `$st` the lanes' state A, B, C, D. The 64 steps are written out, so each rotation
/// is an immediate (RFC 1321 §3.4's shifts: 7 12 17 22, 5 9 14 20, 4 11 16 23, 6 10 15 21).
#[cfg(target_arch = "x86_64")]
macro_rules! md5_steps {
    ($st:expr, $w:expr) => {{
        use std::arch::x86_64::*;
        let [mut a, mut b, mut c, mut d] = $st;
        let ones = _mm256_set1_epi32(-1);
        macro_rules! step {
            ($f:ident, $a:ident, $b:ident, $c:ident, $d:ident, $g:expr, $i:expr, $s:literal) => {
                let f = $f!($b, $c, $d);
                let t = _mm256_add_epi32(
                    _mm256_add_epi32($a, f),
                    _mm256_add_epi32(_mm256_set1_epi32(K[$i] as i32), $w[$g]),
                );
                let r = _mm256_or_si256(
                    _mm256_slli_epi32::<$s>(t),
                    _mm256_srli_epi32::<{ 32 - $s }>(t),
                );
                $a = _mm256_add_epi32($b, r);
            };
        }
        // F = (b ∧ c) ∨ (¬b ∧ d), G = (b ∧ d) ∨ (c ∧ ¬d), H = b ⊕ c ⊕ d, I = c ⊕ (b ∨ ¬d).
        macro_rules! f {
            ($x:ident, $y:ident, $z:ident) => {
                _mm256_xor_si256($z, _mm256_and_si256($x, _mm256_xor_si256($y, $z)))
            };
        }
        macro_rules! g {
            ($x:ident, $y:ident, $z:ident) => {
                _mm256_xor_si256($y, _mm256_and_si256($z, _mm256_xor_si256($x, $y)))
            };
        }
        macro_rules! h {
            ($x:ident, $y:ident, $z:ident) => {
                _mm256_xor_si256($x, _mm256_xor_si256($y, $z))
            };
        }
        macro_rules! i {
            ($x:ident, $y:ident, $z:ident) => {
                _mm256_xor_si256($y, _mm256_or_si256($x, _mm256_xor_si256($z, ones)))
            };
        }
        step!(f, a, b, c, d, 0, 0, 7); step!(f, d, a, b, c, 1, 1, 12);
        step!(f, c, d, a, b, 2, 2, 17); step!(f, b, c, d, a, 3, 3, 22);
        step!(f, a, b, c, d, 4, 4, 7); step!(f, d, a, b, c, 5, 5, 12);
        step!(f, c, d, a, b, 6, 6, 17); step!(f, b, c, d, a, 7, 7, 22);
        step!(f, a, b, c, d, 8, 8, 7); step!(f, d, a, b, c, 9, 9, 12);
        step!(f, c, d, a, b, 10, 10, 17); step!(f, b, c, d, a, 11, 11, 22);
        step!(f, a, b, c, d, 12, 12, 7); step!(f, d, a, b, c, 13, 13, 12);
        step!(f, c, d, a, b, 14, 14, 17); step!(f, b, c, d, a, 15, 15, 22);
        step!(g, a, b, c, d, 1, 16, 5); step!(g, d, a, b, c, 6, 17, 9);
        step!(g, c, d, a, b, 11, 18, 14); step!(g, b, c, d, a, 0, 19, 20);
        step!(g, a, b, c, d, 5, 20, 5); step!(g, d, a, b, c, 10, 21, 9);
        step!(g, c, d, a, b, 15, 22, 14); step!(g, b, c, d, a, 4, 23, 20);
        step!(g, a, b, c, d, 9, 24, 5); step!(g, d, a, b, c, 14, 25, 9);
        step!(g, c, d, a, b, 3, 26, 14); step!(g, b, c, d, a, 8, 27, 20);
        step!(g, a, b, c, d, 13, 28, 5); step!(g, d, a, b, c, 2, 29, 9);
        step!(g, c, d, a, b, 7, 30, 14); step!(g, b, c, d, a, 12, 31, 20);
        step!(h, a, b, c, d, 5, 32, 4); step!(h, d, a, b, c, 8, 33, 11);
        step!(h, c, d, a, b, 11, 34, 16); step!(h, b, c, d, a, 14, 35, 23);
        step!(h, a, b, c, d, 1, 36, 4); step!(h, d, a, b, c, 4, 37, 11);
        step!(h, c, d, a, b, 7, 38, 16); step!(h, b, c, d, a, 10, 39, 23);
        step!(h, a, b, c, d, 13, 40, 4); step!(h, d, a, b, c, 0, 41, 11);
        step!(h, c, d, a, b, 3, 42, 16); step!(h, b, c, d, a, 6, 43, 23);
        step!(h, a, b, c, d, 9, 44, 4); step!(h, d, a, b, c, 12, 45, 11);
        step!(h, c, d, a, b, 15, 46, 16); step!(h, b, c, d, a, 2, 47, 23);
        step!(i, a, b, c, d, 0, 48, 6); step!(i, d, a, b, c, 7, 49, 10);
        step!(i, c, d, a, b, 14, 50, 15); step!(i, b, c, d, a, 5, 51, 21);
        step!(i, a, b, c, d, 12, 52, 6); step!(i, d, a, b, c, 3, 53, 10);
        step!(i, c, d, a, b, 10, 54, 15); step!(i, b, c, d, a, 1, 55, 21);
        step!(i, a, b, c, d, 8, 56, 6); step!(i, d, a, b, c, 15, 57, 10);
        step!(i, c, d, a, b, 6, 58, 15); step!(i, b, c, d, a, 13, 59, 21);
        step!(i, a, b, c, d, 4, 60, 6); step!(i, d, a, b, c, 11, 61, 10);
        step!(i, c, d, a, b, 2, 62, 15); step!(i, b, c, d, a, 9, 63, 21);
        [a, b, c, d]
    }};
}

/// The MD5 digests of up to eight messages (one a lane), as big-endian 128-bit integers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn batch_avx2(msgs: &[&[u8]], out: &mut [u128]) {
    use std::arch::x86_64::*;
    debug_assert!(msgs.len() <= LANES && out.len() == msgs.len());
    let mut state: [__m256i; 4] = INIT.map(|x| _mm256_set1_epi32(x as i32));
    let nblocks: [usize; LANES] =
        std::array::from_fn(|l| msgs.get(l).map_or(0, |m| blocks_of(m.len())));
    let most = nblocks.iter().copied().max().unwrap_or(0);
    let mut words = [[0u32; 16]; LANES];
    let mut bytes = [0u8; 64];
    for b in 0..most {
        for (l, m) in msgs.iter().enumerate() {
            if b < nblocks[l] {
                padded_block(m, b, &mut bytes);
                for (j, word) in bytes.chunks_exact(4).enumerate() {
                    words[l][j] = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                }
            }
        }
        let w: [__m256i; 16] = std::array::from_fn(|j| {
            let x = |l: usize| words[l][j] as i32;
            _mm256_setr_epi32(x(0), x(1), x(2), x(3), x(4), x(5), x(6), x(7))
        });
        let [a, bb, c, d] = md5_steps!(state, w);
        // A lane whose message has ended keeps its digest: it is masked out of the addition.
        let live = {
            let x = |l: usize| if b < nblocks[l] { -1 } else { 0 };
            _mm256_setr_epi32(x(0), x(1), x(2), x(3), x(4), x(5), x(6), x(7))
        };
        for (s, v) in state.iter_mut().zip([a, bb, c, d]) {
            *s = _mm256_add_epi32(*s, _mm256_and_si256(v, live));
        }
    }
    let mut lanes = [[0u32; LANES]; 4];
    for (j, s) in state.iter().enumerate() {
        lanes[j] = [
            _mm256_extract_epi32::<0>(*s) as u32,
            _mm256_extract_epi32::<1>(*s) as u32,
            _mm256_extract_epi32::<2>(*s) as u32,
            _mm256_extract_epi32::<3>(*s) as u32,
            _mm256_extract_epi32::<4>(*s) as u32,
            _mm256_extract_epi32::<5>(*s) as u32,
            _mm256_extract_epi32::<6>(*s) as u32,
            _mm256_extract_epi32::<7>(*s) as u32,
        ];
    }
    for (l, o) in out.iter_mut().enumerate() {
        let mut d = [0u8; 16];
        for j in 0..4 {
            d[4 * j..4 * j + 4].copy_from_slice(&lanes[j][l].to_le_bytes());
        }
        *o = u128::from_be_bytes(d);
    }
}

/// Blocks of a message of `len` bytes once padded (RFC 1321 §3.1–3.2: a `0x80` byte, zeros, and
/// the bit length in 8 bytes).
#[cfg(target_arch = "x86_64")]
fn blocks_of(len: usize) -> usize {
    (len + 8) / 64 + 1
}

/// Block `b` of the padded message `m`, written into `out`.
#[cfg(target_arch = "x86_64")]
fn padded_block(m: &[u8], b: usize, out: &mut [u8; 64]) {
    let start = b * 64;
    out.fill(0);
    if start < m.len() {
        let n = (m.len() - start).min(64);
        out[..n].copy_from_slice(&m[start..start + n]);
    }
    if (start..start + 64).contains(&m.len()) {
        out[m.len() - start] = 0x80;
    }
    if b + 1 == blocks_of(m.len()) {
        out[56..].copy_from_slice(&((m.len() as u64).wrapping_mul(8)).to_le_bytes());
    }
}

/// The MD5 digest of each message, in order, as big-endian 128-bit integers
/// (`u128::from_be_bytes(md5(m))`). Messages of equal block counts share a batch, so a long one
/// does not hold seven short ones.
// The one unsafe call: to the AVX2 copy, on a CPU that has AVX2.
#[allow(unsafe_code)]
pub(crate) fn md5_many(msgs: &[&[u8]]) -> Vec<u128> {
    let mut out = vec![0u128; msgs.len()];
    if msgs.is_empty() {
        return out;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // Message indices by block count, so that a batch's lanes end together.
        let mut order: Vec<u32> = (0..msgs.len() as u32).collect();
        order.sort_by_key(|&i| blocks_of(msgs[i as usize].len()));
        let mut lane_msgs: [&[u8]; LANES] = [&[]; LANES];
        let mut lane_out = [0u128; LANES];
        for chunk in order.chunks(LANES) {
            for (slot, &i) in lane_msgs.iter_mut().zip(chunk) {
                *slot = msgs[i as usize];
            }
            let n = chunk.len();
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { batch_avx2(&lane_msgs[..n], &mut lane_out[..n]) };
            for (&i, &d) in chunk.iter().zip(&lane_out[..n]) {
                out[i as usize] = d;
            }
        }
        return out;
    }
    for (o, m) in out.iter_mut().zip(msgs) {
        *o = md5_one(m);
    }
    out
}

/// One MD5, by the `md-5` crate (on CPUs without AVX2).
fn md5_one(m: &[u8]) -> u128 {
    use md5::{Digest, Md5};
    u128::from_be_bytes(Md5::digest(m).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(m: &[u8]) -> u128 {
        md5_one(m)
    }

    #[test]
    fn every_length_across_block_edges() {
        // Lengths 0..200 cover one, two, three and four blocks and every padding edge (55, 56,
        // 63, 64, 119, 120, ...), in batches that mix them.
        let data: Vec<u8> = (0..200u32).map(|i| (i * 31 + 7) as u8).collect();
        let msgs: Vec<&[u8]> = (0..200).map(|n| &data[..n]).collect();
        let got = md5_many(&msgs);
        for (m, d) in msgs.iter().zip(&got) {
            assert_eq!(*d, reference(m), "length {}", m.len());
        }
        assert_eq!(md5_many(&[]), Vec::<u128>::new());
        // RFC 1321 appendix A.5.
        assert_eq!(
            md5_many(&[b"abc"])[0],
            0x900150983cd24fb0d6963f7d28e17f72u128
        );
    }

    proptest! {
        #[test]
        fn equals_md5_of_each_message(msgs in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..300), 0..40)) {
            let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
            let got = md5_many(&refs);
            for (m, d) in refs.iter().zip(got) {
                prop_assert_eq!(d, reference(m));
            }
        }
    }
}
