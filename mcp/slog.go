package mcp

import (
	"context"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// newSlogLogger gives the SDK (which logs through log/slog) the same hclog
// sink as the rest of buildguard.
func newSlogLogger(l hclog.Logger) *slog.Logger {
	return slog.New(&hclogHandler{log: l})
}

// hclogHandler is a slog.Handler writing to an hclog.Logger.
type hclogHandler struct {
	log   hclog.Logger
	attrs []any
	group string
}

func (h *hclogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.log.GetLevel() <= hclogLevel(l)
}

func (h *hclogHandler) Handle(_ context.Context, r slog.Record) error {
	args := append([]any{}, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, h.key(a.Key), a.Value.Resolve().Any())
		return true
	})
	h.log.Log(hclogLevel(r.Level), r.Message, args...)
	return nil
}

func (h *hclogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append([]any{}, h.attrs...)
	for _, a := range attrs {
		n.attrs = append(n.attrs, h.key(a.Key), a.Value.Resolve().Any())
	}
	return &n
}

func (h *hclogHandler) WithGroup(name string) slog.Handler {
	n := *h
	n.group = h.key(name)
	return &n
}

func (h *hclogHandler) key(k string) string {
	if h.group == "" {
		return k
	}
	return h.group + "." + k
}

func hclogLevel(l slog.Level) hclog.Level {
	switch {
	case l >= slog.LevelError:
		return hclog.Error
	case l >= slog.LevelWarn:
		return hclog.Warn
	case l >= slog.LevelInfo:
		return hclog.Info
	default:
		return hclog.Debug
	}
}
