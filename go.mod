module github.com/buildguard/buildguard

go 1.26.0

tool github.com/magefile/mage

require github.com/magefile/mage v1.17.2

require github.com/google/go-cmp v0.7.0
