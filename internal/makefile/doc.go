// Package makefile holds the tests of the repository's Makefile targets
// whose logic is shell: they run make with a stand-in for the go command.
package makefile
