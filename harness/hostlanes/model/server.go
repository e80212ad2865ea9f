package model

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Wire is one of the model APIs the server speaks.
type Wire string

// The wires, by the host that uses each.
const (
	// Anthropic is the Messages API (Claude Code).
	Anthropic Wire = "anthropic-messages"
	// OpenAI is the Responses API (Codex).
	OpenAI Wire = "openai-responses"
	// Gemini is the Gemini API's generateContent family (Gemini CLI).
	Gemini Wire = "gemini"
)

// Bounds of one exchange.
const (
	// DefaultMaxBody is Config.MaxBody's default: a host's first request
	// carries its whole system prompt and every tool's schema.
	DefaultMaxBody = 64 << 20
	// readTimeout bounds reading one request, headers and body.
	readTimeout = 60 * time.Second
	// writeTimeout bounds writing one answer.
	writeTimeout = 60 * time.Second
	// closeTimeout bounds Close's wait for exchanges under way.
	closeTimeout = 5 * time.Second
)

// Call is one tool call the scripted model makes.
type Call struct {
	// Name is the tool's name as the host presents it to the model, e.g.
	// mcp__buildguard__reclazz_safe_build (Claude Code).
	Name string `json:"name"`
	// Namespace is, on the OpenAI wire only, the namespace that holds Name
	// (Codex: mcp__buildguard); empty for none.
	Namespace string `json:"namespace,omitempty"`
	// Input is the call's arguments; nil sends {}.
	Input map[string]any `json:"input,omitempty"`
	// resume is the build ID of a resume call the script made.
	resume string
}

// Script is what the model does: Calls[k] on the turn whose conversation
// holds k tool results; then, while the last tool result is a running
// answer of a safe build (RunningBuildID) and at most Resumes times, the
// last of Calls again with {"resume": ID}; then Final as text.
type Script struct {
	Calls []Call `json:"calls"`
	// Resumes bounds the resume calls; 0 makes none.
	Resumes int `json:"resumes,omitempty"`
	// Final is the text of the last turn; empty sends "done".
	Final string `json:"final,omitempty"`
}

// Config configures a Server. Its zero value serves an empty script.
type Config struct {
	// Script is what the model does.
	Script Script
	// MaxBody bounds one request body after decompression; 0 means
	// DefaultMaxBody.
	MaxBody int64
}

// Request is one recorded request.
type Request struct {
	// Seq counts requests from 1 in the order they arrived.
	Seq int `json:"seq"`
	// Time is when the request arrived.
	Time time.Time `json:"time"`
	// Wire is the API the path named; empty for a path the server does not
	// serve.
	Wire Wire `json:"wire,omitempty"`
	// Method and Path are the request's; Path includes the query.
	Method string `json:"method"`
	Path   string `json:"path"`
	// Body is the request body, decompressed; not JSON when the host sent
	// something else (then Answer says so).
	Body json.RawMessage `json:"body,omitempty"`
	// Turn is the number of tool results the request's conversation holds.
	Turn int `json:"turn"`
	// Answer is what the server answered: "call NAME", "resume NAME" (the
	// call again with {"resume": ID}), "text", "schema", "count", or
	// "error: …".
	Answer string `json:"answer"`
	// Resume is the ID of a "resume NAME" answer.
	Resume string `json:"resume,omitempty"`
}

// Server is the scripted model on loopback.
type Server struct {
	cfg  Config
	ln   net.Listener
	http *http.Server
	done chan struct{}

	mu   sync.Mutex
	reqs []Request
	ids  int
}

// Start listens on 127.0.0.1:0 and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	s := &Server{cfg: cfg, ln: ln, done: make(chan struct{})}
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: readTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
	}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// URL is the server's base URL, http://127.0.0.1:PORT, without a path: each
// host appends its own (/v1/messages, /v1/responses, /v1beta/models/…).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Requests returns a copy of every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Close stops the server, waits up to 5 s for exchanges under way, then
// drops them. It is safe to call more than once.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = errors.Join(fmt.Errorf("closing the model server: %w", err), s.http.Close())
	}
	<-s.done // Serve returns as soon as Shutdown or Close has closed the listener.
	return err
}

// nextID returns a fresh number for message, call and response ids.
func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return s.ids
}

// record appends r, numbering it.
func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, r)
}

