package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ValidUTF8 decodes b as UTF-8 text the way the contract's reader does:
// every byte that is not part of a valid sequence reads as U+FFFD. So an id
// echoed verbatim never puts invalid UTF-8 on the output.
func ValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

// TrimJSONSpace trims the four JSON whitespace characters.
func TrimJSONSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// JSONString decodes raw when it is a JSON string.
func JSONString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func IsObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// MustMarshal encodes a map of raw JSON values, which cannot fail.
func MustMarshal(m map[string]json.RawMessage) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("encoding params: %v", err))
	}
	return b
}

// errorsWithData are the errors that keep their data; the 2026-07-28 schema
// requires it of both. -32022: a client picks a version from
// data.supported; -32021: data.requiredCapabilities names what to declare.
var errorsWithData = map[int64]bool{
	sdkmcp.CodeUnsupportedProtocolVersion:        true,
	sdkmcp.CodeMissingRequiredClientCapabilities: true,
}

// EncodeResponse renders resp with the request's id literal, keys in the
// order jsonrpc, id, result|error. An error never carries code 0, nor data
// unless it is one of errorsWithData.
func EncodeResponse(id json.RawMessage, resp *jsonrpc.Response) []byte {
	if resp.Error != nil {
		code, message := int64(jsonrpc.CodeInternalError), resp.Error.Error()
		var data json.RawMessage
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			message = we.Message
			if we.Code != 0 {
				code = we.Code
			}
			if errorsWithData[we.Code] && json.Valid(we.Data) {
				data = we.Data
			}
		}
		return encodeErrorData(id, code, message, data)
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idOrNull(id))
	b.WriteString(`,"result":`)
	if err := json.Compact(&b, resp.Result); err != nil || len(resp.Result) == 0 {
		return EncodeError(id, jsonrpc.CodeInternalError, MsgInternal)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func EncodeError(id json.RawMessage, code int64, message string) []byte {
	return encodeErrorData(id, code, message, nil)
}

// encodeErrorData is EncodeError with a data member when data is not empty
// (only -32022 and -32021 have one: errorsWithData).
func encodeErrorData(id json.RawMessage, code int64, message string, data json.RawMessage) []byte {
	if code == 0 {
		code = jsonrpc.CodeInternalError
	}
	msg, _ := json.Marshal(message)
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idOrNull(id))
	b.WriteString(`,"error":{"code":`)
	b.WriteString(strconv.FormatInt(code, 10))
	b.WriteString(`,"message":`)
	b.Write(msg)
	if len(data) > 0 {
		b.WriteString(`,"data":`)
		if err := json.Compact(&b, data); err != nil {
			b.WriteString("null")
		}
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

func idOrNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}
