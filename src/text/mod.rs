//! Text: page bytes → main text → normalized text → sentences (SPEC §2.1, §2.2).

mod blocks;
mod decode;
mod extract;
mod flat;
mod html;
mod main_text;
mod normalize;
mod sentence;

pub use blocks::{block_digest, masked, MIN_LETTERS_WITH_DIGITS};
pub use decode::decode;
pub use extract::extract;
pub use flat::{extract_flat, nesting_depth, MAX_DEPTH};
pub use main_text::{BlockKind, MainText, Paragraph};
pub(crate) use normalize::width_without_spaces;
pub use normalize::{char_width, is_cjk, is_ideograph, normalize, width};
pub use sentence::{split as split_sentences, Sentence};
