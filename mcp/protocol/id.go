package protocol

import (
	"encoding/json"
	"math/big"
	"strings"
)

// ID is a request id as the client wrote it. Raw is echoed verbatim;
// Key compares ids by value (numbers by numeric value, so 1 and 1.0 match; a
// string never matches a number).
type ID struct {
	Raw json.RawMessage
	Key string
}

// ParseID checks a raw JSON id (docs/mcp-server.md#2.2): a string, or a number
// whose value is an integer. ok is false for anything else, including null.
func ParseID(raw json.RawMessage) (ID, bool) {
	if len(raw) == 0 {
		return ID{}, false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return ID{}, false
		}
		return ID{Raw: raw, Key: "s:" + s}, true
	case c == '-' || (c >= '0' && c <= '9'):
		key, ok := integralNumberKey(string(raw))
		if !ok {
			return ID{}, false
		}
		return ID{Raw: raw, Key: "n:" + key}, true
	}
	return ID{}, false
}

// integralNumberKey returns a canonical form of the JSON number literal lit
// when its value is an integer ("after removing trailing zeros the scale is ≤
// 0"). It works on the digits, so huge exponents cost nothing.
func integralNumberKey(lit string) (string, bool) {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, exp, _ := strings.Cut(strings.ToLower(lit), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return "0", true
	}
	// value = digits × 10^(e − len(frac))
	e := new(big.Int)
	if exp != "" {
		if _, ok := e.SetString(strings.TrimPrefix(exp, "+"), 10); !ok {
			return "", false
		}
	}
	e.Sub(e, big.NewInt(int64(len(frac))))
	trimmed := strings.TrimRight(digits, "0")
	e.Add(e, big.NewInt(int64(len(digits)-len(trimmed))))
	if e.Sign() < 0 {
		return "", false
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + e.String(), true
}
