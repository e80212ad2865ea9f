module github.com/buildguard/buildguard

go 1.26.0

tool github.com/magefile/mage

require github.com/magefile/mage v1.17.2

require (
	github.com/google/go-cmp v0.7.0
	github.com/rogpeppe/go-internal v1.16.0
)

require (
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
