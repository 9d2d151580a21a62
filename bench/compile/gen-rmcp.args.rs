
/// Tool {n}'s arguments.
#[derive(Deserialize, JsonSchema)]
pub struct Tool{n}Args {
    /// The label to show.
    pub label: String,
    /// How many times.
    pub count: u32,
    /// An optional note.
    pub note: Option<String>,
}
