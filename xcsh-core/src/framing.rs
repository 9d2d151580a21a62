//! The framing of every xcsh state file (a durable pending stack, the apply journal, undo
//! records): a header line `<magic> <version> <xxh3-64 of the rest, hex>`, then a JSON body.
//! The checksum tells a whole file from a truncated or damaged one (it guards against
//! accidents, not an adversary who can write the file); the magic, a file of ours from a
//! foreign one. One framing, used by `xcsh-core` and `xcsh-tools` alike.
//!
//! ```
//! use xcsh_core::framing::Frame;
//! const NOTES: Frame = Frame { magic: "my-notes", version: 1, name: "notes file", other_version_hint: "" };
//! let bytes = NOTES.encode(&vec!["a", "b"]);
//! assert!(bytes.starts_with(b"my-notes 1 "));
//! assert_eq!(NOTES.decode::<Vec<String>>(&bytes).unwrap(), ["a", "b"]);
//! assert!(NOTES.decode::<Vec<String>>(&bytes[..bytes.len() - 1]).unwrap_err().contains("checksum"));
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;
use xxhash_rust::xxh3::xxh3_64;

/// One kind of state file.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// The first word of the header: what kind of file it is.
    pub magic: &'static str,
    /// The format version this xcsh writes and reads.
    pub version: u32,
    /// What it is called in messages: "apply journal".
    pub name: &'static str,
    /// Added to the message about a version this xcsh does not know.
    pub other_version_hint: &'static str,
}

impl Frame {
    /// The file's bytes: the header, then `value` as JSON.
    pub fn encode(&self, value: &impl Serialize) -> Vec<u8> {
        // Serialising plain data cannot fail.
        let body = serde_json::to_vec(value).unwrap_or_default();
        let mut out =
            format!("{} {} {:016x}\n", self.magic, self.version, xxh3_64(&body)).into_bytes();
        out.extend_from_slice(&body);
        out
    }

    /// The value, or why the file cannot be used (the caller names the file and what to do).
    pub fn decode<T: DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, String> {
        let magic = self.magic.as_bytes();
        let foreign = || format!("it is not an xcsh {}", self.name);
        let Some(nl) = bytes.iter().position(|&b| b == b'\n') else {
            let ours = bytes.starts_with(magic) || magic.starts_with(bytes);
            return Err(if ours {
                "it is truncated".to_owned()
            } else {
                foreign()
            });
        };
        let (head, body) = (&bytes[..nl], &bytes[nl + 1..]);
        let head = std::str::from_utf8(head).map_err(|_| foreign())?;
        let mut words = head.split(' ');
        if words.next() != Some(self.magic) {
            return Err(foreign());
        }
        match words.next() {
            Some(v) if v == self.version.to_string() => {}
            Some(v) => {
                return Err(format!(
                    "it has format version {v}, which this xcsh does not know (it knows {}){}",
                    self.version, self.other_version_hint
                ));
            }
            None => return Err("its header is incomplete".to_owned()),
        }
        let sum = words.next().ok_or("its header is incomplete")?;
        if u64::from_str_radix(sum, 16).ok() != Some(xxh3_64(body)) {
            return Err("it is truncated or corrupt (its checksum does not match)".to_owned());
        }
        serde_json::from_slice(body).map_err(|e| format!("it is corrupt ({e})"))
    }
}
