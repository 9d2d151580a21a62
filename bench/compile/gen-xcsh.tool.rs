
/// Tool {n}: formats a label, a count and an optional note.
#[custom_tool(name = "tool_{n}", read_only)]
pub struct Tool{n} {
    /// The label to show.
    pub label: String,
    /// How many times.
    pub count: u32,
    /// An optional note.
    pub note: Option<String>,
}

impl Tool{n} {
    async fn execute(self, _ctx: &ToolContext) -> String {
        format!("{n}: {} x{} {:?}", self.label, self.count, self.note)
    }
}
