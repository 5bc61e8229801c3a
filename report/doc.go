// Package report renders the evidence of a finding as GitHub Markdown and
// delivers it: to GitHub through go-github, or to a directory of Markdown
// files. One finding is one issue: a re-detection comments on the issue
// that already exists.
package report
