// Package model is the scripted model server of the host lanes: a real HTTP
// server on 127.0.0.1 that speaks the three model APIs the MCP hosts call,
// so that a host's own CLI can run one-shot against it with no login and no
// internet (docs/host-matrix.md#1).
//
// It speaks, each with streaming server-sent events:
//
//   - the Anthropic Messages API (POST …/v1/messages, Claude Code), also
//     without streaming, and …/v1/messages/count_tokens;
//   - the OpenAI Responses API (POST …/responses, Codex);
//   - the Gemini API (POST …/models/M:streamGenerateContent?alt=sse, and
//     …:generateContent, whose JSON answer follows the request's response
//     schema, as the Gemini CLI's model router wants).
//
// A [Script] says which tool calls the model makes, one a turn, and the text
// it ends with; with Script.Resumes, a running answer of the safe build in
// the last tool result makes the model call it again with the buildId it
// read there ([RunningBuildID]), as a model follows the answer's next step. The server keeps no conversation state: a request's turn is
// the number of tool results its conversation already holds, so a host's
// side requests (titles, routing, token counts) never move the script on. A
// request that offers no tools gets the final text.
//
// Every request body is recorded ([Server.Requests]), and [ToolResults]
// reads from a recorded request what the host handed the model back for
// each tool call, in each wire shape. That is the evidence of the host
// matrix: what each host's model received.
//
// It is a test harness: product code never imports it.
package model
