//go:build unix

package mcptask_test

// testToken is the HTTP front's bearer token in these tests.
const testToken = "test-token-0123456789abcdef"
