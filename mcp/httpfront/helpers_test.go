package httpfront_test

import "flag"

// testToken is the token the tests serve with.
const testToken = "test-token-0123456789abcdef"

var update = flag.Bool("update", false, "rewrite the expected responses of the testdata/http/*.txtar transcripts")
