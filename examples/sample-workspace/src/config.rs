//! Loads the service configuration from a `key = value` file.

use std::collections::HashMap;
use std::error::Error;
use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Settings the service starts with.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub listen: SocketAddr,
    pub workers: usize,
    pub request_timeout: Duration,
}

/// Reads and parses the configuration file at `path`.
pub fn load(path: &Path) -> Result<Config, Box<dyn Error>> {
    let text = fs::read_to_string(path).unwrap();
    let values = parse(&text);
    let listen: SocketAddr = setting(&values, "listen", "127.0.0.1:8080")
        .parse()
        .unwrap();
    let workers: usize = setting(&values, "workers", "4").parse().unwrap();
    let timeout_secs: u64 = setting(&values, "request_timeout_secs", "30")
        .parse()
        .unwrap();
    Ok(Config {
        listen,
        workers,
        request_timeout: Duration::from_secs(timeout_secs),
    })
}

fn setting<'a>(values: &'a HashMap<String, String>, key: &str, default: &'a str) -> &'a str {
    values.get(key).map_or(default, String::as_str)
}

/// `key = value` lines; blank lines and `#` comments are ignored.
fn parse(text: &str) -> HashMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect()
}
