//! Running one response's calls: consecutive read-only calls together, every other call
//! alone and in order.

use futures_util::future::{Either, join_all, ready};

use super::ToolCall;
use crate::dialect::Dialect;
use crate::error::ErrorKind;
use crate::resolve::RESOLVE_TOOL_NAME;
use crate::result::AgentToolResult;
use crate::session::{CallOptions, Session};

impl Session {
    /// Runs `calls` and returns their results in the same order.
    ///
    /// A run of consecutive calls that may overlap (`may_overlap`) is polled
    /// concurrently (`join_all`, on the caller's task: a tool that computes for long should
    /// do it in `spawn_blocking`, as the built-in tools do); any other call runs alone, after
    /// the calls before it and before the calls after it. So a read never moves across a
    /// write, and previews push in the model's order.
    pub(crate) async fn run_calls(
        &self,
        dialect: Dialect,
        calls: &[ToolCall],
    ) -> Vec<AgentToolResult> {
        let mut results = Vec::with_capacity(calls.len());
        let mut start = 0;
        while start < calls.len() {
            let end = if self.may_overlap(&calls[start]) {
                start
                    + calls[start..]
                        .iter()
                        .take_while(|call| self.may_overlap(call))
                        .count()
            } else {
                start + 1
            };
            if end - start == 1 {
                results.push(self.answer(dialect, &calls[start]).await);
            } else {
                results.extend(
                    join_all(calls[start..end].iter().map(|c| self.answer(dialect, c))).await,
                );
            }
            start = end;
        }
        results
    }

    /// Whether a call may run alongside its neighbours: its tool says it is read-only and
    /// does not push pending actions, and its arguments were readable.
    fn may_overlap(&self, call: &ToolCall) -> bool {
        call.arguments.is_ok()
            && call.name != RESOLVE_TOOL_NAME
            && self.registry().get(&call.name).is_some_and(|tool| {
                tool.annotations().read_only == Some(true) && !tool.pushes_pending_actions()
            })
    }

    fn answer<'a>(
        &'a self,
        dialect: Dialect,
        call: &'a ToolCall,
    ) -> impl Future<Output = AgentToolResult> + 'a {
        match &call.arguments {
            Ok(arguments) => Either::Left(self.call_with(
                &call.name,
                arguments.clone(),
                CallOptions {
                    call_id: call.id.clone(),
                    dialect: Some(dialect),
                    ..CallOptions::default()
                },
            )),
            Err(problem) => Either::Right(ready(AgentToolResult::failure(
                ErrorKind::InvalidArguments {
                    path: String::new(),
                },
                format!("Invalid arguments for `{}`: {problem}", call.name),
            ))),
        }
    }
}
