// Package mcptask is the MCP tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663) as docs/decisions.md#D17 uses it: a bounded in-memory store of
// tasks, the work each runs, and the go-sdk glue that serves tasks/get,
// tasks/update and tasks/cancel.
//
// A [Store] runs one piece of [Work] per task, on a context of its own that
// outlives the request that created the task, and records its end: a result
// ([StatusCompleted], also for a tool result with isError), a JSON-RPC error
// ([StatusFailed]) or a honoured cancellation ([StatusCancelled]). While it
// runs the work reports a status message ([Run.Report]) and may park the task
// in input_required until the client answers ([Run.Input]). Task ids carry
// 192 random bits. A finished task is kept for [Config.Keep] after it
// finished; the store holds at most [Config.MaxTasks] tasks, evicts the
// oldest finished ones first and never a running one. [Store.Close] cancels
// every running task and waits for its work to return.
//
// [Extension] is the go-sdk side: [Extension.Register] adds the three
// methods as custom methods of an sdkmcp.Server and [Extension.Middleware]
// refuses them (-32021) to a request that did not declare the extension in
// its _meta client capabilities, checks the Mcp-Name header of an HTTP
// request against its taskId (-32020), and answers unknown task ids with
// -32602. Which tools/call becomes a task is the server's choice: it calls
// [Declared] and [Store.Start] itself and returns the [CreateTaskResult].
//
// The package knows nothing of buildguard's tools, transports or agent; it
// imports go-sdk only.
package mcptask