// route names the wire and the kind of answer of a request path.
func route(path string) (Wire, string) {
	switch {
	case strings.HasSuffix(path, "/messages/count_tokens"):
		return Anthropic, "count"
	case strings.HasSuffix(path, "/messages"):
		return Anthropic, "generate"
	case strings.HasSuffix(path, "/responses"):
		return OpenAI, "generate"
	case strings.HasSuffix(path, ":streamGenerateContent"):
		return Gemini, "generate"
	case strings.HasSuffix(path, ":generateContent"):
		return Gemini, "json"
	case strings.HasSuffix(path, ":countTokens"):
		return Gemini, "count"
	}
	return "", ""
}

// serve records the request and answers it in its wire's shape.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.RequestURI(), Time: time.Now().UTC()}
	defer func() { s.record(rec) }()
	wire, kind := route(r.URL.Path)
	rec.Wire = wire
	if wire == "" || r.Method != http.MethodPost {
		rec.Answer = "error: not served"
		http.Error(w, "the scripted model serves POST to its model API paths only", http.StatusNotFound)
		return
	}
	body, err := s.readBody(w, r)
	rec.Body = body
	if err != nil {
		rec.Answer = "error: " + err.Error()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !json.Valid(body) {
		rec.Answer = "error: the body is not JSON"
		http.Error(w, "the body is not JSON", http.StatusBadRequest)
		return
	}
	var a answer
	switch wire {
	case Anthropic:
		a, err = s.anthropic(body, kind)
	case OpenAI:
		a, err = s.openAI(body)
	case Gemini:
		a, err = s.gemini(body, kind, r.URL.Path)
	}
	rec.Turn = a.turn
	if err != nil {
		rec.Answer = "error: " + err.Error()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec.Answer, rec.Resume = a.what, a.resume
	w.Header().Set("Content-Type", a.contentType)
	_, _ = w.Write(a.body)
}

// readBody reads the body, gunzipping it when the host compressed it, up to
// MaxBody bytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (json.RawMessage, error) {
	var src io.Reader = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("reading gzip body: %w", err)
		}
		defer zr.Close()
		src = zr
	default:
		return nil, fmt.Errorf("content encoding %q is not served", enc)
	}
	body, err := io.ReadAll(io.LimitReader(src, s.cfg.MaxBody+1))
	if err != nil {
		return body, fmt.Errorf("reading body: %w", err)
	}
	if int64(len(body)) > s.cfg.MaxBody {
		return nil, fmt.Errorf("body over %d bytes", s.cfg.MaxBody)
	}
	return body, nil
}

// answer is a reply ready to write.
type answer struct {
	contentType string
	body        []byte
	// turn is the request's turn; what says what the reply is
	// (Request.Answer), resume the ID a resume call names.
	turn   int
	what   string
	resume string
}

// step is what the model does on a turn, given the tool results the
// conversation holds: a call, or the final text.
func (s *Server) step(results []ToolResult, toolsOffered bool) (Call, string, bool) {
	sc, turn := s.cfg.Script, len(results)
	if toolsOffered && turn < len(sc.Calls) {
		return sc.Calls[turn], "", true
	}
	if toolsOffered && len(sc.Calls) > 0 && turn-len(sc.Calls) < sc.Resumes {
		if id, ok := RunningBuildID(results[turn-1].Text); ok {
			c := sc.Calls[len(sc.Calls)-1]
			c.Input, c.resume = map[string]any{"resume": id}, id
			return c, "", true
		}
	}
	final := sc.Final
	if final == "" {
		final = "done"
	}
	return Call{}, final, false
}

// what is how Request.Answer names the call c.
func (c Call) what() string {
	if c.resume != "" {
		return "resume " + c.Name
	}
	return "call " + c.Name
}

// input is the call's arguments as a JSON object.
func (c Call) input() json.RawMessage {
	if c.Input == nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(c.Input)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// sse is one server-sent event.
type sse struct {
	event string // empty: a data-only event
	data  any
}

// sseBody writes events in the text/event-stream format.
func sseBody(events []sse) []byte {
	var b strings.Builder
	for _, e := range events {
		if e.event != "" {
			b.WriteString("event: " + e.event + "\n")
		}
		data, _ := json.Marshal(e.data)
		b.WriteString("data: ")
		b.Write(data)
		b.WriteString("\n\n")
	}
	return []byte(b.String())
}
