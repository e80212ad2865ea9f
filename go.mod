module github.com/buildguard/buildguard

go 1.26.0

tool github.com/magefile/mage

require (
	github.com/google/go-cmp v0.7.0
	github.com/magefile/mage v1.17.2
	golang.org/x/sys v0.50.0
)
