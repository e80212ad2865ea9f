package buildguard

import (
	"fmt"

	"github.com/buildguard/buildguard/agentproto"
)

// NewOwner returns the owner token of a build: owner itself when it is given
// and valid, a fresh random UUID when owner is empty, and an error wrapping
// ErrInvalidOwner otherwise. The error text never contains the rejected value
// (it may be a mistyped secret).
func NewOwner(owner string) (string, error) {
	if owner == "" {
		return agentproto.NewToken(), nil
	}
	if err := CheckOwner(owner); err != nil {
		return "", err
	}
	return owner, nil
}

// CheckOwner returns nil when owner is a valid owner token, and an error
// wrapping ErrInvalidOwner otherwise; "" is invalid. The error text never
// contains the rejected value.
func CheckOwner(owner string) error {
	if !agentproto.ValidToken(owner) {
		return fmt.Errorf("%w: it must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'", ErrInvalidOwner)
	}
	return nil
}
