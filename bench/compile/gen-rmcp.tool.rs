
    /// Tool {n}: formats a label, a count and an optional note.
    #[tool(name = "tool_{n}", annotations(read_only_hint = true))]
    async fn tool_{n}(&self, Parameters(args): Parameters<Tool{n}Args>) -> String {
        format!("{n}: {} x{} {:?}", args.label, args.count, args.note)
    }
